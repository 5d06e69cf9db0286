package commit

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/storage"
)

// TestPipelineContinuedBySettlingWriter: writes that queue while a namespace's batch commits
// are planned into the next batch by the writer whose batch settles, before its Commit
// returns, so the pipeline does not wait for another writer to be scheduled; and that writer
// does not wait for the batch it planned, which commits on a goroutine of its own.
func TestPipelineContinuedBySettlingWriter(t *testing.T) {
	h := newTurnHarness(t, "pods", "10")
	e, rs := h.replica("a", nil)
	entered := []chan struct{}{make(chan struct{}), make(chan struct{})}
	release := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var podTxns int
	rs.beforeTxn = func(txn storage.Txn) error {
		if !h.storesPod(txn) || podTxns >= len(entered) {
			return nil
		}
		i := podTxns // pod transactions of one namespace are sent one at a time
		podTxns++
		close(entered[i])
		<-release[i]
		return nil
	}
	type result struct {
		key string
		err error
	}
	commit := func() <-chan result {
		out := make(chan result, 1)
		go func() {
			k, err := h.create(context.Background(), e)
			out <- result{k, err}
		}()
		return out
	}

	first := commit()
	<-entered[0]
	second := commit()
	// The second write queues behind the batch in flight, and nobody leads.
	sh := e.shard(planNS)
	deadline := time.Now().Add(time.Minute)
	for {
		sh.mu.Lock()
		q := sh.queues[planNS]
		queued := len(q.waiting) == 1 && !q.leading
		sh.mu.Unlock()
		if queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second write never queued without a leader behind the batch in flight")
		}
		runtime.Gosched()
	}
	close(release[0])
	r1 := <-first
	if r1.err != nil {
		t.Fatalf("first write: %v", r1.err)
	}
	sh.mu.Lock()
	q := sh.queues[planNS]
	waiting, inflight := len(q.waiting), q.inflight
	sh.mu.Unlock()
	if waiting != 0 || inflight != 1 {
		t.Errorf("when the first write returned: %d writes waiting and %d batches in flight, want the second planned (0 and 1)", waiting, inflight)
	}
	<-entered[1] // the second batch reaches storage while the first writer is gone
	select {
	case r := <-second:
		t.Fatalf("second write settled before its transaction returned: %v", r.err)
	default:
	}
	close(release[1])
	if r2 := <-second; r2.err != nil {
		t.Fatalf("second write: %v", r2.err)
	}
	if got := quotaShow(h.used("q")); got != "pods=2" {
		t.Errorf("quota used %s, want pods=2", got)
	}
}
