package registry

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/storage"
)

// Group commit (design.md §3). Writes waiting on the same namespace are evaluated in arrival
// order against the quotas read once, and committed together in ONE etcd transaction: every
// object with its own guard, each touched quota once (guarded by its mod revision), a guard
// that no quota of the namespace changed since it was read, and the namespace's usage epoch.
// The first waiter of a namespace leads: it commits one batch, then hands the lead to the
// next waiter. Namespaces proceed in parallel; nothing waits on a timer.

// Batch limits: etcd refuses transactions of more than 128 operations or compares, or of
// more than 1.5 MiB, and two writes to one key.
const (
	maxBatchWrites = 64
	maxBatchOps    = 120
	maxBatchBytes  = 1 << 20
)

// pending is one write waiting in its namespace's queue.
type pending struct {
	ctx  context.Context
	w    *write
	lead chan struct{}
	done chan struct{}
	rev  int64
	err  error
}

// nsQueue orders the writes of one namespace.
type nsQueue struct {
	waiting []*pending
	leading bool
	users   int
}

type queueShard struct {
	mu     sync.Mutex
	queues map[string]*nsQueue
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
	ns := w.attrs.Namespace
	if !w.res.Namespaced || ns == "" {
		return s.commitClusterScoped(ctx, w)
	}
	if w.obj != nil && !isQuotaWrite(w) && !w.attrs.DryRun {
		b, err := encodeForStorage(w.obj, w.res.GVK())
		if err != nil {
			return 0, internalError(err)
		}
		w.value, w.size = b, len(b)
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
		q = &nsQueue{}
		sh.queues[ns] = q
	}
	q.users++
	q.waiting = append(q.waiting, p)
	if !q.leading {
		q.leading = true
		p.lead <- struct{}{}
	}
	sh.mu.Unlock()
	// 2. Wait until done, or until handed the lead.
	select {
	case <-p.done:
	case <-p.lead:
		s.lead(sh, ns, q)
		<-p.done
	}
	sh.mu.Lock()
	q.users--
	if q.users == 0 && !q.leading && len(q.waiting) == 0 {
		delete(sh.queues, ns)
	}
	sh.mu.Unlock()
	return p.rev, p.err
}

// lead commits one batch from the head of the queue, then passes the lead on.
func (s *Store) lead(sh *queueShard, ns string, q *nsQueue) {
	sh.mu.Lock()
	batch := takeBatch(q)
	sh.mu.Unlock()
	s.commitBatch(ns, batch)
	sh.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].lead <- struct{}{}
	} else {
		q.leading = false
	}
	sh.mu.Unlock()
}

// takeBatch removes the next batch from the queue: a quota write alone (its status is
// recomputed under the namespace's usage epoch), otherwise up to maxBatchWrites writes to
// distinct keys within the byte limit.
func takeBatch(q *nsQueue) []*pending {
	n, bytes := 0, 0
	keys := map[string]bool{}
	for n < len(q.waiting) && n < maxBatchWrites {
		w := q.waiting[n].w
		if isQuotaWrite(w) {
			if n == 0 {
				n = 1
			}
			break
		}
		size := 0
		if w.size > 0 {
			size = w.size
		}
		if keys[w.key] || (n > 0 && bytes+size > maxBatchBytes) {
			break
		}
		keys[w.key] = true
		bytes += size
		n++
	}
	batch := append([]*pending(nil), q.waiting[:n]...)
	q.waiting = q.waiting[n:]
	return batch
}

func isQuotaWrite(w *write) bool {
	return w.res.GroupResource() == quotaGVR.GroupResource()
}

// commitBatch evaluates and commits a batch, retrying the writes whose own guards held when
// another guard failed, and settles every pending write.
func (s *Store) commitBatch(ns string, batch []*pending) {
	settle := func(p *pending, rev int64, err error) {
		p.rev, p.err = rev, err
		close(p.done)
	}
	live := batch
	for attempt := 0; attempt < s.cfg.MaxRetries && len(live) > 0; attempt++ {
		// Writes whose requests were cancelled leave the batch.
		kept := live[:0]
		for _, p := range live {
			if err := p.ctx.Err(); err != nil {
				settle(p, 0, internalError(err))
				continue
			}
			kept = append(kept, p)
		}
		live = kept
		if len(live) == 0 {
			return
		}
		ctx := live[0].ctx
		plan, err := s.planBatch(ctx, ns, live)
		if err != nil {
			for _, p := range live {
				settle(p, 0, err)
			}
			return
		}
		// Nothing to write (all refused or dry-run): the state they were judged on is real.
		if plan.included == 0 {
			for i, p := range live {
				settle(p, 0, plan.results[i])
			}
			return
		}
		r, err := s.cfg.Storage.Txn(ctx, plan.txn)
		if err == nil {
			for i, p := range live {
				if plan.results[i] != nil || p.w.attrs.DryRun {
					settle(p, 0, plan.results[i])
				} else {
					settle(p, r.Revision, nil)
				}
			}
			return
		}
		if errors.Is(err, storage.ErrTooLarge) && len(live) > 1 {
			// Too big together: commit one by one.
			for _, p := range live {
				s.commitBatch(ns, []*pending{p})
			}
			return
		}
		if !errors.Is(err, storage.ErrConflict) {
			err = internalError(err)
			for _, p := range live {
				settle(p, 0, err)
			}
			return
		}
		// Whose guard failed? Writes whose object changed go back to their callers;
		// the others are evaluated again against what is stored now.
		kept = live[:0]
		for _, p := range live {
			cur, gerr := s.cfg.Storage.Get(ctx, p.w.key)
			switch {
			case errors.Is(gerr, storage.ErrNotFound):
				if p.w.guard != 0 {
					settle(p, 0, errObjectChanged)
					continue
				}
			case gerr != nil:
				settle(p, 0, internalError(gerr))
				continue
			case cur.ModRevision != p.w.guard:
				settle(p, 0, errObjectChanged)
				continue
			}
			kept = append(kept, p)
		}
		live = kept
	}
	for _, p := range live {
		s.cfg.Logger.Warn("write gave up after conflicts", "key", p.w.key)
		settle(p, 0, apierrors.NewConflict(p.w.res.GroupResource(), p.w.attrs.Name, fmt.Errorf("too many concurrent changes, please try again")))
	}
}

// batchPlan is a batch evaluated against the quotas read at one revision.
type batchPlan struct {
	txn storage.Txn
	// results[i] is the refusal of live[i], or nil.
	results  []error
	included int
}

// planBatch reads the namespace's quotas once, evaluates each write in order against the
// running usage, and builds the transaction.
func (s *Store) planBatch(ctx context.Context, ns string, live []*pending) (*batchPlan, error) {
	qres := s.cfg.Catalogue.Get(quotaGVR)
	prefix := qres.KeyPrefix(ns)
	// A serializable read is enough: the transaction is guarded on this prefix at the
	// revision read, so a stale read only costs a retry.
	lr, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{Serializable: true})
	if err != nil {
		return nil, internalError(err)
	}
	quotas := make([]corev1.ResourceQuota, 0, len(lr.KVs))
	revs := map[string]int64{}
	for _, kv := range lr.KVs {
		obj, err := decodeKV(qres, kv)
		if err != nil {
			return nil, internalError(err)
		}
		q := obj.(*corev1.ResourceQuota)
		revs[q.Name] = kv.ModRevision
		quotas = append(quotas, *q)
	}
	plan := &batchPlan{results: make([]error, len(live))}
	touched := map[string]bool{}
	var objOps []storage.Op
	var cmps []storage.Compare
	for i, p := range live {
		w := p.w
		isQuota := isQuotaWrite(w)
		// 1. Quota: charge or credit against the running usage of this batch.
		var changed []corev1.ResourceQuota
		if s.cfg.Quota != nil {
			changed, err = s.cfg.Quota.Check(w.attrs, quotas)
			if s.cfg.ObserveQuota != nil && len(quotas) > 0 {
				s.cfg.ObserveQuota(err)
			}
			if err != nil {
				plan.results[i] = err
				continue
			}
		}
		// 2. A quota being created or edited gets its complete status computed from the
		// namespace at lr.Revision, guarded by the namespace's usage epoch.
		if isQuota && w.obj != nil {
			rq := w.obj.(*corev1.ResourceQuota)
			if err := s.computeQuotaStatus(ctx, rq, lr.Revision); err != nil {
				return nil, err
			}
			cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: EpochKey(ns), Revision: lr.Revision})
		}
		if w.attrs.DryRun {
			continue
		}
		for _, c := range changed {
			if isQuota && c.Name == w.attrs.Name {
				continue // the written quota's own status is set above (or it is deleted)
			}
			for j := range quotas {
				if quotas[j].Name == c.Name {
					quotas[j] = c
				}
			}
			touched[c.Name] = true
		}
		if isQuota {
			delete(touched, w.attrs.Name)
			for j := range quotas {
				if quotas[j].Name == w.attrs.Name && w.obj != nil {
					quotas[j] = *w.obj.(*corev1.ResourceQuota)
				}
			}
		}
		// 3. The object itself, guarded by its own mod revision.
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: w.key, Revision: w.guard})
		if w.obj != nil {
			b := w.value
			if b == nil {
				if b, err = encodeForStorage(w.obj, w.res.GVK()); err != nil {
					return nil, internalError(err)
				}
			}
			objOps = append(objOps, storage.Op{Type: storage.OpPut, Key: w.key, Value: b})
		} else {
			objOps = append(objOps, storage.Op{Type: storage.OpDelete, Key: w.key})
		}
		plan.included++
	}
	// 4. Each touched quota once, guarded; the quota set unchanged; the usage epoch.
	ops := objOps
	for j := range quotas {
		q := &quotas[j]
		if !touched[q.Name] {
			continue
		}
		b, err := encodeForStorage(q, qres.GVK())
		if err != nil {
			return nil, internalError(err)
		}
		key := qres.Key(ns, q.Name)
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: key, Revision: revs[q.Name]})
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: key, Value: b})
	}
	cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: prefix, Revision: lr.Revision})
	ops = append(ops, storage.Op{Type: storage.OpPut, Key: EpochKey(ns)})
	plan.txn = storage.Txn{Compares: cmps, Ops: ops}
	return plan, nil
}

// commitClusterScoped writes a cluster-scoped object: no quota applies.
func (s *Store) commitClusterScoped(ctx context.Context, w *write) (int64, error) {
	if w.attrs.DryRun {
		return 0, nil
	}
	txn := storage.Txn{Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: w.key, Revision: w.guard}}}
	if w.obj != nil {
		b, err := encodeForStorage(w.obj, w.res.GVK())
		if err != nil {
			return 0, internalError(err)
		}
		txn.Ops = []storage.Op{{Type: storage.OpPut, Key: w.key, Value: b}}
	} else {
		txn.Ops = []storage.Op{{Type: storage.OpDelete, Key: w.key}}
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
