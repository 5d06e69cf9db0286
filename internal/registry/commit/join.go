package commit

import (
	"context"
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

// maxRounds is how many joined rounds of one cluster quota may be planned and not yet
// returned: one committing while the next is planned on what it writes, as the writes
// arriving meanwhile make the round after bigger.
const maxRounds = 2

// joinedRound is a joined round planned and to be committed: its joins, its transaction,
// and what it writes to the slot.
type joinedRound struct {
	taken, rest []*crqJoin
	txn         storage.Txn
	send        bool
	// guard is the index in txn.Compares of the cluster quota's guard, prev the round in
	// flight whose value it guards (nil: guarded by revision), mine this round's progress.
	guard      int
	prev, mine *batchDone
	final      *clusterquota.ClusterResourceQuota
	value      []byte
	ctx        context.Context
	cancel     context.CancelFunc
	counted    bool
}

// leadSlot plans the batches waiting on a slot as one round (as many as fit), passes the
// lead on, and commits the round while the next is planned.
func (e *Engine) leadSlot(sl *crqSlot, name string) {
	sl.qmu.Lock()
	batch := sl.waiting
	sl.waiting = nil
	sl.qmu.Unlock()
	r := e.planJoined(sl, name, batch)
	sl.qmu.Lock()
	sl.waiting = append(r.rest, sl.waiting...)
	if len(sl.waiting) > 0 {
		sl.waiting[0].lead <- struct{}{}
	} else {
		sl.leading = false
	}
	sl.qmu.Unlock()
	e.commitJoined(sl, r)
	for _, j := range r.taken {
		close(j.done)
	}
}

// planJoined plans the joins in order on the cluster quota as the slot holds it (stored,
// or as the round in flight writes it) and returns the round of those that fit in one
// transaction; joins that fail to plan are settled and taken. Once planned, the slot holds
// what the round writes, for the next round.
func (e *Engine) planJoined(sl *crqSlot, name string, batch []*crqJoin) *joinedRound {
	r := &joinedRound{}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for sl.rounds >= maxRounds || sl.holders > 0 {
		sl.changed.Wait()
	}
	var all []*pending
	for _, j := range batch {
		all = append(all, j.live...)
	}
	r.ctx, r.cancel = batchContext(all)
	fail := func(err error) *joinedRound {
		for _, j := range batch {
			for _, p := range j.live {
				e.settle(p, 0, err)
			}
		}
		r.taken, r.rest, r.send = batch, nil, false
		return r
	}
	h, err := e.readSlot(r.ctx, sl, name)
	if err != nil {
		return fail(err)
	}
	if h == nil {
		// Deleted since the namespaces' reads (which the cluster-quota-set guard catches):
		// evaluate again.
		for _, j := range batch {
			j.retry = e.countRetries(j.live)
		}
		r.taken = batch
		return r
	}
	// 1. Plan each namespace's batch on the cluster quota the previous one leaves: its
	// total as charged so far (the batches see nothing else of it); the charges are made
	// once, in order, when all are planned.
	var charges []clusterquota.NamespaceCharge
	cur, bytes := h.obj, 0
	for i, j := range batch {
		j.st.held = []*heldQuota{{slot: sl, key: h.key, obj: cur, stored: h.stored}}
		j.st.joined = true
		plan, err := e.plan(r.ctx, j.ns, j.live, j.st, nil)
		if err != nil {
			for _, p := range j.live {
				e.settle(p, 0, err)
			}
			r.taken = append(r.taken, j)
			continue
		}
		cmps, ops, size := withoutKey(plan.toSend(), h.key)
		if i > 0 && (len(r.txn.Ops)+len(ops) >= storage.MaxTxnOps || len(r.txn.Compares)+len(cmps) >= storage.MaxTxnOps || bytes+size > maxBatchBytes) {
			r.rest = batch[i:]
			break
		}
		for _, c := range cmps {
			if !slices.ContainsFunc(r.txn.Compares, func(d storage.Compare) bool { return sameCompare(c, d) }) {
				r.txn.Compares = append(r.txn.Compares, c)
			}
		}
		r.txn.Ops = append(r.txn.Ops, ops...)
		bytes += size
		if len(plan.crqWrites) > 0 {
			after := plan.crqWrites[0].used
			charges = append(charges, clusterquota.NamespaceCharge{Namespace: j.ns, Before: cur.Status.Total.Used, After: after})
			next := *cur
			next.Status.Total.Used = after
			cur = &next
		}
		r.send = r.send || plan.included > 0 || plan.validate || plan.releases()
		j.plan = plan
		r.taken = append(r.taken, j)
	}
	// 2. The cluster quota once, guarded by the revision it was read at, or by the value
	// the round in flight writes.
	r.guard, r.prev = len(r.txn.Compares), h.stored.by
	r.txn.Compares = append(r.txn.Compares, h.stored.guard(h.key))
	if len(charges) > 0 {
		r.final = clusterquota.ChargeAll(h.obj, charges)
		b, err := sl.encode(r.final)
		if err != nil {
			err = InternalError(err)
			for _, j := range r.taken {
				if j.plan != nil {
					for _, p := range j.live {
						e.settle(p, 0, err)
					}
					j.plan = nil
				}
			}
			r.send = false
			return r
		}
		r.value = b
		r.txn.Ops = append(r.txn.Ops, storage.Op{Type: storage.OpPut, Key: h.key, Value: b})
		// The watch hub may stand the object for the stored bytes (never modified: the
		// next round charges a copy).
		obj := r.final
		e.env.Offer(crqGR, h.key, b, func() runtime.Object { cp := *obj; return &cp })
	}
	if r.send {
		r.mine = &batchDone{sent: make(chan struct{}), done: make(chan struct{})}
		sl.rounds++
		if r.final != nil {
			sl.value, sl.rev, sl.obj, sl.by = r.value, 0, r.final, r.mine
		}
	}
	return r
}

// commitJoined commits a planned round once the round before it returned, records the
// outcome in the slot, and settles every write.
func (e *Engine) commitJoined(sl *crqSlot, r *joinedRound) {
	defer r.cancel()
	if !r.send {
		e.settleJoined(r, 0)
		return
	}
	var rev int64
	var err error
	doomed := false
	if r.prev != nil {
		<-r.prev.sent
		if prev := r.prev.rev.Load(); prev != 0 {
			c := &r.txn.Compares[r.guard]
			*c = storage.Compare{Target: storage.ModRevisionEquals, Key: c.Key, Revision: prev}
		} else {
			// The round this one was planned on failed: so does this one, without asking
			// etcd, and its writes are evaluated again.
			err, doomed = storage.ErrConflict, true
		}
	}
	if err == nil {
		var res storage.TxnResult
		if res, err = e.cfg.Storage.Txn(r.ctx, r.txn); err == nil {
			rev = res.Revision
		}
	}
	// 3. The slot keeps what was committed. A round that failed makes the slot forget
	// what it holds: its value, or a later round's planned on it (which fails too), so
	// that the rounds planned from now on read the cluster quota as stored.
	sl.mu.Lock()
	switch {
	case err != nil:
		sl.by, sl.rev = nil, 0
	case sl.by == r.mine:
		sl.by, sl.rev = nil, rev
	}
	r.mine.ok = err == nil
	r.mine.rev.Store(rev)
	close(r.mine.sent)
	sl.rounds--
	sl.changed.Broadcast()
	sl.mu.Unlock()
	switch {
	case err == nil:
		e.settleJoined(r, rev)
	case doomed:
		for _, j := range r.taken {
			if j.plan != nil {
				j.retry = e.countRetries(j.live)
			}
		}
	case errors.Is(err, storage.ErrConflict):
		for _, j := range r.taken {
			if j.plan != nil {
				j.retry = e.sortConflict(r.ctx, j.live)
			}
		}
	case errors.Is(err, storage.ErrTooLarge):
		for _, j := range r.taken {
			if j.plan == nil {
				continue
			}
			if len(r.taken) == 1 && len(j.live) > 1 {
				for _, p := range j.live {
					p.alone = true
				}
			}
			j.retry = e.countRetries(j.live)
		}
	default:
		err = InternalError(err)
		for _, j := range r.taken {
			if j.plan != nil {
				for _, p := range j.live {
					e.settle(p, 0, err)
				}
			}
		}
	}
	close(r.mine.done)
}

// settleJoined settles the writes of a round that committed at rev (or sent nothing).
func (e *Engine) settleJoined(r *joinedRound, rev int64) {
	if e.cfg.ObserveWrites != nil && rev != 0 {
		n := 0
		for _, j := range r.taken {
			if j.plan != nil {
				n += j.plan.included
			}
		}
		if n > 0 {
			e.cfg.ObserveWrites(n)
		}
	}
	for _, j := range r.taken {
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
}

// withoutKey returns a plan's compares and ops but those on key (the cluster quota, which
// the joined transaction guards and writes once), and the bytes of its ops.
func withoutKey(txn storage.Txn, key string) ([]storage.Compare, []storage.Op, int) {
	cmps := make([]storage.Compare, 0, len(txn.Compares))
	for _, c := range txn.Compares {
		if c.Key != key {
			cmps = append(cmps, c)
		}
	}
	ops := make([]storage.Op, 0, len(txn.Ops))
	size := 0
	for _, op := range txn.Ops {
		if op.Key != key {
			ops = append(ops, op)
			size += len(op.Key) + len(op.Value)
		}
	}
	return cmps, ops, size
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
