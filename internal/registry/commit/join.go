package commit

import (
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/storage"
)

// Group commit across the namespaces of a cluster quota.
//
// A cluster quota is written by every batch of every namespace it selects, and etcd refuses
// two writes of one key in one request, so the batches of different namespaces cannot share
// an etcd request as separate transactions (combine.go). Instead, the batches waiting on one
// cluster quota's slot are joined into ONE transaction: the slot's leader reads the cluster
// quota once, plans each namespace's batch in arrival order on the cluster quota the previous
// one leaves (its namespace's own quotas as that batch read them), and commits all of them
// with the cluster quota written once, guarded once by the revision it read. Each
// namespace's own guards (its quota keys at its read revision, its objects) are kept, so a
// change anywhere fails the whole transaction and every batch is evaluated again, as when
// they commit one by one. Only batches of namespaces selected by exactly one cluster quota
// and without ResourceQuota writes are joined; others lock their slots (commitSolo).

// crqJoin is one namespace's batch waiting on a cluster quota's slot.
type crqJoin struct {
	ns   string
	live []*pending
	st   *nsState
	plan *batchPlan
	// lead hands the slot's lead to this join's goroutine; done reports its outcome: ok
	// (committed and settled), or the writes to evaluate again.
	lead  chan struct{}
	done  chan struct{}
	ok    bool
	retry []*pending
}

// joinSlot commits a namespace's batch together with the batches of other namespaces
// waiting on the same cluster quota.
func (e *Engine) joinSlot(name, ns string, live []*pending, st *nsState) (bool, []*pending) {
	sl := e.crq.slot(name)
	j := &crqJoin{ns: ns, live: live, st: st, lead: make(chan struct{}, 1), done: make(chan struct{})}
	sl.qmu.Lock()
	sl.waiting = append(sl.waiting, j)
	if !sl.leading {
		sl.leading = true
		j.lead <- struct{}{}
	}
	sl.qmu.Unlock()
	for {
		select {
		case <-j.done:
			return j.ok, j.retry
		case <-j.lead:
			e.leadSlot(sl, name)
		}
	}
}

// leadSlot commits the batches waiting on a slot in one transaction (as many as fit), then
// passes the lead on.
func (e *Engine) leadSlot(sl *crqSlot, name string) {
	sl.qmu.Lock()
	batch := sl.waiting
	sl.waiting = nil
	sl.qmu.Unlock()
	taken, rest := e.commitJoined(sl, name, batch)
	for _, j := range taken {
		close(j.done)
	}
	sl.qmu.Lock()
	sl.waiting = append(rest, sl.waiting...)
	if len(sl.waiting) > 0 {
		sl.waiting[0].lead <- struct{}{}
	} else {
		sl.leading = false
	}
	sl.qmu.Unlock()
}

// commitJoined plans the joins in order on the cluster quota as the slot holds it and
// commits those that fit in one transaction; it returns them (settled, or with their
// writes to evaluate again) and the joins left for the next round.
func (e *Engine) commitJoined(sl *crqSlot, name string, batch []*crqJoin) (taken, rest []*crqJoin) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	var all []*pending
	for _, j := range batch {
		all = append(all, j.live...)
	}
	ctx, cancel := batchContext(all)
	defer cancel()
	fail := func(err error) {
		for _, j := range batch {
			for _, p := range j.live {
				e.settle(p, 0, err)
			}
		}
	}
	h, err := e.readSlot(ctx, sl, name)
	if err != nil {
		fail(err)
		return batch, nil
	}
	if h == nil {
		// Deleted since the namespaces' reads (which the cluster-quota-set guard catches):
		// evaluate again.
		for _, j := range batch {
			j.retry = e.countRetries(j.live)
		}
		return batch, nil
	}
	// 1. Plan each namespace's batch on the cluster quota the previous one leaves: its
	// total as charged so far (the batches see nothing else of it); the charges are made
	// once, in order, when all are planned.
	// Each namespace's batch brings its objects' guards and writes, its quota range, turn
	// and usage epoch; the cluster quota's guard and put come once.
	txn := storage.Txn{Compares: make([]storage.Compare, 0, 2+len(all)+2*len(batch)), Ops: make([]storage.Op, 0, 1+len(all)+len(batch))}
	var charges []clusterquota.NamespaceCharge
	cur, bytes, send := h.obj, 0, false
	for i, j := range batch {
		j.st.held = []*heldQuota{{slot: sl, key: h.key, obj: cur, stored: h.stored}}
		j.st.joined = true
		plan, err := e.plan(ctx, j.ns, j.live, j.st, nil)
		if err != nil {
			for _, p := range j.live {
				e.settle(p, 0, err)
			}
			taken = append(taken, j)
			continue
		}
		sent := plan.toSend()
		cmps, ops, size := countWithout(sent, h.key)
		if i > 0 && (len(txn.Ops)+ops >= storage.MaxTxnOps || len(txn.Compares)+cmps >= storage.MaxTxnOps || bytes+size > maxBatchBytes) {
			rest = batch[i:]
			break
		}
		appendWithout(&txn, sent, h.key)
		bytes += size
		if len(plan.crqWrites) > 0 {
			after := plan.crqWrites[0].used
			charges = append(charges, clusterquota.NamespaceCharge{Namespace: j.ns, Before: cur.Status.Total.Used, After: after})
			next := *cur
			next.Status.Total.Used = after
			cur = &next
		}
		send = send || plan.included > 0 || plan.validate || plan.releases()
		j.plan = plan
		taken = append(taken, j)
	}
	// 2. The cluster quota once, guarded by the revision it was read at.
	txn.Compares = append(txn.Compares, h.stored.guard(h.key))
	var final *clusterquota.ClusterResourceQuota
	var value []byte
	if len(charges) > 0 {
		final = clusterquota.ChargeAll(h.obj, charges)
		b, err := sl.encode(final)
		if err != nil {
			fail(InternalError(err))
			return batch, nil
		}
		value = b
		txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: h.key, Value: b})
		// The watch hub may stand the object for the stored bytes (never modified: the
		// next round charges a copy).
		obj := final
		e.env.Offer(crqGR, h.key, b, func() runtime.Object { cp := *obj; return &cp })
	}
	var rev int64
	if send {
		r, err := e.cfg.Storage.Txn(ctx, txn)
		switch {
		case err == nil:
			rev = r.Revision
			if e.cfg.ObserveWrites != nil {
				n := 0
				for _, j := range taken {
					if j.plan != nil {
						n += j.plan.included
					}
				}
				if n > 0 {
					e.cfg.ObserveWrites(n)
				}
			}
		case errors.Is(err, storage.ErrConflict):
			sl.rev = 0
			for _, j := range taken {
				if j.plan != nil {
					j.retry = e.sortConflict(ctx, j.live)
				}
			}
			return taken, rest
		case errors.Is(err, storage.ErrTooLarge):
			sl.rev = 0
			for _, j := range taken {
				if j.plan == nil {
					continue
				}
				if len(taken) == 1 && len(j.live) > 1 {
					for _, p := range j.live {
						p.alone = true
					}
				}
				j.retry = e.countRetries(j.live)
			}
			return taken, rest
		default:
			sl.rev = 0
			err = InternalError(err)
			for _, j := range taken {
				if j.plan != nil {
					for _, p := range j.live {
						e.settle(p, 0, err)
					}
				}
			}
			return taken, rest
		}
	}
	// 3. Settle every write; the slot keeps what was committed.
	if final != nil {
		sl.value, sl.rev, sl.obj = value, rev, final
	}
	for _, j := range taken {
		if j.plan == nil {
			continue
		}
		for i, p := range j.live {
			if j.plan.results[i] != nil || p.w.Attrs.DryRun {
				e.settle(p, 0, j.plan.results[i])
			} else {
				e.settle(p, rev, nil)
			}
		}
		j.ok = true
	}
	return taken, rest
}

// countWithout counts a plan's compares and ops but those on key (the cluster quota, which
// the joined transaction guards and writes once), and the bytes of those ops.
func countWithout(txn storage.Txn, key string) (cmps, ops, size int) {
	for _, c := range txn.Compares {
		if c.Key != key {
			cmps++
		}
	}
	for _, op := range txn.Ops {
		if op.Key != key {
			ops++
			size += len(op.Key) + len(op.Value)
		}
	}
	return cmps, ops, size
}

// appendWithout appends a plan's compares and ops to dst, but those on key. The cluster
// quota set's guard, which every namespace's plan brings, is appended once; other compares
// are each namespace's own (one two plans share would be the same guard twice, which etcd
// evaluates twice, not a conflict), so they are not searched for: that search made each
// round quadratic in its namespaces.
func appendWithout(dst *storage.Txn, txn storage.Txn, key string) {
	for _, c := range txn.Compares {
		if c.Key == key || c.Key == ClusterQuotaSetKey && slices.ContainsFunc(dst.Compares, func(d storage.Compare) bool { return sameCompare(c, d) }) {
			continue
		}
		dst.Compares = append(dst.Compares, c)
	}
	for _, op := range txn.Ops {
		if op.Key != key {
			dst.Ops = append(dst.Ops, op)
		}
	}
}

func sameCompare(a, b storage.Compare) bool {
	return a.Target == b.Target && a.Key == b.Key && a.Revision == b.Revision && string(a.Value) == string(b.Value)
}

// joinable reports whether a batch may be joined with other namespaces' batches: no
// ResourceQuota writes (they recompute their status under their namespace's epoch).
func joinable(live []*pending) bool {
	for _, p := range live {
		if isQuotaWrite(p.w) {
			return false
		}
	}
	return true
}
