package commit

import (
	"context"
	"errors"
	"sync"

	"github.com/quotad/quotad/internal/storage"
)

// Namespaces plan and commit their batches independently, so with writes spread over many
// namespaces a batch holds about one write, and each write would be an etcd request of its
// own: its own raft entry, its own WAL sync, its own apply. The combiner lets the batches
// of different namespaces that are ready while a request is in flight share the next one.
// Each stays a transaction of its own, with its own guards, committing or failing by them
// alone (storage.Txns), so no namespace's outcome depends on another's. Nothing waits to
// be combined: a transaction is submitted at once when fewer than maxCombinedInFlight
// requests are in flight, and otherwise joins the next request. Planning never waits on
// the combiner; only the etcd round trip is shared, as writes of one namespace share it.

const (
	// maxCombinedTxns bounds the transactions of one request: etcd counts the nested
	// transactions against each one's operation limit.
	maxCombinedTxns = 32
	// maxCombinedBytes bounds the keys and values of one request, below etcd's 1.5 MiB.
	maxCombinedBytes = 1 << 20
	// maxCombinedInFlight is how many combined requests may be in flight at once. One is
	// group commit across namespaces, as maxPipeline is within one: the transactions that
	// become ready during a round trip share the next request. Two measured no faster
	// (docs/benchmarks.md).
	maxCombinedInFlight = 1
)

// combiner queues transactions for combined submission.
type combiner struct {
	mu       sync.Mutex
	waiting  []*combinedTxn
	inflight int
}

// combinedTxn is one queued transaction and, once done, its outcome.
type combinedTxn struct {
	txn   storage.Txn
	ops   int
	bytes int
	// lead asks the transaction's goroutine to submit the next request; led records (under
	// the combiner's lock) that it was asked.
	lead chan struct{}
	led  bool
	done chan struct{}
	res  storage.TxnResult
	err  error
}

// submitTxn commits txn, in one request with the transactions of other namespaces that are
// ready at the same time. It returns what storage.Store.Txn would. The request is bounded
// by batchTimeout, not by ctx's end.
func (e *Engine) submitTxn(ctx context.Context, txn storage.Txn) (storage.TxnResult, error) {
	c := &combinedTxn{txn: txn, ops: max(len(txn.Ops), len(txn.Compares))}
	for _, op := range txn.Ops {
		c.bytes += len(op.Key) + len(op.Value)
	}
	for _, cmp := range txn.Compares {
		c.bytes += len(cmp.Key) + len(cmp.Value)
	}
	// A transaction too big to share a request is submitted alone, at once.
	if c.ops+maxCombinedTxns > storage.MaxTxnOps || c.bytes > maxCombinedBytes/2 {
		ctx, cancel := context.WithTimeout(ctx, batchTimeout)
		defer cancel()
		return e.cfg.Storage.Txn(ctx, txn)
	}
	c.lead, c.done = make(chan struct{}, 1), make(chan struct{})
	cb := &e.combiner
	cb.mu.Lock()
	cb.waiting = append(cb.waiting, c)
	if cb.inflight < maxCombinedInFlight {
		cb.inflight++
		c.led = true
		c.lead <- struct{}{}
	}
	cb.mu.Unlock()
	for {
		select {
		case <-c.done:
			// Another request took this transaction after it was asked to lead: it still
			// holds an in-flight slot, so it submits (or releases) once before returning.
			select {
			case <-c.lead:
				e.runCombined(ctx, c)
			default:
			}
			return c.res, c.err
		case <-c.lead:
			e.runCombined(ctx, c)
		}
	}
}

// runCombined submits the queued transactions (within the limits) as one request, hands
// them their outcomes, and then passes its in-flight slot to a waiting transaction or gives
// it up. self is the transaction whose goroutine runs it.
func (e *Engine) runCombined(ctx context.Context, self *combinedTxn) {
	cb := &e.combiner
	cb.mu.Lock()
	var group []*combinedTxn
	bytes := 0
	// The keys of the group so far, for the overlap check: not needed for a lone
	// transaction (one namespace's load, one client).
	var writes, compares map[string]bool
	if len(cb.waiting) > 1 {
		writes, compares = map[string]bool{}, map[string]bool{}
	}
	rest := cb.waiting[:0]
	for _, c := range cb.waiting {
		if len(group) == maxCombinedTxns || (len(group) > 0 && bytes+c.bytes > maxCombinedBytes) || overlaps(c.txn, writes, compares) {
			rest = append(rest, c)
			continue
		}
		if writes != nil {
			for _, op := range c.txn.Ops {
				writes[op.Key] = true
			}
			for _, cmp := range c.txn.Compares {
				compares[cmp.Key] = true
			}
		}
		group = append(group, c)
		bytes += c.bytes
	}
	clear(cb.waiting[len(rest):])
	cb.waiting = rest
	// Its own transaction may have had to wait for the next request: it may lead again.
	self.led = false
	cb.mu.Unlock()

	// The request outlives any one caller: it carries the caller's values, not its end.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	defer cancel()
	if len(group) > 0 && e.cfg.ObserveRequest != nil {
		e.cfg.ObserveRequest(len(group))
	}
	switch len(group) {
	case 0:
	case 1:
		group[0].res, group[0].err = e.cfg.Storage.Txn(ctx, group[0].txn)
	default:
		txns := make([]storage.Txn, len(group))
		for i, c := range group {
			txns[i] = c.txn
		}
		out, err := e.cfg.Storage.Txns(ctx, txns)
		for i, c := range group {
			switch {
			case errors.Is(err, storage.ErrTooLarge):
				c.res, c.err = e.cfg.Storage.Txn(ctx, c.txn)
			case err != nil:
				c.err = err
			default:
				c.res, c.err = out[i].TxnResult, out[i].Err
			}
		}
	}
	for _, c := range group {
		close(c.done)
	}

	// Pass the slot to the first waiting transaction not already asked to lead.
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for _, c := range cb.waiting {
		if !c.led {
			c.led = true
			c.lead <- struct{}{}
			return
		}
	}
	cb.inflight--
}

// QueuedTxns reports how many transactions wait for the next etcd request.
func (e *Engine) QueuedTxns() int {
	e.combiner.mu.Lock()
	defer e.combiner.mu.Unlock()
	return len(e.combiner.waiting)
}

// overlaps reports whether txn writes a key of writes or compares, or compares a key of
// writes: such transactions must not share a request (etcd evaluates every compare
// before any write, and refuses two writes to one key).
func overlaps(txn storage.Txn, writes, compares map[string]bool) bool {
	for _, op := range txn.Ops {
		if writes[op.Key] || compares[op.Key] {
			return true
		}
	}
	for _, cmp := range txn.Compares {
		if writes[cmp.Key] {
			return true
		}
	}
	return false
}
