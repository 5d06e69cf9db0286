package commit

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/storage"
)

// Group commit with pipelining (design.md §3).
//
// Writes waiting on the same namespace are evaluated in arrival order against the namespace's
// quotas and committed together in ONE etcd transaction: every object with its own guard,
// each touched quota once, the namespace's usage epoch. The first waiter of a namespace leads:
// it plans one batch and only then waits for etcd; the writes arriving meanwhile queue, and
// whoever settles the batch plans them into the next one at once (maxPipeline), without
// waiting for it: a batch planned after its planner's own write settled commits on a
// goroutine of its own, which goes on while writes keep coming (lead). A pipelined batch is
// planned against the quota state the previous batch left, without reading it back, and
// guarded by exactly that: each touched quota must be stored as the plan assumed, and the
// namespace's quota set (created, deleted or edited quotas bump its key) must be the one
// read. A quota the previous batch writes is
// guarded by the revision that batch committed at, or, if its transaction has not returned
// by the time this one is sent, by the bytes it writes (ValueEquals). If
// anything else changed, the guard fails, the state is read again and the writes are
// evaluated again: a quota is never charged beyond what its stored status allows, under any
// interleaving, across any number of replicas. The usage epoch is put unless the
// transaction puts a quota (recomputations guard on both). Every transaction also guards
// the namespace's turn, which a replica whose writes keep losing to other replicas claims
// (turn.go): its batch is then committed solo, and the other replicas wait for it.
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
// data without IO (plan.go).

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

// Config wires an Engine.
type Config struct {
	Storage storage.Store
	Env     Env
	// Quota is nil when the ResourceQuota plugin is disabled.
	Quota  Quota
	Logger *slog.Logger
	Observers
	// MaxRetries bounds conflict retries of one write (default 128: a write contended by
	// other replicas takes its namespace's turn after turnAfter of them, and lands long
	// before it runs out; its request's deadline bounds it too).
	MaxRetries int
	// Replica is this replica's identity, written in the namespace turns it claims (turn.go):
	// a replica restarted with the same identity takes over at once the turns its
	// predecessor left. Default: a random one.
	Replica string
	// Clock measures how long another replica's turn has stood (default: the real clock).
	Clock clock.Clock
	// ClusterQuotaNoRows stores cluster quotas' entries in OpenShift's shape, not as rows
	// (codec.ClusterQuotaEncoder.NoRows): for replicas of an earlier version during an
	// upgrade.
	ClusterQuotaNoRows bool
}

// Observers are told of the engine's outcomes; each may be nil.
type Observers struct {
	// ObserveQuota, when set, is told the final outcome of every write evaluated against at
	// least one quota: nil (admitted), the refusal, or another error.
	ObserveQuota func(err error)
	// QuotaFindings, when set, is told the quota findings of every settled write that has
	// any (metrics, Events), after the client got its Warning headers and the audit event
	// its annotation (deliverFindings). It runs in the writer's goroutine.
	QuotaFindings func(ctx context.Context, r QuotaReport)
	// ObserveRequest, when set, is told how many transactions each etcd request of the
	// combiner carried.
	ObserveRequest func(txns int)
	// ObserveWrites, when set, is told how many writes each committed group-commit
	// transaction of a namespace carried (its batch size).
	ObserveWrites func(writes int)
	// ObserveQuotaLatency, when set, is told for every namespaced write the quota
	// accounting prepared how long its quota step took, from the evaluation until the write
	// was settled (the guarded transaction that charges it included, as upstream's
	// ResourceQuota admission includes its status write), and whether quota refused it.
	ObserveQuotaLatency func(op admission.Operation, elapsed time.Duration, rejected bool)
}

// Engine commits writes with their quota charges: the namespaces' queues and pipelines,
// the combiner, and the cluster quotas' slots.
type Engine struct {
	cfg      Config
	env      Env
	queues   [64]queueShard
	combiner combiner
	crq      crqSlots
	// turnValue is the value of the turns this replica claims.
	turnValue []byte
}

// New returns an Engine.
func New(cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 128
	}
	if cfg.Replica == "" {
		cfg.Replica = string(uuid.NewUUID())
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Engine{cfg: cfg, env: cfg.Env, turnValue: claimValue(cfg.Replica), crq: crqSlots{noRows: cfg.ClusterQuotaNoRows}}
}

// pending is one write waiting in its namespace's queue.
type pending struct {
	ctx      context.Context
	w        *Write
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
	// turn is the mod revision of this replica's claim on the namespace's turn (0: none
	// held); seenTurn is another replica's turn as first read, at seenAt (turn.go). Used
	// only by the namespace's leader.
	turn     int64
	seenTurn int64
	seenAt   time.Time
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

func (e *Engine) shard(ns string) *queueShard {
	h := fnv.New32a()
	h.Write([]byte(ns))
	return &e.queues[h.Sum32()%uint32(len(e.queues))]
}

// Commit evaluates quota for one write and commits the object with every quota change in
// one guarded transaction, batched with the other writes waiting on its namespace. The
// write's Value is its stored form, except for ResourceQuotas and cluster quotas (encoded
// once their status is computed) and dry runs.
// ErrObjectChanged reports that the object's own guard failed.
func (e *Engine) Commit(ctx context.Context, w *Write) (int64, error) {
	var start time.Time
	if e.cfg.ObserveQuotaLatency != nil {
		start = time.Now()
	}
	ns := w.Attrs.Namespace
	if !w.Namespaced || ns == "" {
		return e.commitClusterScoped(ctx, w)
	}
	if e.cfg.Quota != nil && (e.cfg.Quota.Limits() || !e.knownQuotaFree(ns)) {
		w.Decision, w.DecisionErr = e.cfg.Quota.Prepare(w.Attrs)
		w.Prepared = true
	}
	p := &pending{ctx: ctx, w: w, lead: make(chan struct{}, 1), done: make(chan struct{})}
	sh := e.shard(ns)
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
			e.lead(sh, ns, q, p)
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
	if w.Tentative && p.err != nil {
		return p.rev, p.err // tried again on what etcd holds, which reports
	}
	if e.cfg.ObserveQuotaLatency != nil && (w.Prepared || p.judged) && !errors.Is(p.err, ErrObjectChanged) {
		e.cfg.ObserveQuotaLatency(w.Attrs.Operation, time.Since(start), p.judged && p.err != nil && apierrors.IsForbidden(p.err))
	}
	e.deliverFindings(ctx, w, p.err)
	return p.rev, p.err
}

// deliverFindings gives a settled write's quota findings (of the last check, the one its
// commit or refusal was planned on) to their audiences: for an admitted write (a dry run
// too: it gets the warnings it would get), each Warn-mode finding and each crossed
// threshold becomes a Warning header, and the Audit-mode findings become the request's
// audit annotation quota.AuditAnnotation, with no warning; then Config.QuotaFindings is
// told (metrics, Events), for refusals by an Enforce quota too.
func (e *Engine) deliverFindings(ctx context.Context, w *Write, err error) {
	f, ok := w.Decision.(QuotaFinder)
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
	if e.cfg.QuotaFindings != nil {
		e.cfg.QuotaFindings(ctx, QuotaReport{
			Namespace: w.Attrs.Namespace, Resource: w.GR, Name: w.Attrs.Name,
			Admitted: admitted, DryRun: w.Attrs.DryRun, Findings: findings,
		})
	}
}

// knownQuotaFree reports whether the namespace's last planned quota state holds no quota.
// It may be stale: a batch that finds quotas prepares the writes that skipped Prepare.
func (e *Engine) knownQuotaFree(ns string) bool {
	sh := e.shard(ns)
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

// leadJob is a pipelined batch planned and not yet settled.
type leadJob struct {
	sh         *queueShard
	q          *nsQueue
	live       []*pending
	plan       *batchPlan
	err        error
	prev, mine *batchDone
}

// lead is the namespace's lead handed to own's writer: it plans a batch, and commits and
// settles it in this goroutine if own's write is in it. Whoever settles a batch while
// writes wait and no one else leads plans the next one at once (finish), so the pipeline
// never waits for a woken writer to be scheduled. No request waits for other requests'
// batches: once own's write is settled, a batch planned after it is committed by a
// goroutine of its own (pump), which goes on with the next batches while writes keep coming,
// and so is the next batch whose planning reads or commits (a solo batch, a state to read).
func (e *Engine) lead(sh *queueShard, ns string, q *nsQueue, own *pending) {
	for j := e.startBatch(sh, ns, q); j != nil; j = e.startBatch(sh, ns, q) {
		if !slices.Contains(j.live, own) {
			go e.pump(sh, ns, q, j)
			return
		}
		if !e.finish(j) {
			return
		}
		if settled(own) && !plansInMemory(sh, q) {
			go e.pump(sh, ns, q, nil)
			return
		}
	}
}

// pump commits and settles a batch (nil: plans one first, holding the lead), and the
// batches it plans after it while writes keep waiting.
func (e *Engine) pump(sh *queueShard, ns string, q *nsQueue, j *leadJob) {
	for {
		if j == nil {
			if j = e.startBatch(sh, ns, q); j == nil {
				return
			}
		}
		if !e.finish(j) {
			return
		}
		j = nil
	}
}

// settled reports whether a write has its outcome.
func settled(p *pending) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// plansInMemory reports whether the namespace's next batch is planned on the state the last
// one left, reading and committing nothing (startBatch).
func plansInMemory(sh *queueShard, q *nsQueue) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return q.state != nil && !q.bound && len(q.waiting) > 0 && !isQuotaWrite(q.waiting[0].w)
}

// startBatch plans one batch from the head of the queue and passes the lead on; it returns
// the batch to commit, or nil when there is none (solo batches are committed before it
// returns). While maxPipeline batches are committing it plans nothing and releases the lead:
// the queue grows into the next batch, which the writer of the last batch to settle plans
// (finish). Called holding the lead.
func (e *Engine) startBatch(sh *queueShard, ns string, q *nsQueue) *leadJob {
	sh.mu.Lock()
	if q.inflight >= maxPipeline {
		q.leading = false
		sh.mu.Unlock()
		return nil
	}
	batch := takeBatch(q)
	if len(batch) == 0 {
		passLead(q)
		sh.mu.Unlock()
		return nil
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
		// The state a joined batch kept serves the next batch's first attempt only.
		cached := q.boundState
		if retried(batch) {
			cached = nil
		}
		e.leadSolo(sh, ns, q, batch, cached)
		return nil
	}
	st, gen, prev := q.state, q.gen, q.last
	sh.mu.Unlock()

	// 2. Plan against the state the previous batch leaves (or read it, taking turns with
	// other replicas: turn.go).
	mine := &batchDone{sent: make(chan struct{}), done: make(chan struct{})}
	live := e.dropCancelled(batch)
	var plan *batchPlan
	var err error
	if len(live) > 0 && st == nil {
		st, live, err = e.batchState(ns, q, live)
		switch {
		case err != nil || len(live) == 0:
			e.releaseTurn(ns, q) // claimed for writes that settled without it
		case len(st.crqs) > 0 || st.turn.rev != 0:
			// Under cluster quotas, or holding the namespace's turn: solo (the pipeline is
			// drained, as st was unknown).
			sh.mu.Lock()
			e.leadSolo(sh, ns, q, live, st)
			close(mine.sent)
			close(mine.done)
			return nil
		}
	}
	if err == nil && len(live) > 0 {
		// Planning a pipelined batch reads nothing (quota writes are committed solo).
		plan, err = e.plan(context.WithoutCancel(live[0].ctx), ns, live, st, mine)
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
	if q.inflight < maxPipeline {
		passLead(q)
	} else {
		q.leading = false // the writer settling a batch plans the next (finish)
	}
	sh.mu.Unlock()
	return &leadJob{sh: sh, q: q, live: live, plan: plan, err: err, prev: prev, mine: mine}
}

// finish commits a planned batch off the lead and settles it in order with the previous
// batch. If writes are then waiting and no one leads, it takes the lead and reports so: the
// caller plans the next batch (startBatch).
func (e *Engine) finish(j *leadJob) bool {
	sh, q := j.sh, j.q
	// The writes to evaluate again go first, without waiting: after turnAfter failures
	// they take the namespace's turn, or wait for another replica's.
	ok, retry := e.finishBatch(j.live, j.plan, j.err, j.prev, j.mine)
	j.mine.ok = ok
	close(j.mine.done)
	sh.mu.Lock()
	if !ok {
		q.state, q.gen = nil, q.gen+1
	}
	if len(retry) > 0 {
		q.waiting = append(retry, q.waiting...)
	}
	q.inflight--
	q.idle.Broadcast()
	// Writes waiting with no leader are the pipeline's: the batches committing then
	// released the lead, and the first of them to settle with room in the pipeline plans.
	if q.leading || len(q.waiting) == 0 || q.inflight >= maxPipeline {
		sh.mu.Unlock()
		return false
	}
	q.leading = true
	sh.mu.Unlock()
	return true
}

// leadSolo commits a batch solo (commitSolo) on cached (nil: read) while holding the
// namespace's lead, records whether the namespace is bound to cluster quotas and the state
// its next batch may use, and passes the lead on. Called with sh.mu held; returns with it
// released.
func (e *Engine) leadSolo(sh *queueShard, ns string, q *nsQueue, batch []*pending, cached *nsState) {
	q.state, q.gen = nil, q.gen+1
	sh.mu.Unlock()
	bound, keep := e.commitSolo(ns, q, batch, cached)
	sh.mu.Lock()
	q.bound, q.boundState = bound, keep
	passLead(q)
	sh.mu.Unlock()
}

// batchContext is the context of a batch's storage calls: one client going away must not
// fail the other writes of its batch, so it carries the first request's values but not its
// cancellation, and ends after batchTimeout.
func batchContext(live []*pending) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(live[0].ctx), batchTimeout)
}

// settle hands a write its outcome and records the quota decision once per write.
func (e *Engine) settle(p *pending, rev int64, err error) {
	p.rev, p.err = rev, err
	if p.judged && e.cfg.ObserveQuota != nil && !errors.Is(err, ErrObjectChanged) {
		e.cfg.ObserveQuota(err)
	}
	close(p.done)
}

// dropCancelled settles writes whose requests ended and returns the others.
func (e *Engine) dropCancelled(batch []*pending) []*pending {
	live := batch[:0:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			e.settle(p, 0, InternalError(err))
			continue
		}
		live = append(live, p)
	}
	return live
}

// finishBatch commits a planned batch and settles its writes. It reports whether the batch
// committed (so the next batch's assumptions hold) and which writes must be evaluated again.
func (e *Engine) finishBatch(live []*pending, plan *batchPlan, planErr error, prev, mine *batchDone) (ok bool, retry []*pending) {
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
			e.settle(p, 0, planErr)
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
	// refusals and dry runs were judged on (then it only compares, and releases the
	// namespace's turn if it holds it).
	if plan.included > 0 || plan.validate || plan.releases() {
		if prev != nil {
			<-prev.sent
		}
		plan.resolveGuards()
		txn := plan.toSend()
		var r storage.TxnResult
		var err error
		if plan.pipelined {
			r, err = e.submitTxn(ctx, txn)
		} else {
			r, err = e.cfg.Storage.Txn(ctx, txn)
		}
		if err == nil && mine != nil {
			mine.rev.Store(r.Revision)
		}
		markSent()
		switch {
		case err == nil:
			rev = r.Revision
			plan.committedRev = rev
			if e.cfg.ObserveWrites != nil && plan.included > 0 {
				e.cfg.ObserveWrites(plan.included)
			}
		case errors.Is(err, storage.ErrTooLarge) && len(live) > 1:
			// Too big together: evaluate and commit them again, each in a batch of its own.
			for _, p := range live {
				p.alone = true
			}
			return false, e.countRetries(live)
		case errors.Is(err, storage.ErrConflict):
			if prev != nil {
				<-prev.done
			}
			cctx, cancel := batchContext(live)
			defer cancel()
			return false, e.sortConflict(cctx, live)
		default:
			err = InternalError(err)
			for _, p := range live {
				e.settle(p, 0, err)
			}
			return false, nil
		}
	}
	for i, p := range live {
		if plan.results[i] != nil || p.w.Attrs.DryRun {
			e.settle(p, 0, plan.results[i])
		} else {
			e.settle(p, rev, nil)
		}
	}
	return true, nil
}

// sortConflict settles the writes whose own object changed and returns the others for
// another evaluation.
func (e *Engine) sortConflict(ctx context.Context, live []*pending) []*pending {
	var again []*pending
	for _, p := range live {
		cur, err := e.cfg.Storage.Get(ctx, p.w.Key)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			if p.w.Guard != 0 {
				e.settle(p, 0, ErrObjectChanged)
				continue
			}
		case err != nil:
			e.settle(p, 0, InternalError(err))
			continue
		case cur.ModRevision != p.w.Guard && p.w.Redo == nil:
			e.settle(p, 0, ErrObjectChanged)
			continue
		}
		// A value the write allocates went to another write.
		if key, err := e.takenAllocation(ctx, p.w); err != nil || key != "" {
			if err == nil {
				err = ErrAllocated{Key: key}
			}
			e.settle(p, 0, err)
			continue
		}
		again = append(again, p)
	}
	return e.countRetries(again)
}

// takenAllocation returns the first allocation key the write guards as free that exists.
func (e *Engine) takenAllocation(ctx context.Context, w *Write) (string, error) {
	for _, c := range w.ExtraCmps {
		_, err := e.cfg.Storage.Get(ctx, c.Key)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return "", InternalError(err)
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

// conflictBackoff waits before writes of a namespace bound to cluster quotas are evaluated
// again after failing a guard more than once. Replicas contending for one namespace take
// turns (turn.go), but a cluster quota is also written by the batches of the other
// namespaces it selects, which take no turn of this one: retrying at once against their
// replicas collides again, and a random, growing wait (as Ethernet's) lets one writer
// through at a time, so no write runs out of attempts. The wait ends early when the first
// write's request ends. It does not hold the shard's lock; the namespace's lead waits,
// which is the point.
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
func (e *Engine) countRetries(ps []*pending) []*pending {
	out := ps[:0:0]
	for _, p := range ps {
		p.attempts++
		if p.attempts >= e.cfg.MaxRetries {
			e.cfg.Logger.Warn("write gave up after conflicts", "key", p.w.Key)
			e.settle(p, 0, apierrors.NewConflict(p.w.GR, p.w.Attrs.Name, fmt.Errorf("too many concurrent changes, please try again")))
			continue
		}
		out = append(out, p)
	}
	return out
}

// commitSolo commits a batch without pipelining: state read from storage at each attempt
// (taking turns with other replicas: turn.go), quotas guarded by mod revision, the whole
// quota prefix and (for quota writes) the usage epoch guarded at the read revision. It runs
// holding the namespace's lead, and so does a turn held: its transactions release the turn
// when they commit, and any other end of the batch releases it too.
//
// cached, when set, is used instead of reading on the first attempt: a state just read, or
// the state a joined batch of the namespace left (see keep below). keep is the state the
// next batch may use: a namespace without ResourceQuotas whose batch was joined under a
// cluster quota leaves its state as it was read (nothing under its quota prefix changed,
// so the guard at its read revision still holds, and a quota created since fails it).
func (e *Engine) commitSolo(ns string, q *nsQueue, batch []*pending, cached *nsState) (bound bool, keep *nsState) {
	defer e.releaseTurn(ns, q)
	live := batch
	for len(live) > 0 {
		live = e.dropCancelled(live)
		if len(live) == 0 {
			return bound, nil
		}
		st, err := cached, error(nil)
		if st == nil {
			if st, live, err = e.batchState(ns, q, live); err == nil && len(live) == 0 {
				return bound, nil
			}
		}
		cached = nil
		ctx, cancel := batchContext(live)
		var plan *batchPlan
		var slots []*crqSlot
		if err == nil {
			bound = len(st.crqs) > 0
			live = e.redoMoved(live, st)
			if len(live) == 0 {
				cancel()
				return bound, nil
			}
			if len(st.crqs) == 1 && joinable(live) {
				// One cluster quota: joined with other namespaces' batches.
				cancel()
				ok, retry := e.joinSlot(st.crqs[0], ns, live, st)
				if ok {
					q.turn = 0 // released by the transaction, if held
					if len(st.quotas) == 0 {
						keep = &nsState{setRev: st.setRev, readRev: st.readRev, enc: st.enc, crqSetRev: st.crqSetRev, crqs: st.crqs}
					}
					return bound, keep
				}
				live = retry
				continue
			}
			// Cluster quotas are held from their read until the transaction returned.
			slots = e.lockSlots(st.crqs)
			err = e.holdClusterQuotas(ctx, st, slots)
			if err == nil {
				plan, err = e.plan(ctx, ns, live, st, nil)
			}
		}
		cancel()
		ok, retry := e.finishBatch(live, plan, err, nil, nil)
		settleSlots(slots, plan, ok)
		unlockSlots(slots)
		if ok {
			q.turn = 0 // released by the transaction, if held
			return bound, nil
		}
		live = retry
		if bound {
			// Writes of other namespaces bound to the same cluster quotas (on other
			// replicas) take no turn of this namespace: wait at random.
			conflictBackoff(live)
		}
	}
	return bound, nil
}

// holdClusterQuotas sets st.held from the slots of st.crqs (locked, in name order).
func (e *Engine) holdClusterQuotas(ctx context.Context, st *nsState, slots []*crqSlot) error {
	names := slices.Clone(st.crqs)
	sort.Strings(names)
	names = slices.Compact(names)
	st.held = nil
	for i, name := range names {
		h, err := e.readSlot(ctx, slots[i], name)
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
// those that fail (ErrObjectChanged: the quota is gone, or the write became a no-op).
func (e *Engine) redoMoved(live []*pending, st *nsState) []*pending {
	out := live[:0:0]
	for _, p := range live {
		w := p.w
		if w.Redo == nil || w.Guard == 0 {
			out = append(out, p)
			continue
		}
		j := slices.IndexFunc(st.quotas, func(q corev1.ResourceQuota) bool { return q.Name == w.Attrs.Name })
		if j < 0 {
			e.settle(p, 0, ErrObjectChanged)
			continue
		}
		if st.stored[j].rev == w.Guard {
			out = append(out, p)
			continue
		}
		nw, err := w.Redo(st.quotas[j].DeepCopy(), st.stored[j].rev)
		if err != nil {
			e.settle(p, 0, err)
			continue
		}
		// The quota decision is prepared again by planBatch, on the new object.
		w.Obj, w.Attrs, w.Guard = nw.Obj, nw.Attrs, nw.Guard
		w.Decision, w.DecisionErr, w.Prepared = nil, nil, false
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

// readState reads a namespace's quotas, its quota-set key and its turn at one revision. A
// serializable read is enough the first time, as every use is guarded by a transaction
// compare; after a failed guard the read is linearizable, so a lagging etcd member cannot
// make the retries fail again. The reads after the first are at the first's revision: when
// etcd is compacted past it in between (a compaction at the current revision), the
// state is read again at a newer one, a bounded number of times, rather than failing the
// write.
func (e *Engine) readState(ctx context.Context, ns string, linearizable bool) (*nsState, error) {
	for attempt := 0; ; attempt++ {
		st, err := e.readStateOnce(ctx, ns, linearizable)
		if errors.Is(err, storage.ErrCompacted) && attempt < compactedRereads {
			continue
		}
		if err != nil {
			return nil, InternalError(err)
		}
		return st, nil
	}
}

// compactedRereads bounds how often readState reads again after a compaction overtook it.
const compactedRereads = 3

// readStateOnce is one attempt of readState; its errors are storage's, unwrapped.
func (e *Engine) readStateOnce(ctx context.Context, ns string, linearizable bool) (*nsState, error) {
	lr, err := e.cfg.Storage.List(ctx, e.env.KeyPrefix(quotaGR, ns), storage.ListOptions{Serializable: !linearizable})
	if err != nil {
		return nil, err
	}
	st, err := decodeState(e.env, lr.KVs, lr.Revision)
	if err != nil {
		return nil, err
	}
	set, err := e.cfg.Storage.List(ctx, QuotaSetKey(ns), storage.ListOptions{Revision: lr.Revision, Serializable: true})
	if err != nil {
		return nil, err
	}
	for _, kv := range set.KVs {
		switch kv.Key {
		case QuotaSetKey(ns):
			st.setRev = kv.ModRevision
		case TurnKey(ns):
			st.turn = decodeTurn(kv)
		}
	}
	if err := e.readClusterBinding(ctx, ns, st); err != nil {
		return nil, err
	}
	return st, nil
}

// plan plans a batch on st (planBatch) with the store's quota accounting: the namespace's
// objects are listed at st.readRev only when a quota write's status is computed. It then
// records which writes were judged and offers the quotas the transaction writes to the
// watch hub. mine is the batch when pipelined (nil: solo).
//
// A panic while planning (a bug) fails the batch's writes with an internal error, as a
// handler's panic fails its request, instead of stopping the process (a batch may be planned
// on a goroutine serving no request: lead) or leaving the namespace's queue without a leader.
func (e *Engine) plan(ctx context.Context, ns string, live []*pending, st *nsState, mine *batchDone) (plan *batchPlan, err error) {
	defer func() {
		if p := recover(); p != nil {
			e.cfg.Logger.Error("planning a batch panicked", "namespace", ns, "writes", len(live), "panic", p, "stack", string(debug.Stack()))
			plan, err = nil, InternalError(fmt.Errorf("planning the namespace's writes: %v", p))
		}
	}()
	writes := make([]*Write, len(live))
	for i, p := range live {
		writes[i] = p.w
	}
	plan, err = planBatch(planInput{ns: ns, state: st, writes: writes, mine: mine, quota: e.cfg.Quota, env: e.env,
		objects: e.objectsAt(ctx, ns, st.readRev)})
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
		e.env.Offer(quotaGR, o.key, o.value, func() runtime.Object { cp := o.quota; return &cp })
	}
	return plan, nil
}

// commitClusterScoped writes a cluster-scoped object: no quota applies.
func (e *Engine) commitClusterScoped(ctx context.Context, w *Write) (int64, error) {
	if isClusterQuotaWrite(w) {
		return e.commitClusterQuota(ctx, w)
	}
	if w.Attrs.DryRun {
		return 0, nil
	}
	txn := storage.Txn{Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: w.Key, Revision: w.Guard}}}
	if w.Obj != nil {
		txn.Ops = []storage.Op{{Type: storage.OpPut, Key: w.Key, Value: w.Value}}
	} else {
		txn.Ops = []storage.Op{{Type: storage.OpDelete, Key: w.Key}}
		if w.GR == namespacesGR {
			// A namespace leaves nothing behind: its quota bookkeeping keys go with it.
			name := w.Attrs.Name
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpDelete, Key: QuotaSetKey(name)}, storage.Op{Type: storage.OpDelete, Key: TurnKey(name)},
				storage.Op{Type: storage.OpDelete, Key: EpochKey(name)})
			epochs, err := e.cfg.Storage.List(ctx, EpochKey(name), storage.ListOptions{KeysOnly: true})
			if err != nil {
				return 0, InternalError(err)
			}
			for _, kv := range epochs.KVs {
				txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpDelete, Key: kv.Key})
			}
		}
	}
	if w.GR == namespacesGR {
		return e.commitNamespace(ctx, w, txn)
	}
	r, err := e.cfg.Storage.Txn(ctx, txn)
	if errors.Is(err, storage.ErrConflict) {
		return 0, ErrObjectChanged
	}
	if err != nil {
		return 0, InternalError(err)
	}
	return r.Revision, nil
}

// objectsAt lists a namespace's objects of a group-resource as stored at revision rev.
func (e *Engine) objectsAt(ctx context.Context, ns string, rev int64) func(schema.GroupResource) ([]runtime.Object, error) {
	return func(gr schema.GroupResource) ([]runtime.Object, error) { return e.env.List(ctx, gr, ns, rev) }
}
