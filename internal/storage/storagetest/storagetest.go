package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/storage"
)

// waitTimeout bounds every wait of the suite. It is a failure guard, not a timing assertion.
const waitTimeout = 30 * time.Second

// Compactor is implemented by stores that can discard history. The compaction cases use
// it and are skipped for stores without it.
type Compactor interface {
	// Compact discards the history before rev.
	Compact(ctx context.Context, rev int64) error
}

// Run runs the conformance suite against stores made by newStore, which may return the same
// backing store every time (each run and subtest uses its own key prefix) but must not let
// anything else write to it while the suite runs (the suite checks that failed
// transactions leave the revision unchanged). The store is not closed by the suite:
// newStore registers its cleanup with t.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	root := fmt.Sprintf("/storagetest/%016x/", rand.Uint64())
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.Store, p string)
	}{
		{"Get", testGet},
		{"List", testList},
		{"ListPagination", testListPagination},
		{"ListAtRevision", testListAtRevision},
		{"Watch", testWatch},
		{"WatchCancel", testWatchCancel},
		{"WatchCompacted", testWatchCompacted},
		{"WatchProgress", testWatchProgress},
		{"TxnKeyCompares", testTxnKeyCompares},
		{"TxnRangeGuard", testTxnRangeGuard},
		{"TxnDelete", testTxnDelete},
		{"TxnValueCompare", testTxnValueCompare},
		{"TxnConflictWritesNothing", testTxnConflictWritesNothing},
		{"TxnTooLarge", testTxnTooLarge},
		{"TxnsIndependent", testTxnsIndependent},
		{"TxnsTooLarge", testTxnsTooLarge},
		{"RevisionMonotonic", testRevisionMonotonic},
		{"ConcurrentGuardedIncrements", testConcurrentIncrements},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newStore(t), root+c.name+"/")
		})
	}
}

func testGet(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	k := p + "k"
	if _, err := s.Get(ctx, k); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of a missing key: err = %v, want ErrNotFound", err)
	}
	created := put(t, s, k, "v1")
	updated := put(t, s, k, "v2")
	deleted := del(t, s, k)
	if _, err := s.Get(ctx, k); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of a deleted key: err = %v, want ErrNotFound", err)
	}
	recreated := put(t, s, k, "v3")
	if !(created < updated && updated < deleted && deleted < recreated) {
		t.Fatalf("txn revisions not increasing: %d %d %d %d", created, updated, deleted, recreated)
	}
	got := mustGet(t, s, k)
	want := storage.KV{Key: k, Value: []byte("v3"), ModRevision: recreated, CreateRevision: recreated}
	if d := diffKV(got, want); d != "" {
		t.Fatalf("Get after re-create: %s", d)
	}

	k2 := p + "k2"
	c2 := put(t, s, k2, "a")
	u2 := put(t, s, k2, "b")
	want = storage.KV{Key: k2, Value: []byte("b"), ModRevision: u2, CreateRevision: c2}
	if d := diffKV(mustGet(t, s, k2), want); d != "" {
		t.Fatalf("Get after update: %s", d)
	}
}

func testList(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	// Neighbours that a prefix match must exclude.
	put(t, s, strings.TrimSuffix(p, "/"), "no-slash")
	put(t, s, strings.TrimSuffix(p, "/")+"0/x", "sibling")
	revs := map[string]int64{}
	for _, k := range []string{"c", "a", "b/x", "b"} {
		revs[k] = put(t, s, p+k, "val-"+k)
	}
	last := revs["b"]

	tests := []struct {
		name     string
		opts     storage.ListOptions
		keys     []string
		keysOnly bool
		more     bool
		remain   int64
	}{
		{name: "all", keys: []string{"a", "b", "b/x", "c"}},
		{name: "keys only", opts: storage.ListOptions{KeysOnly: true}, keys: []string{"a", "b", "b/x", "c"}, keysOnly: true},
		{name: "limit above count", opts: storage.ListOptions{Limit: 10}, keys: []string{"a", "b", "b/x", "c"}},
		{name: "limit equal to count", opts: storage.ListOptions{Limit: 4}, keys: []string{"a", "b", "b/x", "c"}},
		{name: "limit below count", opts: storage.ListOptions{Limit: 3}, keys: []string{"a", "b", "b/x"}, more: true, remain: 1},
		{name: "start key", opts: storage.ListOptions{StartKey: p + "b/"}, keys: []string{"b/x", "c"}},
		{name: "start key and limit", opts: storage.ListOptions{StartKey: p + "b", Limit: 1}, keys: []string{"b"}, more: true, remain: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.List(ctx, p, tc.opts)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if res.Revision < last {
				t.Errorf("Revision = %d, want >= %d (the last write)", res.Revision, last)
			}
			if res.More != tc.more || res.Remaining != tc.remain {
				t.Errorf("More, Remaining = %v, %d, want %v, %d", res.More, res.Remaining, tc.more, tc.remain)
			}
			var got []string
			for _, kv := range res.KVs {
				got = append(got, strings.TrimPrefix(kv.Key, p))
				want := storage.KV{Key: kv.Key, Value: []byte("val-" + strings.TrimPrefix(kv.Key, p)), ModRevision: revs[strings.TrimPrefix(kv.Key, p)], CreateRevision: revs[strings.TrimPrefix(kv.Key, p)]}
				if tc.keysOnly {
					want.Value = nil
				}
				if d := diffKV(kv, want); d != "" {
					t.Errorf("%s", d)
				}
			}
			if !slices.Equal(got, tc.keys) {
				t.Errorf("keys = %q, want %q", got, tc.keys)
			}
		})
	}

	t.Run("start key outside prefix", func(t *testing.T) {
		if _, err := s.List(ctx, p, storage.ListOptions{StartKey: "/elsewhere"}); err == nil {
			t.Fatal("List with a start key outside the prefix succeeded, want an error")
		}
	})
	t.Run("empty prefix range", func(t *testing.T) {
		res, err := s.List(ctx, p+"none/", storage.ListOptions{})
		if err != nil || len(res.KVs) != 0 || res.More {
			t.Fatalf("List of an empty range = %+v, %v; want no keys", res, err)
		}
	})
}

// testListPagination pages through a list at its first page's revision, counting the
// rest of the range and, with NoCount, without (Remaining then 0 where the store reads
// pages uncounted).
func testListPagination(t *testing.T, s storage.Store, p string) {
	for _, noCount := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoCount=%v", noCount), func(t *testing.T) {
			listPagination(t, s, fmt.Sprintf("%s%v/", p, noCount), noCount)
		})
	}
}

func listPagination(t *testing.T, s storage.Store, p string, noCount bool) {
	ctx := t.Context()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		put(t, s, p+k, k)
	}
	first, err := s.List(ctx, p, storage.ListOptions{Limit: 2})
	if err != nil {
		t.Fatalf("List page 1: %v", err)
	}
	// Changes after the first page must not show in the next pages read at its revision.
	put(t, s, p+"bb", "bb")
	del(t, s, p+"d")
	put(t, s, p+"e", "e2")

	pages := []storage.ListResult{first}
	for pages[len(pages)-1].More {
		if len(pages) > 5 {
			t.Fatalf("pagination does not end: %d pages", len(pages))
		}
		prev := pages[len(pages)-1]
		next, err := s.List(ctx, p, storage.ListOptions{
			Revision: first.Revision,
			Limit:    2,
			StartKey: prev.KVs[len(prev.KVs)-1].Key + "\x00",
			NoCount:  noCount,
		})
		if err != nil {
			t.Fatalf("List page %d: %v", len(pages)+1, err)
		}
		pages = append(pages, next)
	}
	want := []struct {
		keys   string
		more   bool
		remain int64
	}{
		{"a=a b=b", true, 3},
		{"c=c d=d", true, 1},
		{"e=e", false, 0},
	}
	if len(pages) != len(want) {
		t.Fatalf("got %d pages, want %d", len(pages), len(want))
	}
	uncounted := noCount && storage.ReadsUncountedPages(s)
	for i, page := range pages {
		if uncounted && i > 0 {
			want[i].remain = 0
		}
		var got []string
		for _, kv := range page.KVs {
			got = append(got, strings.TrimPrefix(kv.Key, p)+"="+string(kv.Value))
		}
		if strings.Join(got, " ") != want[i].keys || page.More != want[i].more || page.Remaining != want[i].remain {
			t.Errorf("page %d = %q more=%v remaining=%d, want %q more=%v remaining=%d",
				i+1, got, page.More, page.Remaining, want[i].keys, want[i].more, want[i].remain)
		}
		if page.Revision != first.Revision {
			t.Errorf("page %d Revision = %d, want %d", i+1, page.Revision, first.Revision)
		}
	}
}

func testListAtRevision(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	r1 := put(t, s, p+"a", "1")
	r2 := put(t, s, p+"a", "2")
	r3 := put(t, s, p+"b", "1")
	r4 := del(t, s, p+"a")
	tests := []struct {
		rev  int64
		want string
	}{
		{r1, "a=1"},
		{r2, "a=2"},
		{r3, "a=2 b=1"},
		{r4, "b=1"},
		{0, "b=1"},
	}
	for _, tc := range tests {
		res, err := s.List(ctx, p, storage.ListOptions{Revision: tc.rev})
		if err != nil {
			t.Fatalf("List at %d: %v", tc.rev, err)
		}
		if got := render(res.KVs, p); got != tc.want {
			t.Errorf("List at %d = %q, want %q", tc.rev, got, tc.want)
		}
		if tc.rev != 0 && res.Revision != tc.rev {
			t.Errorf("List at %d: Revision = %d", tc.rev, res.Revision)
		}
		if tc.rev == 0 && res.Revision < r4 {
			t.Errorf("List at latest: Revision = %d, want >= %d", res.Revision, r4)
		}
	}
	cur := revision(t, s)
	if _, err := s.List(ctx, p, storage.ListOptions{Revision: cur + 1000}); !errors.Is(err, storage.ErrFutureRevision) {
		t.Errorf("List at a future revision: err = %v, want ErrFutureRevision", err)
	}
}

func testWatch(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	sibling := strings.TrimSuffix(p, "/") + "0/"
	rz := put(t, s, p+"z", "z0")
	r0 := revision(t, s)
	live := s.Watch(ctx, p, r0)

	r1 := commit(t, s, storage.Txn{Ops: []storage.Op{
		{Type: storage.OpPut, Key: p + "a", Value: []byte("a1")},
		{Type: storage.OpPut, Key: p + "b", Value: []byte("b1")},
		{Type: storage.OpDelete, Key: p + "z"},
		{Type: storage.OpPut, Key: sibling + "x", Value: []byte("not watched")},
	}})
	put(t, s, sibling+"y", "not watched")
	r2 := put(t, s, p+"a", "a2")
	r3 := del(t, s, p+"b")

	batch1 := []string{
		fmt.Sprintf("PUT %sa=a1 mod=%d create=%d prev=none", p, r1, r1),
		fmt.Sprintf("PUT %sb=b1 mod=%d create=%d prev=none", p, r1, r1),
		fmt.Sprintf("DELETE %sz= mod=%d create=0 prev=z0@%d", p, r1, rz),
	}
	want := []wantBatch{
		{r1, batch1},
		{r2, []string{fmt.Sprintf("PUT %sa=a2 mod=%d create=%d prev=a1@%d", p, r2, r1, r1)}},
		{r3, []string{fmt.Sprintf("DELETE %sb= mod=%d create=0 prev=b1@%d", p, r3, r1)}},
	}
	t.Run("live", func(t *testing.T) { expectBatches(t, live, want) })
	t.Run("replay from history", func(t *testing.T) { expectBatches(t, s.Watch(ctx, p, r0), want) })
	t.Run("strictly after fromRev", func(t *testing.T) { expectBatches(t, s.Watch(ctx, p, r1), want[1:]) })
	// Without previous values: the same events, with none.
	var bare []wantBatch
	for _, w := range want {
		evs := make([]string, len(w.events))
		for i, e := range w.events {
			evs[i] = e[:strings.LastIndex(e, " prev=")] + " prev=none"
		}
		bare = append(bare, wantBatch{w.rev, evs})
	}
	t.Run("without previous values", func(t *testing.T) { expectBatches(t, s.WatchWithoutPrev(ctx, p, r0), bare) })
}

type wantBatch struct {
	rev    int64
	events []string
}

// expectBatches receives len(want) event batches (skipping progress notifications) and
// compares them with want.
func expectBatches(t *testing.T, ch <-chan storage.WatchResult, want []wantBatch) {
	t.Helper()
	for i, w := range want {
		res := nextEvents(t, ch)
		if res.Revision != w.rev {
			t.Errorf("batch %d: Revision = %d, want %d", i+1, res.Revision, w.rev)
		}
		if got := renderEvents(res.Events); !slices.Equal(got, w.events) {
			t.Errorf("batch %d events:\n got %q\nwant %q", i+1, got, w.events)
		}
	}
}

// testWatchProgress: a store that is a ProgressWatcher answers a progress request with a
// notification at least at the revision the store had when asked, though the watched
// prefix had no change; events after it still come.
func testWatchProgress(t *testing.T, s storage.Store, p string) {
	pw, ok := s.(storage.ProgressWatcher)
	if !ok {
		t.Skip("not a ProgressWatcher")
	}
	sibling := strings.TrimSuffix(p, "/") + "0/"
	ch, progress := pw.WatchProgressing(t.Context(), p, revision(t, s), false)
	r := put(t, s, sibling+"x", "not watched")
	if err := progress(); err != nil {
		t.Fatalf("progress request: %v", err)
	}
	timeout := time.After(waitTimeout)
	for got := false; !got; {
		select {
		case res, ok := <-ch:
			switch {
			case !ok:
				t.Fatal("watch channel closed, want a progress notification")
			case res.Err != nil:
				t.Fatalf("watch error: %v", res.Err)
			case len(res.Events) > 0:
				t.Fatalf("events %q under an unchanged prefix", renderEvents(res.Events))
			case res.Revision >= r:
				got = true
			}
		case <-timeout:
			t.Fatal("no progress notification")
		}
	}
	r2 := put(t, s, p+"a", "a1")
	expectBatches(t, ch, []wantBatch{{r2, []string{fmt.Sprintf("PUT %sa=a1 mod=%d create=%d prev=none", p, r2, r2)}}})
}

func testWatchCancel(t *testing.T, s storage.Store, p string) {
	ctx, cancel := context.WithCancel(t.Context())
	r := put(t, s, p+"a", "1")
	ch := s.Watch(ctx, p, r-1)
	if res := nextEvents(t, ch); res.Revision != r {
		t.Fatalf("first batch at %d, want %d", res.Revision, r)
	}
	cancel()
	timeout := time.After(waitTimeout)
	for {
		select {
		case res, ok := <-ch:
			if !ok {
				return
			}
			if res.Err != nil {
				t.Fatalf("watch delivered %v after its context was cancelled, want a plain close", res.Err)
			}
		case <-timeout:
			t.Fatal("watch channel not closed after its context was cancelled")
		}
	}
}

func testWatchCompacted(t *testing.T, s storage.Store, p string) {
	c, ok := s.(Compactor)
	if !ok {
		t.Skip("store does not implement Compactor")
	}
	ctx := t.Context()
	r0 := put(t, s, p+"a", "1")
	r1 := put(t, s, p+"a", "2")
	r2 := put(t, s, p+"a", "3")
	if err := c.Compact(ctx, r2); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	for _, noCount := range []bool{false, true} {
		if _, err := s.List(ctx, p, storage.ListOptions{Revision: r1, NoCount: noCount}); !errors.Is(err, storage.ErrCompacted) {
			t.Errorf("List (NoCount=%v) at a compacted revision: err = %v, want ErrCompacted", noCount, err)
		}
		if _, err := s.List(ctx, p, storage.ListOptions{Revision: r2 + 1000, Limit: 1, NoCount: noCount}); !errors.Is(err, storage.ErrFutureRevision) {
			t.Errorf("List (NoCount=%v) at a future revision: err = %v, want ErrFutureRevision", noCount, err)
		}
	}

	ch := s.Watch(ctx, p, r0)
	select {
	case res, ok := <-ch:
		if !ok || !errors.Is(res.Err, storage.ErrCompacted) || len(res.Events) != 0 {
			t.Fatalf("watch from a compacted revision delivered %+v (open=%v), want Err ErrCompacted", res, ok)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no result from a watch at a compacted revision")
	}
	expectClosed(t, ch)

	// At the compaction revision the watch works.
	ch = s.Watch(ctx, p, r2)
	r3 := put(t, s, p+"a", "4")
	if res := nextEvents(t, ch); res.Revision != r3 {
		t.Fatalf("watch from the compaction revision: batch at %d, want %d", res.Revision, r3)
	}
}

func testTxnKeyCompares(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	tests := []struct {
		name string
		// exists: the key is present before the txn (written by the test).
		exists bool
		// deleted: the key was written, then deleted.
		deleted bool
		// rev picks the compared revision from the key's last write revision (0 when never written).
		rev  func(last int64) int64
		want error
	}{
		{name: "create if absent: absent", rev: func(int64) int64 { return 0 }},
		{name: "create if absent: present", exists: true, rev: func(int64) int64 { return 0 }, want: storage.ErrConflict},
		{name: "create if absent: deleted", deleted: true, rev: func(int64) int64 { return 0 }},
		{name: "update if unchanged: unchanged", exists: true, rev: func(last int64) int64 { return last }},
		{name: "update if unchanged: changed", exists: true, rev: func(last int64) int64 { return last - 1 }, want: storage.ErrConflict},
		{name: "update if unchanged: newer than the key", exists: true, rev: func(last int64) int64 { return last + 1 }, want: storage.ErrConflict},
		{name: "update if unchanged: deleted", deleted: true, rev: func(last int64) int64 { return last }, want: storage.ErrConflict},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := fmt.Sprintf("%s%d", p, i)
			var last int64
			if tc.exists || tc.deleted {
				put(t, s, k, "old") // an earlier version, so last-1 is a real stale revision
				last = put(t, s, k, "current")
			}
			if tc.deleted {
				last = del(t, s, k)
			}
			res, err := s.Txn(ctx, storage.Txn{
				Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: k, Revision: tc.rev(last)}},
				Ops:      []storage.Op{{Type: storage.OpPut, Key: k, Value: []byte("new")}},
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Txn err = %v, want %v", err, tc.want)
			}
			kv, gerr := s.Get(ctx, k)
			switch {
			case tc.want == nil:
				if gerr != nil || string(kv.Value) != "new" || kv.ModRevision != res.Revision {
					t.Fatalf("after commit Get = %+v, %v; want new@%d", kv, gerr, res.Revision)
				}
			case tc.deleted:
				if !errors.Is(gerr, storage.ErrNotFound) {
					t.Fatalf("after conflict Get = %+v, %v; want ErrNotFound", kv, gerr)
				}
			default:
				if gerr != nil || string(kv.Value) != "current" || kv.ModRevision != last {
					t.Fatalf("after conflict Get = %+v, %v; want current@%d", kv, gerr, last)
				}
			}
		})
	}
}

func testTxnRangeGuard(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	tests := []struct {
		name string
		// change runs after the guarded read, on the guarded prefix g.
		change func(t *testing.T, g string)
		want   error
	}{
		{name: "unchanged", change: func(*testing.T, string) {}},
		{name: "key created under the prefix", change: func(t *testing.T, g string) { put(t, s, g+"new", "x") }, want: storage.ErrConflict},
		{name: "key updated under the prefix", change: func(t *testing.T, g string) { put(t, s, g+"a", "a2") }, want: storage.ErrConflict},
		{name: "nested key created under the prefix", change: func(t *testing.T, g string) { put(t, s, g+"a/b", "x") }, want: storage.ErrConflict},
		{name: "key written outside the prefix", change: func(t *testing.T, g string) {
			put(t, s, strings.TrimSuffix(g, "/")+"0/a", "x")
			put(t, s, strings.TrimSuffix(g, "/"), "x")
		}},
		// Documented limit of the compare: deletions leave no key to compare.
		{name: "key deleted under the prefix", change: func(t *testing.T, g string) { del(t, s, g+"b") }},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := fmt.Sprintf("%s%d/guarded/", p, i)
			out := fmt.Sprintf("%s%d/out", p, i)
			put(t, s, g+"a", "a1")
			put(t, s, g+"b", "b1")
			read, err := s.List(ctx, g, storage.ListOptions{})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			tc.change(t, g)
			res, err := s.Txn(ctx, storage.Txn{
				Compares: []storage.Compare{{Target: storage.RangeNotModifiedAfter, Key: g, Revision: read.Revision}},
				Ops:      []storage.Op{{Type: storage.OpPut, Key: out, Value: []byte("derived")}},
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Txn err = %v, want %v", err, tc.want)
			}
			kv, gerr := s.Get(ctx, out)
			if tc.want == nil && (gerr != nil || kv.ModRevision != res.Revision) {
				t.Fatalf("after commit Get = %+v, %v", kv, gerr)
			}
			if tc.want != nil && !errors.Is(gerr, storage.ErrNotFound) {
				t.Fatalf("after conflict Get = %+v, %v; want ErrNotFound", kv, gerr)
			}
		})
	}
	t.Run("empty range at revision 0", func(t *testing.T) {
		_, err := s.Txn(ctx, storage.Txn{
			Compares: []storage.Compare{{Target: storage.RangeNotModifiedAfter, Key: p + "never/", Revision: 0}},
			Ops:      []storage.Op{{Type: storage.OpPut, Key: p + "never-out", Value: []byte("x")}},
		})
		if err != nil {
			t.Fatalf("guard on an empty range: %v", err)
		}
	})
}

func testTxnDelete(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	k := p + "k"
	put(t, s, k, "v1")
	last := put(t, s, k, "v2")
	guarded := func(rev int64) error {
		_, err := s.Txn(ctx, storage.Txn{
			Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: k, Revision: rev}},
			Ops:      []storage.Op{{Type: storage.OpDelete, Key: k}},
		})
		return err
	}
	if err := guarded(last - 1); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("delete with a stale revision: err = %v, want ErrConflict", err)
	}
	if kv := mustGet(t, s, k); string(kv.Value) != "v2" {
		t.Fatalf("key changed by a failed delete: %+v", kv)
	}
	if err := guarded(last); err != nil {
		t.Fatalf("delete with the current revision: %v", err)
	}
	if _, err := s.Get(ctx, k); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after delete: err = %v, want ErrNotFound", err)
	}
	if err := guarded(last); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("second delete with the old revision: err = %v, want ErrConflict", err)
	}
	// An unguarded delete of a missing key commits and changes nothing.
	if _, err := s.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpDelete, Key: k}}}); err != nil {
		t.Fatalf("unguarded delete of a missing key: %v", err)
	}
}

func testTxnValueCompare(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	k, other := p+"k", p+"other"
	put(t, s, k, "v1")
	write := func(expect string) error {
		_, err := s.Txn(ctx, storage.Txn{
			Compares: []storage.Compare{{Target: storage.ValueEquals, Key: k, Value: []byte(expect)}},
			Ops:      []storage.Op{{Type: storage.OpPut, Key: other, Value: []byte(expect)}},
		})
		return err
	}
	if err := write("v0"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("value compare with another value: err = %v, want ErrConflict", err)
	}
	if err := write("v1"); err != nil {
		t.Fatalf("value compare with the stored value: %v", err)
	}
	if kv := mustGet(t, s, other); string(kv.Value) != "v1" {
		t.Fatalf("guarded put wrote %q", kv.Value)
	}
	// A missing key fails a value compare, even against the empty value.
	if _, err := s.Txn(ctx, storage.Txn{
		Compares: []storage.Compare{{Target: storage.ValueEquals, Key: p + "missing", Value: nil}},
		Ops:      []storage.Op{{Type: storage.OpPut, Key: other, Value: []byte("x")}},
	}); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("value compare on a missing key: err = %v, want ErrConflict", err)
	}
}

func testTxnConflictWritesNothing(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	ra := put(t, s, p+"a", "a1")
	put(t, s, p+"d", "d1")
	rb := put(t, s, p+"b", "b1")
	before := revision(t, s)
	_, err := s.Txn(ctx, storage.Txn{
		Compares: []storage.Compare{
			{Target: storage.ModRevisionEquals, Key: p + "a", Revision: ra}, // holds
			{Target: storage.ModRevisionEquals, Key: p + "b", Revision: rb - 1},
		},
		Ops: []storage.Op{
			{Type: storage.OpPut, Key: p + "a", Value: []byte("a2")},
			{Type: storage.OpPut, Key: p + "c", Value: []byte("c1")},
			{Type: storage.OpDelete, Key: p + "d"},
		},
	})
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("Txn err = %v, want ErrConflict", err)
	}
	if after := revision(t, s); after != before {
		t.Errorf("revision moved from %d to %d on a failed txn", before, after)
	}
	res, err := s.List(ctx, p, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(res.KVs, p); got != "a=a1 b=b1 d=d1" {
		t.Errorf("after a failed txn the keys are %q, want %q", got, "a=a1 b=b1 d=d1")
	}
}

// testTxnsIndependent: transactions sharing a request commit or fail by their own compares,
// at one revision.
func testTxnsIndependent(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	ra := put(t, s, p+"a", "a1")
	put(t, s, p+"b", "b1")
	rd := put(t, s, p+"d", "d1")
	txns := []storage.Txn{
		{ // holds: a is at ra
			Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: p + "a", Revision: ra}},
			Ops:      []storage.Op{{Type: storage.OpPut, Key: p + "a", Value: []byte("a2")}, {Type: storage.OpPut, Key: p + "new", Value: []byte("n1")}},
		},
		{ // fails: b holds another value
			Compares: []storage.Compare{{Target: storage.ValueEquals, Key: p + "b", Value: []byte("b0")}},
			Ops:      []storage.Op{{Type: storage.OpPut, Key: p + "b", Value: []byte("b2")}},
		},
		{ // holds: c does not exist; d is deleted
			Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: p + "c"}, {Target: storage.ModRevisionEquals, Key: p + "d", Revision: rd}},
			Ops:      []storage.Op{{Type: storage.OpPut, Key: p + "c", Value: []byte("c1")}, {Type: storage.OpDelete, Key: p + "d"}},
		},
	}
	out, err := s.Txns(ctx, txns)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d outcomes for 3 transactions", len(out))
	}
	if out[0].Err != nil || out[2].Err != nil || !errors.Is(out[1].Err, storage.ErrConflict) {
		t.Fatalf("outcomes %v, %v, %v; want nil, ErrConflict, nil", out[0].Err, out[1].Err, out[2].Err)
	}
	if out[0].Revision != out[2].Revision || out[0].Revision <= rd {
		t.Fatalf("committed at revisions %d and %d, want one revision after %d", out[0].Revision, out[2].Revision, rd)
	}
	res, err := s.List(ctx, p, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(res.KVs, p); got != "a=a2 b=b1 c=c1 new=n1" {
		t.Errorf("after the transactions the keys are %q, want %q", got, "a=a2 b=b1 c=c1 new=n1")
	}
	if kv := mustGet(t, s, p+"c"); kv.ModRevision != out[0].Revision {
		t.Errorf("c written at %d, want %d", kv.ModRevision, out[0].Revision)
	}
}

// testTxnsTooLarge: transactions too big together are refused whole.
func testTxnsTooLarge(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	txns := make([]storage.Txn, 3)
	for i := range txns {
		txns[i].Ops = []storage.Op{{Type: storage.OpPut, Key: fmt.Sprintf("%s%d", p, i), Value: bytes.Repeat([]byte("x"), 600<<10)}}
	}
	if _, err := s.Txns(ctx, txns); !errors.Is(err, storage.ErrTooLarge) {
		t.Fatalf("Txns of 1.8 MiB: err = %v, want ErrTooLarge", err)
	}
	res, err := s.List(ctx, p, storage.ListOptions{KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.KVs) != 0 {
		t.Fatalf("%d keys written by refused transactions", len(res.KVs))
	}
}

func testTxnTooLarge(t *testing.T, s storage.Store, p string) {
	ctx := t.Context()
	puts := func(g string, n, size int) []storage.Op {
		ops := make([]storage.Op, n)
		for i := range ops {
			ops[i] = storage.Op{Type: storage.OpPut, Key: fmt.Sprintf("%s%04d", g, i), Value: bytes.Repeat([]byte("x"), size)}
		}
		return ops
	}
	compares := func(g string, n int) []storage.Compare {
		cs := make([]storage.Compare, n)
		for i := range cs {
			cs[i] = storage.Compare{Target: storage.ModRevisionEquals, Key: fmt.Sprintf("%sc%04d", g, i)}
		}
		return cs
	}
	tests := []struct {
		name     string
		txn      func(g string) storage.Txn
		want     error
		wantKeys int
	}{
		{"128 ops", func(g string) storage.Txn { return storage.Txn{Ops: puts(g, 128, 8)} }, nil, 128},
		{"129 ops", func(g string) storage.Txn { return storage.Txn{Ops: puts(g, 129, 8)} }, storage.ErrTooLarge, 0},
		{"129 compares", func(g string) storage.Txn {
			return storage.Txn{Compares: compares(g, 129), Ops: puts(g, 1, 8)}
		}, storage.ErrTooLarge, 0},
		{"1.6 MiB value", func(g string) storage.Txn { return storage.Txn{Ops: puts(g, 1, 1600<<10)} }, storage.ErrTooLarge, 0},
		{"3 MiB value", func(g string) storage.Txn { return storage.Txn{Ops: puts(g, 1, 3<<20)} }, storage.ErrTooLarge, 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := fmt.Sprintf("%s%d/", p, i)
			_, err := s.Txn(ctx, tc.txn(g))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Txn err = %v, want %v", err, tc.want)
			}
			res, err := s.List(ctx, g, storage.ListOptions{KeysOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.KVs) != tc.wantKeys {
				t.Fatalf("%d keys written, want %d", len(res.KVs), tc.wantKeys)
			}
		})
	}
}

func testRevisionMonotonic(t *testing.T, s storage.Store, p string) {
	prev := revision(t, s)
	for i := range 5 {
		committed := put(t, s, p+"k", strconv.Itoa(i))
		cur := revision(t, s)
		if committed <= prev || cur < committed {
			t.Fatalf("step %d: revision before %d, txn committed at %d, revision after %d", i, prev, committed, cur)
		}
		prev = cur
	}
}

func testConcurrentIncrements(t *testing.T, s storage.Store, p string) {
	const workers = 16
	const maxAttempts = 1000
	ctx := t.Context()
	k := p + "counter"
	start := revision(t, s)
	watch := s.Watch(ctx, p, start)

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range maxAttempts {
				var cur int
				var rev int64
				kv, err := s.Get(ctx, k)
				switch {
				case errors.Is(err, storage.ErrNotFound):
				case err != nil:
					errs <- err
					return
				default:
					if cur, err = strconv.Atoi(string(kv.Value)); err != nil {
						errs <- err
						return
					}
					rev = kv.ModRevision
				}
				_, err = s.Txn(ctx, storage.Txn{
					Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: k, Revision: rev}},
					Ops:      []storage.Op{{Type: storage.OpPut, Key: k, Value: []byte(strconv.Itoa(cur + 1))}},
				})
				if err == nil {
					return
				}
				if !errors.Is(err, storage.ErrConflict) {
					errs <- err
					return
				}
			}
			errs <- fmt.Errorf("no success in %d attempts", maxAttempts)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if kv := mustGet(t, s, k); string(kv.Value) != strconv.Itoa(workers) {
		t.Fatalf("counter = %s, want %d", kv.Value, workers)
	}
	// The watch sees every increment once, in order.
	for i := 1; i <= workers; i++ {
		res := nextEvents(t, watch)
		if len(res.Events) != 1 || string(res.Events[0].KV.Value) != strconv.Itoa(i) {
			t.Fatalf("watch batch %d = %q, want one put of %d", i, renderEvents(res.Events), i)
		}
	}
}

// put writes key unconditionally and returns the commit revision.
func put(t *testing.T, s storage.Store, key, value string) int64 {
	t.Helper()
	return commit(t, s, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: key, Value: []byte(value)}}})
}

// del deletes key unconditionally and returns the commit revision.
func del(t *testing.T, s storage.Store, key string) int64 {
	t.Helper()
	return commit(t, s, storage.Txn{Ops: []storage.Op{{Type: storage.OpDelete, Key: key}}})
}

func commit(t *testing.T, s storage.Store, txn storage.Txn) int64 {
	t.Helper()
	res, err := s.Txn(t.Context(), txn)
	if err != nil {
		t.Fatalf("Txn: %v", err)
	}
	return res.Revision
}

func mustGet(t *testing.T, s storage.Store, key string) storage.KV {
	t.Helper()
	kv, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get %q: %v", key, err)
	}
	return kv
}

func revision(t *testing.T, s storage.Store) int64 {
	t.Helper()
	rev, err := s.Revision(t.Context())
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev
}

// nextEvents returns the next batch with events, skipping progress notifications; it fails
// on an error result, a closed channel or the failure timeout.
func nextEvents(t *testing.T, ch <-chan storage.WatchResult) storage.WatchResult {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case res, ok := <-ch:
			if !ok {
				t.Fatal("watch channel closed, want events")
			}
			if res.Err != nil {
				t.Fatalf("watch error: %v", res.Err)
			}
			if len(res.Events) > 0 {
				return res
			}
		case <-timeout:
			t.Fatal("no watch events")
		}
	}
}

func expectClosed(t *testing.T, ch <-chan storage.WatchResult) {
	t.Helper()
	select {
	case res, ok := <-ch:
		if ok {
			t.Fatalf("watch delivered %+v after its terminal error, want closed", res)
		}
	case <-time.After(waitTimeout):
		t.Fatal("watch channel not closed after its terminal error")
	}
}

func diffKV(got, want storage.KV) string {
	if got.Key != want.Key || !bytes.Equal(got.Value, want.Value) || got.ModRevision != want.ModRevision || got.CreateRevision != want.CreateRevision {
		return fmt.Sprintf("got %s=%q mod=%d create=%d, want %s=%q mod=%d create=%d",
			got.Key, got.Value, got.ModRevision, got.CreateRevision, want.Key, want.Value, want.ModRevision, want.CreateRevision)
	}
	return ""
}

// render lists kvs as "name=value" (names relative to p) separated by spaces.
func render(kvs []storage.KV, p string) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = strings.TrimPrefix(kv.Key, p) + "=" + string(kv.Value)
	}
	return strings.Join(parts, " ")
}

func renderEvent(ev storage.Event) string {
	typ := "PUT"
	if ev.Type == storage.EventDelete {
		typ = "DELETE"
	}
	prev := "none"
	if ev.PrevKV != nil {
		prev = fmt.Sprintf("%s@%d", ev.PrevKV.Value, ev.PrevKV.ModRevision)
	}
	return fmt.Sprintf("%s %s=%s mod=%d create=%d prev=%s", typ, ev.KV.Key, ev.KV.Value, ev.KV.ModRevision, ev.KV.CreateRevision, prev)
}

func renderEvents(evs []storage.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = renderEvent(ev)
	}
	return out
}

// FreePorts returns n distinct TCP ports free on 127.0.0.1 a moment ago (for tests that
// start etcd members or servers on given ports). They are chosen below the kernel's
// ephemeral range when it leaves room (ports it never hands out by itself, to outgoing
// connections or to listeners on port 0, which tests running in parallel make all the
// time), and never twice in one process.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	lo := ephemeralLow()
	if lo-freePortsFloor < 1000 {
		ports, err := storage.FreeLoopbackPorts(n)
		if err != nil {
			t.Fatal(err)
		}
		return ports
	}
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 10000 {
			t.Fatalf("no %d free ports in [%d, %d)", n, freePortsFloor, lo)
		}
		p := freePortsFloor + rand.IntN(lo-freePortsFloor)
		if handedOut.ports[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = l.Close()
		handedOut.ports[p] = true
		ports = append(ports, p)
	}
	return ports
}

// freePortsFloor is the lowest port FreePorts chooses.
const freePortsFloor = 20000

// handedOut is the ports FreePorts chose in this process.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// ephemeralLow is the lowest port of the kernel's ephemeral range (Linux's default
// 32768 when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}
