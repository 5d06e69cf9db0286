package storage_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/quotad/quotad/internal/memlimit"
	"github.com/quotad/quotad/internal/storage"
)

// TestListsReportBulkReads: the values a list returns are reported to the memory policy as
// garbage of bulk reads (memlimit.Bulk), which lowers GOGC while lists run once they
// passed half its headroom.
func TestListsReportBulkReads(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	oldLimit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(oldLimit)
	e := startEmbedded(t, t.TempDir())
	s := e.Store()
	defer s.Close()
	var ops []storage.Op
	for i := range 16 {
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: fmt.Sprintf("/b/%02d", i), Value: bytes.Repeat([]byte{'b'}, 64<<10)})
	}
	if _, err := s.Txn(t.Context(), storage.Txn{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	memlimit.Follow(ctx, memlimit.Policy{Floor: 1 << 40, Factor: 1, Percent: 300, BulkHeadroom: 1 << 20})
	gogc := func() uint64 {
		m := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(m)
		return m[0].Value.Uint64()
	}
	if got := gogc(); got != 300 {
		t.Fatalf("GOGC after Follow = %d, want 300", got)
	}
	lr, err := s.List(t.Context(), "/b/", storage.ListOptions{})
	if err != nil || len(lr.KVs) != 16 {
		t.Fatalf("list: %d values (%v), want 16", len(lr.KVs), err)
	}
	if got := gogc(); got >= 300 {
		t.Errorf("GOGC after a list of 1 MiB of values = %d, want lowered (half the headroom was read in bulk)", got)
	}
}
