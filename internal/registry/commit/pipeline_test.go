package commit

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/storage"
)

// pipelineHarness is one engine whose transactions storing objects of given prefixes can be
// held: the nth such transaction signals entered[n] and waits for release[n].
type pipelineHarness struct {
	*turnHarness
	e                *Engine
	entered, release []chan struct{}
	held             int
}

func newPipelineHarness(t *testing.T, holds int, prefixes ...string) *pipelineHarness {
	h := &pipelineHarness{turnHarness: newTurnHarness(t, "pods", "10")}
	rs := &replicaStore{memStore: h.store}
	h.e = New(Config{Storage: rs, Env: listingEnv{store: h.store}, Quota: h.acct, Replica: "a", MaxRetries: 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for range holds {
		h.entered = append(h.entered, make(chan struct{}))
		h.release = append(h.release, make(chan struct{}))
	}
	rs.beforeTxn = func(txn storage.Txn) error {
		if h.held >= holds || !putsUnder(txn, prefixes) {
			return nil
		}
		i := h.held // a namespace's transactions are sent one at a time
		h.held++
		close(h.entered[i])
		<-h.release[i]
		return nil
	}
	return h
}

func putsUnder(txn storage.Txn, prefixes []string) bool {
	for _, op := range txn.Ops {
		for _, p := range prefixes {
			if op.Type == storage.OpPut && strings.HasPrefix(op.Key, p) {
				return true
			}
		}
	}
	return false
}

// commit commits w on a goroutine of its own and returns where its outcome comes.
func (h *pipelineHarness) commit(w *Write) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := h.e.Commit(context.Background(), w)
		out <- err
	}()
	return out
}

// waitQueuedWithoutLeader waits until one write queues behind the batch in flight, and
// nobody leads.
func (h *pipelineHarness) waitQueuedWithoutLeader() {
	sh := h.e.shard(planNS)
	deadline := time.Now().Add(time.Minute)
	for {
		sh.mu.Lock()
		q := sh.queues[planNS]
		queued := len(q.waiting) == 1 && !q.leading
		sh.mu.Unlock()
		if queued {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("no write queued without a leader behind the batch in flight")
		}
		runtime.Gosched()
	}
}

// outcome waits for a write's outcome; a minute without one fails the test.
func (h *pipelineHarness) outcome(what string, c <-chan error) error {
	select {
	case err := <-c:
		return err
	case <-time.After(time.Minute):
		h.t.Fatalf("%s: no outcome", what)
		return nil
	}
}

// TestPipelineContinuedBySettlingWriter: writes that queue while a namespace's batch commits
// are planned into the next batch by the writer whose batch settles, before its Commit
// returns, so the pipeline does not wait for another writer to be scheduled; and that writer
// does not wait for the batch it planned, which commits on a goroutine of its own.
func TestPipelineContinuedBySettlingWriter(t *testing.T) {
	h := newPipelineHarness(t, 2, testKinds[podsGVR.GroupResource()].KeyPrefix(planNS))
	first := h.commit(h.createPod(newPod("p1", "10m", "")))
	<-h.entered[0]
	second := h.commit(h.createPod(newPod("p2", "10m", "")))
	h.waitQueuedWithoutLeader()
	close(h.release[0])
	if err := h.outcome("first write", first); err != nil {
		t.Fatalf("first write: %v", err)
	}
	sh := h.e.shard(planNS)
	sh.mu.Lock()
	q := sh.queues[planNS]
	waiting, inflight := len(q.waiting), q.inflight
	sh.mu.Unlock()
	if waiting != 0 || inflight != 1 {
		t.Errorf("when the first write returned: %d writes waiting and %d batches in flight, want the second planned (0 and 1)", waiting, inflight)
	}
	<-h.entered[1] // the second batch reaches storage while the first writer is gone
	select {
	case err := <-second:
		t.Fatalf("second write settled before its transaction returned: %v", err)
	default:
	}
	close(h.release[1])
	if err := h.outcome("second write", second); err != nil {
		t.Fatalf("second write: %v", err)
	}
	if got := quotaShow(h.used("q")); got != "pods=2" {
		t.Errorf("quota used %s, want pods=2", got)
	}
}

// TestPipelineSettledWriterLeavesSoloBatch: a writer whose batch settles with a quota write
// waiting, which commits solo after reading the namespace, leaves that batch to a goroutine
// of its own: its Commit returns while the quota write's transaction is held.
func TestPipelineSettledWriterLeavesSoloBatch(t *testing.T) {
	h := newPipelineHarness(t, 2, testKinds[podsGVR.GroupResource()].KeyPrefix(planNS), testKinds[quotaGR].KeyPrefix(planNS))
	pod := h.commit(h.createPod(newPod("p1", "10m", "")))
	<-h.entered[0]
	quotaWrite := h.commit(h.createQuota(newQuota("q2", hardOf("pods", "5"))))
	h.waitQueuedWithoutLeader()
	close(h.release[0])
	if err := h.outcome("pod", pod); err != nil {
		t.Fatalf("pod: %v", err)
	}
	<-h.entered[1] // the quota write's transaction, held while the pod's writer is gone
	close(h.release[1])
	if err := h.outcome("quota write", quotaWrite); err != nil {
		t.Fatalf("quota write: %v", err)
	}
	if got := quotaShow(h.used("q2")); got != "pods=1" {
		t.Errorf("new quota's used %s, want pods=1", got)
	}
}

// panickingEnv is listingEnv whose next Offer panics, as a bug in planning would.
type panickingEnv struct {
	listingEnv
	armed *atomic.Bool
}

func (e panickingEnv) Offer(gr schema.GroupResource, key string, value []byte, obj func() kruntime.Object) {
	if e.armed.CompareAndSwap(true, false) {
		panic("planning bug")
	}
	e.listingEnv.Offer(gr, key, value, obj)
}

// TestPlanPanicFailsBatch: a panic while planning a batch fails its writes with an internal
// error, charges nothing, and leaves the namespace's queue working.
func TestPlanPanicFailsBatch(t *testing.T) {
	h := newTurnHarness(t, "pods", "10")
	armed := &atomic.Bool{}
	e := New(Config{Storage: h.store, Env: panickingEnv{listingEnv{store: h.store}, armed}, Quota: h.acct, MaxRetries: 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := h.create(context.Background(), e); err != nil {
		t.Fatalf("first write: %v", err)
	}
	armed.Store(true)
	_, err := h.create(context.Background(), e)
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "planning bug") {
		t.Fatalf("write planned with a panic: %v, want an internal error naming the panic", err)
	}
	if _, err := h.create(context.Background(), e); err != nil {
		t.Fatalf("write after the panic: %v", err)
	}
	if got := quotaShow(h.used("q")); got != "pods=2" {
		t.Errorf("quota used %s, want pods=2 (the failed write uncharged)", got)
	}
	h.checkI1("after a panic in planning")
}
