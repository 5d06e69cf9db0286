package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/storage"
)

// TestWatchCancellationStorm cancels many watches of the in-process client at once while
// events flow to them, as a replica losing leadership stops every controller's watches:
// a watch started afterwards still gets its events (on a shared etcd watch stream the
// cancellations deadlock the stream, etcd issues 18879 and 20716).
func TestWatchCancellationStorm(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir(), storage.WithUnsafeNoFsync())
	st := e.Store()
	defer st.Close()
	ctx := t.Context()
	put := func(k string) {
		t.Helper()
		if _, err := st.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: k, Value: []byte("v")}}}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 {
		// 1. Many watches, none reading, while writes go on.
		wctx, cancel := context.WithCancel(ctx)
		for i := range 64 {
			_ = st.Watch(wctx, fmt.Sprintf("/storm/%d/", i%8), 0)
		}
		for i := range 200 {
			put(fmt.Sprintf("/storm/%d/k%d", i%8, i))
		}
		// 2. All cancelled at once.
		cancel()
		// 3. A new watch gets the next event.
		rev, err := st.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		nctx, ncancel := context.WithTimeout(ctx, time.Minute)
		ch := st.Watch(nctx, "/storm/", rev)
		put(fmt.Sprintf("/storm/after/%d", round))
		got := false
		for r := range ch {
			if r.Err != nil {
				t.Fatalf("round %d: %v", round, r.Err)
			}
			if len(r.Events) > 0 {
				got = true
				break
			}
		}
		ncancel()
		if !got {
			t.Fatalf("round %d: a watch started after the cancellations got no event within a minute", round)
		}
	}
}
