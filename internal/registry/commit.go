package registry

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/storage"
)

// Group commit with pipelining (design.md §3).
//
// Writes waiting on the same namespace are evaluated in arrival order against the namespace's
// quotas and committed together in ONE etcd transaction: every object with its own guard,
// each touched quota once, the namespace's usage epoch. The first waiter of a namespace leads:
// it plans one batch, passes the lead on, and only then waits for etcd; the next leader
// plans the next batch once this one is settled (maxPipeline), while the writes arriving
// meanwhile make it bigger. A pipelined batch is planned against the quota state the
// previous batch left, without reading it back, and guarded by exactly that: each touched
// quota must be stored as the plan assumed, and the namespace's quota set (created, deleted
// or edited quotas bump its key) must be the one read. A quota the previous batch writes is
// guarded by the revision that batch committed at, or, if its transaction has not returned
// by the time this one is sent, by the bytes it writes (ValueEquals). If
// anything else changed, the guard fails, the state is read again and the writes are
// evaluated again: a quota is never charged beyond what its stored status allows, under any
// interleaving, across any number of replicas. The usage epoch is put unless the
// transaction puts a quota (recomputations guard on both).
//
// Writes of ResourceQuota objects are committed alone, after the pipeline drains, with their
// status recomputed from the namespace under its usage epoch (I3). Every charge rewrites the
// namespace's quotas, so a quota write prepared on the quota its request read would find it
// moved by the batches queued before it, again and again under load; it is prepared again
// (write.redo) on the quota as read while it holds the namespace's lead, so quota edits are
// serialized with charges and always land.
//
// Pipelined transactions of different namespaces that become ready while an etcd request is
// in flight share the next request, each still a transaction of its own (combine.go).
//
// This file is the driver: queues, leads, reads, transactions, retries. What a batch's
// transaction is, and what each write's result is, is decided by planBatch, a function of
// data without IO (commit_plan.go).

// Batch limits: etcd refuses transactions of more than 128 operations or compares, or of
// more than 1.5 MiB, and two writes to one key.
const (
	maxBatchWrites = 64
	maxBatchBytes  = 1 << 20
	// maxPipeline is how many batches of one namespace may be committing at once. One is
	// fastest on two cores: writes arriving during a commit join the next batch, and bigger
	// batches cost less CPU per write (docs/benchmarks.md); the next batch is still planned
	// on the state the previous one leaves, without reading it back.
	maxPipeline = 1
	// batchTimeout bounds a batch's storage calls.
	batchTimeout = 30 * time.Second
	// maxIdleQueuesPerShard bounds the idle namespaces whose quota state is kept.
	maxIdleQueuesPerShard = 64
)

// QuotaSetKey is the per-namespace key every ResourceQuota object write (create, update,
// delete) puts: pipelined batches guard on it to learn that the set of quotas is unchanged.
func QuotaSetKey(ns string) string { return "/registry/quotad.io/quota-set/" + ns + "/" }

// pending is one write waiting in its namespace's queue.
type pending struct {
	ctx      context.Context
	w        *write
	lead     chan struct{}
	done     chan struct{}
	rev      int64
	err      error
	attempts int
	// alone asks for a batch of its own (the write did not fit in a transaction with others).
	alone bool
	// judged: the write was evaluated against at least one quota (for the decision metric).
	judged bool
}

// nsQueue orders the writes of one namespace. Guarded by its shard's mutex.
type nsQueue struct {
	waiting []*pending
	leading bool
	users   int
	// state is the quota state the last planned batch leaves (nil: read it from storage);
	// gen counts invalidations, so a plan made on a stale state is not kept.
	state *nsState
	gen   int64
	// inflight counts submitted batches not yet settled; last is the newest one.
	inflight int
	last     *batchDone
	idle     *sync.Cond
	// bound: the last read found cluster quotas selecting the namespace, so its batches are
	// committed solo, holding their slots; boundState is the state the next may use
	// (commitSolo).
	bound      bool
	boundState *nsState
}

type queueShard struct {
	mu     sync.Mutex
	queues map[string]*nsQueue
}

// batchDone reports a submitted batch's progress to the batch planned after it: sent is
// closed once its transaction returned (so transactions of a namespace reach etcd in plan
// order), done once it is settled, with ok telling whether it committed.
type batchDone struct {
	sent, done chan struct{}
	ok         bool
	// rev is the revision the batch's transaction committed at (0: not, or not yet).
	rev atomic.Int64
}

func (s *Store) shard(ns string) *queueShard {
	h := fnv.New32a()
	h.Write([]byte(ns))
	return &s.queues[h.Sum32()%uint32(len(s.queues))]
}

// commit evaluates quota for one write and commits the object with every quota change in
// one guarded transaction, batched with the other writes waiting on its namespace.
// errObjectChanged reports that the object's own guard failed.
func (s *Store) commit(ctx context.Context, w *write) (int64, error) {
	var start time.Time
	if s.cfg.ObserveQuotaLatency != nil {
		start = time.Now()
	}
	ns := w.attrs.Namespace
	if !w.res.Namespaced || ns == "" {
		return s.commitClusterScoped(ctx, w)
	}
	if s.cfg.Quota != nil && (s.cfg.Quota.Limits() || !s.knownQuotaFree(ns)) {
		w.quota, w.quotaErr = s.cfg.Quota.Prepare(w.attrs)
		w.prepared = true
	}
	if w.res.GroupResource() == servicesGR && !w.attrs.DryRun {
		svc, _ := w.obj.(*corev1.Service)
		old, _ := w.attrs.OldObject.(*corev1.Service)
		w.extraCmps, w.extraOps = allocationChanges(svc, old)
	}
	if w.obj != nil && !isQuotaWrite(w) && !w.attrs.DryRun {
		b, err := encodeStored(w.res, w.obj)
		if err != nil {
			return 0, internalError(err)
		}
		w.value, w.size = b, len(b)
		s.offerWrite(w)
	}
	p := &pending{ctx: ctx, w: w, lead: make(chan struct{}, 1), done: make(chan struct{})}
	sh := s.shard(ns)
	// 1. Queue up; the first waiter leads.
	sh.mu.Lock()
	if sh.queues == nil {
		sh.queues = map[string]*nsQueue{}
	}
	q := sh.queues[ns]
	if q == nil {
		q = &nsQueue{idle: sync.NewCond(&sh.mu)}
		sh.queues[ns] = q
	}
	q.users++
	q.waiting = append(q.waiting, p)
	if !q.leading {
		q.leading = true
		p.lead <- struct{}{}
	}
	sh.mu.Unlock()
	// 2. Wait until settled; lead whenever handed the lead (a requeued write may lead again).
	for done := false; !done; {
		select {
		case <-p.done:
			done = true
		case <-p.lead:
			s.lead(sh, ns, q)
		}
	}
	sh.mu.Lock()
	q.users--
	// Idle queues keep their quota state (sparing the next write a read) while the shard
	// holds few of them.
	if q.users == 0 && !q.leading && len(q.waiting) == 0 && q.inflight == 0 && len(sh.queues) > maxIdleQueuesPerShard {
		delete(sh.queues, ns)
	}
	sh.mu.Unlock()
	if w.tentative && p.err != nil {
		return p.rev, p.err // tried again on what etcd holds, which reports
	}
	if s.cfg.ObserveQuotaLatency != nil && (w.prepared || p.judged) && !errors.Is(p.err, errObjectChanged) {
		s.cfg.ObserveQuotaLatency(w.attrs.Operation, time.Since(start), p.judged && apierrors.IsForbidden(p.err))
	}
	s.deliverFindings(ctx, w, p.err)
	return p.rev, p.err
}

// deliverFindings gives a settled write's quota findings (of the last check, the one its
// commit or refusal was planned on) to their audiences: for an admitted write (a dry run
// too: it gets the warnings it would get), each Warn-mode finding and each crossed
// threshold becomes a Warning header, and the Audit-mode findings become the request's
// audit annotation quota.AuditAnnotation, with no warning; then Config.QuotaFindings is
// told (metrics, Events), for refusals by an Enforce quota too.
func (s *Store) deliverFindings(ctx context.Context, w *write, err error) {
	f, ok := w.quota.(QuotaFinder)
	if !ok {
		return
	}
	findings := f.Findings()
	if len(findings) == 0 || (err != nil && !apierrors.IsForbidden(err)) {
		return
	}
	admitted := err == nil
	if admitted {
		var audited []string
		for _, fd := range findings {
			switch {
			case fd.Reason == quota.FindingThreshold || fd.Mode == quota.Warn:
				admission.Warn(ctx, fd.Message)
			case fd.Mode == quota.Audit:
				audited = append(audited, fd.Message)
			}
		}
		if len(audited) > 0 {
			admission.AuditAnnotate(ctx, quota.AuditAnnotation, strings.Join(audited, "; "))
		}
	}
	if s.cfg.QuotaFindings != nil {
		s.cfg.QuotaFindings(ctx, QuotaReport{
			Namespace: w.attrs.Namespace, Resource: w.res.GroupResource(), Name: w.attrs.Name,
			Admitted: admitted, DryRun: w.attrs.DryRun, Findings: findings,
		})
	}
}

// knownQuotaFree reports whether the namespace's last planned quota state holds no quota.
// It may be stale: a batch that finds quotas prepares the writes that skipped Prepare.
func (s *Store) knownQuotaFree(ns string) bool {
	sh := s.shard(ns)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	q := sh.queues[ns]
	return q != nil && q.state != nil && len(q.state.quotas) == 0
}

// passLead hands the lead to the next waiter, or releases it. Called with sh.mu held.
func passLead(q *nsQueue) {
	if len(q.waiting) > 0 {
		q.waiting[0].lead <- struct{}{}
	} else {
		q.leading = false
	}
}

// lead plans one batch from the head of the queue, passes the lead on, and commits it.
func (s *Store) lead(sh *queueShard, ns string, q *nsQueue) {
	sh.mu.Lock()
	// At most maxPipeline batches commit at once; meanwhile the queue grows into the next batch.
	for q.inflight >= maxPipeline {
		q.idle.Wait()
	}
	batch := takeBatch(q)
	if len(batch) == 0 {
		passLead(q)
		sh.mu.Unlock()
		return
	}
	solo := isQuotaWrite(batch[0].w) || q.bound
	// 1. Quota writes, batches of namespaces under cluster quotas, and batches without a
	// known state, wait for the pipeline to drain.
	if solo || q.state == nil {
		for q.inflight > 0 {
			q.idle.Wait()
		}
	}
	if solo {
		q.state, q.gen = nil, q.gen+1
		cached := q.boundState
		sh.mu.Unlock()
		bound, keep := s.commitSolo(ns, batch, cached)
		sh.mu.Lock()
		q.bound, q.boundState = bound, keep
		passLead(q)
		sh.mu.Unlock()
		return
	}
	st, gen, prev := q.state, q.gen, q.last
	sh.mu.Unlock()

	// 2. Plan against the state the previous batch leaves (or read it).
	mine := &batchDone{sent: make(chan struct{}), done: make(chan struct{})}
	live := s.dropCancelled(batch)
	var plan *batchPlan
	var err error
	if len(live) > 0 {
		if st == nil {
			ctx, cancel := batchContext(live)
			st, err = s.readState(ctx, ns, retried(live))
			cancel()
			if err == nil && len(st.crqs) > 0 {
				// Under cluster quotas: solo (the pipeline is drained, as st was unknown).
				sh.mu.Lock()
				q.state, q.gen = nil, q.gen+1
				sh.mu.Unlock()
				bound, keep := s.commitSolo(ns, live, st)
				sh.mu.Lock()
				q.bound, q.boundState = bound, keep
				passLead(q)
				sh.mu.Unlock()
				close(mine.sent)
				close(mine.done)
				return
			}
		}
		if err == nil {
			// Planning a pipelined batch reads nothing (quota writes are committed solo).
			plan, err = s.plan(context.WithoutCancel(live[0].ctx), ns, live, st, mine)
		}
	}
	sh.mu.Lock()
	switch {
	case err != nil || plan == nil:
		q.state, q.gen = nil, q.gen+1
	case gen == q.gen:
		q.state = plan.next
	}
	q.inflight++
	q.last = mine
	passLead(q)
	sh.mu.Unlock()

	// 3. Commit off the lead, then settle in order with the previous batch.
	ok, retry := s.finishBatch(live, plan, err, prev, mine)
	mine.ok = ok
	close(mine.done)
	conflictBackoff(retry)
	sh.mu.Lock()
	if !ok {
		q.state, q.gen = nil, q.gen+1
	}
	if len(retry) > 0 {
		q.waiting = append(retry, q.waiting...)
		if !q.leading {
			q.leading = true
			q.waiting[0].lead <- struct{}{}
		}
	}
	q.inflight--
	q.idle.Broadcast()
	sh.mu.Unlock()
}

// batchContext is the context of a batch's storage calls: one client going away must not
// fail the other writes of its batch, so it carries the first request's values but not its
// cancellation, and ends after batchTimeout.
func batchContext(live []*pending) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(live[0].ctx), batchTimeout)
}

// settle hands a write its outcome and records the quota decision once per write.
func (s *Store) settle(p *pending, rev int64, err error) {
	p.rev, p.err = rev, err
	if p.judged && s.cfg.ObserveQuota != nil && !errors.Is(err, errObjectChanged) {
		s.cfg.ObserveQuota(err)
	}
	close(p.done)
}

// dropCancelled settles writes whose requests ended and returns the others.
func (s *Store) dropCancelled(batch []*pending) []*pending {
	live := batch[:0:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			s.settle(p, 0, internalError(err))
			continue
		}
		live = append(live, p)
	}
	return live
}

// finishBatch commits a planned batch and settles its writes. It reports whether the batch
// committed (so the next batch's assumptions hold) and which writes must be evaluated again.
func (s *Store) finishBatch(live []*pending, plan *batchPlan, planErr error, prev, mine *batchDone) (ok bool, retry []*pending) {
	var sentOnce sync.Once
	markSent := func() {
		if mine != nil {
			sentOnce.Do(func() { close(mine.sent) })
		}
	}
	defer markSent()
	if len(live) == 0 {
		if prev != nil {
			<-prev.done
			return prev.ok, nil
		}
		return true, nil
	}
	if planErr != nil {
		for _, p := range live {
			s.settle(p, 0, planErr)
		}
		return false, nil
	}
	// The deadline of the batch's own storage calls; a pipelined transaction's request
	// gets its own (runCombined).
	ctx := context.WithoutCancel(live[0].ctx)
	if !plan.pipelined {
		var cancel context.CancelFunc
		ctx, cancel = batchContext(live)
		defer cancel()
	}
	var rev int64
	// The transaction also runs when it writes nothing but must confirm the quota state that
	// refusals and dry runs were judged on (then it only compares).
	if plan.included > 0 || plan.validate {
		if prev != nil {
			<-prev.sent
		}
		plan.resolveGuards()
		txn := plan.txn
		if plan.included == 0 {
			txn.Ops = nil
		}
		var r storage.TxnResult
		var err error
		if plan.pipelined {
			r, err = s.submitTxn(ctx, txn)
		} else {
			r, err = s.cfg.Storage.Txn(ctx, txn)
		}
		if err == nil && mine != nil {
			mine.rev.Store(r.Revision)
		}
		markSent()
		switch {
		case err == nil:
			rev = r.Revision
			plan.committedRev = rev
			if s.cfg.ObserveWrites != nil && plan.included > 0 {
				s.cfg.ObserveWrites(plan.included)
			}
		case errors.Is(err, storage.ErrTooLarge) && len(live) > 1:
			// Too big together: evaluate and commit them again, each in a batch of its own.
			for _, p := range live {
				p.alone = true
			}
			return false, s.countRetries(live)
		case errors.Is(err, storage.ErrConflict):
			if prev != nil {
				<-prev.done
			}
			cctx, cancel := batchContext(live)
			defer cancel()
			return false, s.sortConflict(cctx, live)
		default:
			err = internalError(err)
			for _, p := range live {
				s.settle(p, 0, err)
			}
			return false, nil
		}
	}
	for i, p := range live {
		if plan.results[i] != nil || p.w.attrs.DryRun {
			s.settle(p, 0, plan.results[i])
		} else {
			s.settle(p, rev, nil)
		}
	}
	return true, nil
}

// sortConflict settles the writes whose own object changed and returns the others for
// another evaluation.
func (s *Store) sortConflict(ctx context.Context, live []*pending) []*pending {
	var again []*pending
	for _, p := range live {
		cur, err := s.cfg.Storage.Get(ctx, p.w.key)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			if p.w.guard != 0 {
				s.settle(p, 0, errObjectChanged)
				continue
			}
		case err != nil:
			s.settle(p, 0, internalError(err))
			continue
		case cur.ModRevision != p.w.guard && p.w.redo == nil:
			s.settle(p, 0, errObjectChanged)
			continue
		}
		// A value the write allocates went to another write.
		if key, err := s.takenAllocation(ctx, p.w); err != nil || key != "" {
			if err == nil {
				err = errAllocated{key: key}
			}
			s.settle(p, 0, err)
			continue
		}
		again = append(again, p)
	}
	return s.countRetries(again)
}

// takenAllocation returns the first allocation key the write guards as free that exists.
func (s *Store) takenAllocation(ctx context.Context, w *write) (string, error) {
	for _, c := range w.extraCmps {
		_, err := s.cfg.Storage.Get(ctx, c.Key)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return "", internalError(err)
		}
		return c.Key, nil
	}
	return "", nil
}

// conflictBackoffBase and conflictBackoffMax shape conflictBackoff: a write's k-th retry
// after its first waits a random time below conflictBackoffBase·2^(k-1), at most
// conflictBackoffMax.
const (
	conflictBackoffBase = time.Millisecond
	conflictBackoffMax  = 256 * time.Millisecond
)

// conflictBackoff waits before writes are evaluated again after failing a guard more than
// once. A guard fails again and again when other writers commit to the same quotas between
// this batch's read and its transaction: other replicas group-committing to the same
// namespace, each on its own etcd member. Retrying at once collides again; a random,
// growing wait (as Ethernet's) lets one writer through at a time, so no write runs out of
// attempts under contention across replicas. The wait ends early when the first write's
// request ends. It does not hold the shard's lock; the namespace's pipeline waits, which
// is the point.
func conflictBackoff(retry []*pending) {
	most := 0
	for _, p := range retry {
		most = max(most, p.attempts)
	}
	if most < 2 {
		return
	}
	limit := conflictBackoffBase << min(most-2, 8)
	limit = min(limit, conflictBackoffMax)
	t := time.NewTimer(rand.N(limit) + 1)
	defer t.Stop()
	select {
	case <-t.C:
	case <-retry[0].ctx.Done():
	}
}

// countRetries returns the writes that may be tried again, refusing those out of attempts.
func (s *Store) countRetries(ps []*pending) []*pending {
	out := ps[:0:0]
	for _, p := range ps {
		p.attempts++
		if p.attempts >= s.cfg.MaxRetries {
			s.cfg.Logger.Warn("write gave up after conflicts", "key", p.w.key)
			s.settle(p, 0, apierrors.NewConflict(p.w.res.GroupResource(), p.w.attrs.Name, fmt.Errorf("too many concurrent changes, please try again")))
			continue
		}
		out = append(out, p)
	}
	return out
}

// commitSolo commits a batch without pipelining: state read from storage at each attempt,
// quotas guarded by mod revision, the whole quota prefix and (for quota writes) the usage
// epoch guarded at the read revision.
//
// cached, when set, is the state a joined batch of the namespace left (see keep below) and
// is used instead of reading on the first attempt. keep is the state the next batch may use:
// a namespace without ResourceQuotas whose batch was joined under a cluster quota leaves its
// state as it was read (nothing under its quota prefix changed, so the guard at its read
// revision still holds, and a quota created since fails it).
func (s *Store) commitSolo(ns string, batch []*pending, cached *nsState) (bound bool, keep *nsState) {
	live := batch
	for len(live) > 0 {
		live = s.dropCancelled(live)
		if len(live) == 0 {
			return bound, nil
		}
		ctx, cancel := batchContext(live)
		st, err := cached, error(nil)
		if st == nil || retried(live) {
			st, err = s.readState(ctx, ns, retried(live))
		}
		cached = nil
		var plan *batchPlan
		var slots []*crqSlot
		if err == nil {
			bound = len(st.crqs) > 0
			live = s.redoMoved(live, st)
			if len(live) == 0 {
				cancel()
				return bound, nil
			}
			if len(st.crqs) == 1 && joinable(live) {
				// One cluster quota: joined with other namespaces' batches.
				cancel()
				ok, retry := s.joinSlot(st.crqs[0], ns, live, st)
				if ok {
					if len(st.quotas) == 0 {
						keep = &nsState{setRev: st.setRev, readRev: st.readRev, enc: st.enc, crqSetRev: st.crqSetRev, crqs: st.crqs}
					}
					return bound, keep
				}
				live = retry
				continue
			}
			// Cluster quotas are held from their read until the transaction returned.
			slots = s.lockSlots(st.crqs)
			err = s.holdClusterQuotas(ctx, st, slots)
			if err == nil {
				plan, err = s.plan(ctx, ns, live, st, nil)
			}
		}
		cancel()
		ok, retry := s.finishBatch(live, plan, err, nil, nil)
		settleSlots(slots, plan, ok)
		unlockSlots(slots)
		if ok {
			return bound, nil
		}
		live = retry
		conflictBackoff(live)
	}
	return bound, nil
}

// holdClusterQuotas sets st.held from the slots of st.crqs (locked, in name order).
func (s *Store) holdClusterQuotas(ctx context.Context, st *nsState, slots []*crqSlot) error {
	names := slices.Clone(st.crqs)
	sort.Strings(names)
	names = slices.Compact(names)
	st.held = nil
	for i, name := range names {
		h, err := s.readSlot(ctx, slots[i], name)
		if err != nil {
			return err
		}
		if h != nil {
			st.held = append(st.held, h)
		}
	}
	return nil
}

// settleSlots records in the slots what a committed plan wrote, or forgets them.
func settleSlots(slots []*crqSlot, plan *batchPlan, ok bool) {
	if !ok || plan == nil {
		for _, sl := range slots {
			sl.rev = 0
		}
		return
	}
	rev := plan.committedRev
	for _, cw := range plan.crqWrites {
		if rev == 0 {
			cw.slot.rev = 0
			continue
		}
		cw.slot.value, cw.slot.rev, cw.slot.obj = cw.value, rev, cw.obj
	}
}

// redoMoved prepares again, on the quota as st holds it, each write with a redo whose quota
// is no longer stored at the revision it was prepared on (see write.redo), and settles
// those that fail (errObjectChanged: the quota is gone, or the write became a no-op).
func (s *Store) redoMoved(live []*pending, st *nsState) []*pending {
	out := live[:0:0]
	for _, p := range live {
		w := p.w
		if w.redo == nil || w.guard == 0 {
			out = append(out, p)
			continue
		}
		j := slices.IndexFunc(st.quotas, func(q corev1.ResourceQuota) bool { return q.Name == w.attrs.Name })
		if j < 0 {
			s.settle(p, 0, errObjectChanged)
			continue
		}
		if st.stored[j].rev == w.guard {
			out = append(out, p)
			continue
		}
		nw, err := w.redo(st.quotas[j].DeepCopy(), st.stored[j].rev)
		if err != nil {
			s.settle(p, 0, err)
			continue
		}
		// The quota decision is prepared again by planBatch, on the new object.
		w.obj, w.attrs, w.guard = nw.obj, nw.attrs, nw.guard
		w.quota, w.quotaErr, w.prepared = nil, nil, false
		out = append(out, p)
	}
	return out
}

// retried reports whether a write of the batch already failed a guard.
func retried(live []*pending) bool {
	for _, p := range live {
		if p.attempts > 0 {
			return true
		}
	}
	return false
}

// readState reads a namespace's quotas and its quota-set key at one revision. A
// serializable read is enough the first time, as every use is guarded by a transaction
// compare; after a failed guard the read is linearizable, so a lagging etcd member cannot
// make the retries fail again. The reads after the first are at the first's revision: when
// etcd is compacted past it in between (a compaction at the current revision), the
// state is read again at a newer one, a bounded number of times, rather than failing the
// write.
func (s *Store) readState(ctx context.Context, ns string, linearizable bool) (*nsState, error) {
	for attempt := 0; ; attempt++ {
		st, err := s.readStateOnce(ctx, ns, linearizable)
		if errors.Is(err, storage.ErrCompacted) && attempt < compactedRereads {
			continue
		}
		if err != nil {
			return nil, internalError(err)
		}
		return st, nil
	}
}

// compactedRereads bounds how often readState reads again after a compaction overtook it.
const compactedRereads = 3

// readStateOnce is one attempt of readState; its errors are storage's, unwrapped.
func (s *Store) readStateOnce(ctx context.Context, ns string, linearizable bool) (*nsState, error) {
	qres := s.cfg.Catalogue.Get(quotaGVR)
	lr, err := s.cfg.Storage.List(ctx, qres.KeyPrefix(ns), storage.ListOptions{Serializable: !linearizable})
	if err != nil {
		return nil, err
	}
	st, err := decodeState(qres, lr.KVs, lr.Revision)
	if err != nil {
		return nil, err
	}
	set, err := s.cfg.Storage.List(ctx, QuotaSetKey(ns), storage.ListOptions{Revision: lr.Revision, Serializable: true})
	if err != nil {
		return nil, err
	}
	for _, kv := range set.KVs {
		if kv.Key == QuotaSetKey(ns) {
			st.setRev = kv.ModRevision
		}
	}
	if err := s.readClusterBinding(ctx, ns, st); err != nil {
		return nil, err
	}
	return st, nil
}

// plan plans a batch on st (planBatch) with the store's quota accounting: the namespace's
// objects are listed at st.readRev only when a quota write's status is computed. It then
// records which writes were judged and offers the quotas the transaction writes to the
// watch hub. mine is the batch when pipelined (nil: solo).
func (s *Store) plan(ctx context.Context, ns string, live []*pending, st *nsState, mine *batchDone) (*batchPlan, error) {
	qres := s.cfg.Catalogue.Get(quotaGVR)
	writes := make([]*write, len(live))
	for i, p := range live {
		writes[i] = p.w
	}
	plan, err := planBatch(planInput{ns: ns, state: st, writes: writes, mine: mine, quota: s.cfg.Quota, quotaRes: qres,
		objects: s.objectsAt(ctx, ns, st.readRev)})
	for i, judged := range plan.judged {
		if judged {
			live[i].judged = true
		}
	}
	if err != nil {
		return nil, err
	}
	for i := range plan.offers {
		o := &plan.offers[i]
		s.offer(qres, o.key, o.value, func() runtime.Object { cp := o.quota; return &cp })
	}
	return plan, nil
}

// commitClusterScoped writes a cluster-scoped object: no quota applies.
func (s *Store) commitClusterScoped(ctx context.Context, w *write) (int64, error) {
	if isClusterQuotaWrite(w) {
		return s.commitClusterQuota(ctx, w)
	}
	if w.attrs.DryRun {
		return 0, nil
	}
	txn := storage.Txn{Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: w.key, Revision: w.guard}}}
	if w.obj != nil {
		b, err := encodeStored(w.res, w.obj)
		if err != nil {
			return 0, internalError(err)
		}
		txn.Ops = []storage.Op{{Type: storage.OpPut, Key: w.key, Value: b}}
		w.value, w.size = b, len(b)
	} else {
		txn.Ops = []storage.Op{{Type: storage.OpDelete, Key: w.key}}
		if w.res.GroupResource() == namespacesGR {
			// A namespace leaves nothing behind: its quota bookkeeping keys go with it.
			name := w.attrs.Name
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpDelete, Key: QuotaSetKey(name)}, storage.Op{Type: storage.OpDelete, Key: EpochKey(name)})
			epochs, err := s.cfg.Storage.List(ctx, EpochKey(name), storage.ListOptions{KeysOnly: true})
			if err != nil {
				return 0, internalError(err)
			}
			for _, kv := range epochs.KVs {
				txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpDelete, Key: kv.Key})
			}
		}
	}
	if w.res.GroupResource() == namespacesGR {
		return s.commitNamespace(ctx, w, txn)
	}
	r, err := s.cfg.Storage.Txn(ctx, txn)
	if errors.Is(err, storage.ErrConflict) {
		return 0, errObjectChanged
	}
	if err != nil {
		return 0, internalError(err)
	}
	return r.Revision, nil
}
