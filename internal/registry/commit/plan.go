package commit

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/storage"
)

// Planning a batch (the pure half of group commit; engine.go is the driver doing the IO).
//
// A namespace's batch is planned as a function of data: the quota state the previous batch
// leaves or storage holds (nsState), the writes in arrival order, and, for a quota write,
// the namespace's objects at the state's read revision. The plan is the transaction to run,
// as plain compares and ops, the state once it commits and each write's result
// (batchPlan). The driver reads, runs the transaction and, when a guard fails, reads again
// and plans again:
//
//  1. takeBatch takes the next batch off the namespace's queue: a quota write alone, or up
//     to maxBatchWrites writes to distinct keys within maxBatchBytes.
//  2. The driver supplies the state: the previous plan's next state (pipelined), or one
//     read from storage at one revision (decodeState, readStateOnce).
//  3. planBatch checks each write in order against the running usage (quota.Prepared.Check,
//     upstream's CheckRequest) and builds one transaction: every admitted write's object
//     guarded by its mod revision, each touched quota once, guarded as the state holds it,
//     the quota set (or the whole quota prefix at the read revision), the usage epochs, and
//     the namespace's turn as read (absent, or this replica's, then released: turn.go).
//  4. The driver sends it; on a conflict it sorts out the writes whose own object changed
//     and plans the others again on a fresh read (engine.go: finishBatch, sortConflict).
//
// So I1 and I2 (design.md §2) are properties of planBatch's output: what a committed
// transaction writes to the quotas is exactly what its admitted writes charge and credit,
// and its guards fail whenever the state it was planned on is no longer what is stored.

// nsState is a namespace's quotas as a plan sees them.
type nsState struct {
	quotas []corev1.ResourceQuota
	// stored[i] is how quotas[i] is stored. A plan's next state shares the slice's
	// entries for the quotas it does not write; states are never modified once planned.
	stored []storedQuota
	// settled[i] is Settled(&quotas[i]), worked out once for a chain of states (charges do
	// not change a quota's hard); nil until then.
	settled []bool
	// setRev is the quota-set key's mod revision (0: never written); readRev the revision
	// everything was read at.
	setRev, readRev int64
	// turn is the namespace's turn key as read (turn.go): absent, or held by this replica
	// (a state showing another replica's turn is not planned on).
	turn storedTurn
	// enc encodes the quotas of this chain of states.
	enc *codec.QuotaEncoder
	// crqSetRev is the cluster-quota-set key's mod revision at readRev (0: never written);
	// crqs the cluster quotas selecting the namespace then. held are those cluster quotas
	// as a solo batch holding their slots found them (clusterquota.go).
	crqSetRev int64
	crqs      []string
	held      []*heldQuota
	// joined: the batch is joined with other namespaces' batches, which write the held
	// cluster quota once (join.go).
	joined bool
}

// storedQuota is a quota's stored bytes and mod revision. A pipelined plan that rewrites a
// quota records the batch whose transaction writes it instead (rev 0): the revision is
// known once that transaction commits.
type storedQuota struct {
	value []byte
	rev   int64
	by    *batchDone
}

// guard is the compare that the quota at key is still as stored: its mod revision when
// known, else its value; pipelined plans leave a value guard to be turned into a revision
// guard when the writing batch has committed by the time the transaction is sent
// (batchPlan.resolveGuards): the revision is the stronger guard, and far smaller.
func (q storedQuota) guard(key string) storage.Compare {
	if q.rev != 0 {
		return storage.Compare{Target: storage.ModRevisionEquals, Key: key, Revision: q.rev}
	}
	return storage.Compare{Target: storage.ValueEquals, Key: key, Value: q.value}
}

// takeBatch removes the next batch from the queue: a quota write alone, otherwise up to
// maxBatchWrites writes to distinct keys within the byte limit.
func takeBatch(q *nsQueue) []*pending {
	n, bytes := 0, 0
	keys := map[string]bool{}
	for n < len(q.waiting) && n < maxBatchWrites {
		w := q.waiting[n].w
		if isQuotaWrite(w) || q.waiting[n].alone {
			if n == 0 {
				n = 1
			}
			break
		}
		if keys[w.Key] || writesAny(w.ExtraOps, keys) || (n > 0 && bytes+w.Size > maxBatchBytes) {
			break
		}
		keys[w.Key] = true
		for _, op := range w.ExtraOps {
			keys[op.Key] = true
		}
		bytes += w.Size
		n++
	}
	batch := append([]*pending(nil), q.waiting[:n]...)
	q.waiting = q.waiting[n:]
	return batch
}

// writesAny reports whether ops write a key of keys.
func writesAny(ops []storage.Op, keys map[string]bool) bool {
	for _, op := range ops {
		if keys[op.Key] {
			return true
		}
	}
	return false
}

func isQuotaWrite(w *Write) bool {
	return w.GR == quotaGR
}

// nextSettled is the settled flags of the state a plan leaves: a touched quota is stored in
// its decision form, settled; the others as they were. It shares settled when none changes.
func nextSettled(settled, touched []bool) []bool {
	for j, t := range touched {
		if t && !settled[j] {
			next := slices.Clone(settled)
			for k, t := range touched {
				next[k] = next[k] || t
			}
			return next
		}
	}
	return settled
}

// batchPlan is a batch evaluated against one quota state.
type batchPlan struct {
	txn storage.Txn
	// results[i] is the refusal of the batch's i-th write, or nil: then the write commits
	// with the transaction (a dry run: would commit).
	results []error
	// judged[i]: the i-th write was evaluated against at least one quota (for the decision
	// metric).
	judged []bool
	// included counts the writes the transaction stores (neither refused nor dry runs).
	included int
	// validate: refusals or dry runs were judged on the quota state, which the transaction
	// must confirm even when it writes nothing.
	validate bool
	// next is the quota state once the batch commits.
	next *nsState
	// pipelined: the transaction guards each quota and the quota set by key (revision or
	// value), never a range at a read revision, so it may share an etcd request with other
	// namespaces' transactions (see combiner).
	pipelined bool
	// release deletes the namespace's turn this replica holds (its Key is empty when none
	// is held): the transaction then runs even when it stores and confirms nothing else.
	release storage.Op
	// pending are the value guards on quotas that earlier batches write.
	pending []pendingGuard
	// crqWrites are the cluster quotas the transaction writes; committedRev the revision
	// it committed at (0: not committed).
	crqWrites    []crqWrite
	committedRev int64
	// offers are the quotas the transaction writes, for the watch hub.
	offers []quotaOffer
}

// toSend is the transaction to send: txn when it stores writes; otherwise only its compares
// (confirming the state refusals and dry runs were judged on) and the turn's release.
func (p *batchPlan) toSend() storage.Txn {
	if p.included > 0 {
		return p.txn
	}
	t := storage.Txn{Compares: p.txn.Compares}
	if p.releases() {
		t.Ops = []storage.Op{p.release}
	}
	return t
}

// releases reports whether the transaction releases the namespace's turn.
func (p *batchPlan) releases() bool { return p.release.Key != "" }

// crqWrite is a cluster quota a plan writes, for its slot once committed. A joined
// batch's plan leaves the charge to the join: it gives only the view's status.used after
// its writes.
type crqWrite struct {
	slot  *crqSlot
	value []byte
	obj   *clusterquota.ClusterResourceQuota
	used  corev1.ResourceList
}

// pendingGuard is the index of a value guard in a plan's compares and the batch whose
// transaction writes that value.
type pendingGuard struct {
	cmp int
	by  *batchDone
}

// guard appends the guard of a quota as stored, noting a value guard that a revision may
// replace.
func (p *batchPlan) guard(cmps []storage.Compare, q storedQuota, key string) []storage.Compare {
	if q.rev == 0 && q.by != nil {
		p.pending = append(p.pending, pendingGuard{cmp: len(cmps), by: q.by})
	}
	return append(cmps, q.guard(key))
}

// resolveGuards replaces each pending value guard whose writing batch has committed by a
// guard on the revision it committed at. Called when the transaction is about to be sent,
// after the previous batch's transaction returned.
func (p *batchPlan) resolveGuards() {
	for _, g := range p.pending {
		if rev := g.by.rev.Load(); rev != 0 {
			c := &p.txn.Compares[g.cmp]
			*c = storage.Compare{Target: storage.ModRevisionEquals, Key: c.Key, Revision: rev}
		}
	}
	p.pending = nil
}

// planInput is everything planning a batch reads. All of it is data read before planning:
// the quota state (as read from storage at state.readRev, or as the previous plan leaves
// it), the writes in arrival order, and the namespace's objects at state.readRev, which
// only a quota write's status needs.
type planInput struct {
	ns    string
	state *nsState
	// writes are the batch's writes, in arrival order.
	writes []*Write
	// mine is the batch being planned when pipelined (see storedQuota.guard); nil plans a
	// solo batch, which guards by revision everything it read.
	mine *batchDone
	// quota is the store's quota accounting (nil: the ResourceQuota plugin is disabled).
	quota Quota
	// env gives the quotas' keys and the objects' stored forms.
	env Env
	// objects lists the namespace's objects of a group-resource as stored at state.readRev
	// (quota.ListFunc). The store's lists them lazily from storage, at that revision, only
	// when a quota write's status is computed.
	objects func(schema.GroupResource) ([]runtime.Object, error)
}

// quotaOffer is a quota a plan writes, for the watch hub (Env.Offer) before its
// transaction is sent.
type quotaOffer struct {
	key   string
	value []byte
	quota corev1.ResourceQuota
}

// planBatch evaluates each write in order against the running usage and returns the
// transaction to run, the quota state once it commits and each write's result. It does no
// IO and keeps no state between calls: the same input gives the same plan. Its only
// effects on its input are the ones a write's commit keeps: a write that skipped
// Prepare while the namespace looked quota-free is prepared (w.quota), its decision records
// its findings (Check), and a quota write's object gets its computed status (what the
// client is answered). The previous states are never modified (next shares what it does
// not change).
//
// A pipelined plan (in.mine set) guards the quotas it took from the plans before it by
// value until they commit (see storedQuota.guard), and the quota set and the turn by their
// keys; a solo plan guards by revision the quotas it writes, and the quota-set prefix (the
// set key and the turn) at the read revision. Both guard every quota when a write is
// refused or dry-run.
//
// On error the plan is nil except for judged (as far as planning got).
func planBatch(in planInput) (*batchPlan, error) {
	st, ns := in.state, in.ns
	quotaPrefix := in.env.KeyPrefix(quotaGR, ns)
	pipelined := in.mine != nil
	settled := st.settled
	if settled == nil {
		settled = settledOf(st.quotas)
	}
	quotas := decisionQuotas(st.quotas, settled)
	// The cluster quotas held for this batch are checked as ResourceQuotas of the
	// namespace, after its own (quotas[nsN:]).
	nsN := len(quotas)
	for _, h := range st.held {
		quotas = append(quotas, clusterquota.View(h.obj, ns))
	}
	plan := &batchPlan{results: make([]error, len(in.writes)), judged: make([]bool, len(in.writes))}
	fail := func(err error) (*batchPlan, error) { return &batchPlan{judged: plan.judged}, err }
	// touched[j]: quotas[j] changed and is written.
	touched := make([]bool, len(quotas))
	objOps := make([]storage.Op, 0, len(in.writes)+len(quotas)+1)
	cmps := make([]storage.Compare, 0, len(in.writes)+len(quotas)+3)
	// quotaWrite: a quota object is written; putsQuota: one of the namespace's quotas is
	// put (charged, or written), which stands for the usage epochs (step 5).
	quotaWrite, putsQuota := false, false
	var writtenGRs []schema.GroupResource
	for i, w := range in.writes {
		isQuota := isQuotaWrite(w)
		// 1. Quota: charge or credit against the running usage of this batch.
		var changed []corev1.ResourceQuota
		var err error
		if in.quota != nil {
			if !w.Prepared && len(quotas) > 0 {
				// A quota appeared since the write skipped Prepare.
				w.Decision, w.DecisionErr = in.quota.Prepare(w.Attrs)
				w.Prepared = true
			}
			err = w.DecisionErr
			if err == nil && w.Decision != nil {
				changed, err = w.Decision.Check(quotas)
			}
			plan.judged[i] = len(quotas) > 0
			if err != nil {
				plan.results[i] = err
				plan.validate = true
				continue
			}
		}
		if w.Attrs.DryRun {
			plan.validate = true
		}
		// 2. A quota being created or edited gets its complete status computed from the
		// namespace at the read revision, guarded by the namespace's usage epoch and its
		// quotas (a transaction that charges one of them puts no usage epoch: step 5).
		if isQuota && w.Obj != nil {
			rq := w.Obj.(*corev1.ResourceQuota)
			compute := QuotaStatus
			if w.Attrs.Subresource == "status" {
				compute = WrittenQuotaStatus
			}
			if err := compute(in.quota, rq, in.objects); err != nil {
				return fail(err)
			}
			cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: EpochKey(ns), Revision: st.readRev},
				storage.Compare{Target: storage.RangeNotModifiedAfter, Key: quotaPrefix, Revision: st.readRev})
		}
		if w.Attrs.DryRun {
			continue
		}
		for _, c := range changed {
			if isQuota && c.Name == w.Attrs.Name {
				continue // the written quota's own status is set above (or it is deleted)
			}
			for j := range quotas {
				if quotas[j].Name == c.Name && quotas[j].UID == c.UID {
					quotas[j] = c
					touched[j] = true
				}
			}
		}
		if isQuota {
			quotaWrite = true
			for j := range quotas[:nsN] {
				if quotas[j].Name == w.Attrs.Name {
					touched[j] = false
				}
			}
		}
		// 3. The object itself, guarded by its own mod revision, with what it allocates.
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: w.Key, Revision: w.Guard})
		cmps = append(cmps, w.ExtraCmps...)
		objOps = append(objOps, w.ExtraOps...)
		if w.Obj != nil {
			b := w.Value
			if b == nil {
				if b, err = in.env.Encode(w.GR, w.Obj); err != nil {
					return fail(InternalError(err))
				}
			}
			objOps = append(objOps, storage.Op{Type: storage.OpPut, Key: w.Key, Value: b})
			putsQuota = putsQuota || isQuota
		} else {
			objOps = append(objOps, storage.Op{Type: storage.OpDelete, Key: w.Key})
		}
		plan.included++
		if !slices.Contains(writtenGRs, w.GR) {
			writtenGRs = append(writtenGRs, w.GR)
		}
	}
	// 4. Each touched quota once, guarded; the quota set; the usage epoch.
	// The next state holds what is stored: untouched quotas as read, not as judged.
	nextQuotas := append([]corev1.ResourceQuota(nil), st.quotas...)
	for j := range quotas[:nsN] {
		if touched[j] {
			nextQuotas[j] = quotas[j]
		}
	}
	next := &nsState{quotas: nextQuotas, stored: append([]storedQuota(nil), st.stored...), setRev: st.setRev, readRev: st.readRev, enc: st.enc,
		crqSetRev: st.crqSetRev, crqs: st.crqs, settled: nextSettled(settled, touched[:nsN])}
	ops := objOps
	for j, h := range st.held {
		// Each held cluster quota is guarded (refusals may come from it), and written with
		// its total and the namespace's entry moved when charged.
		cmps = append(cmps, h.stored.guard(h.key))
		if !touched[nsN+j] {
			continue
		}
		if st.joined {
			// Joined with other namespaces' batches: charged and written once, by the join.
			plan.crqWrites = append(plan.crqWrites, crqWrite{slot: h.slot, used: quotas[nsN+j].Status.Used})
			continue
		}
		charged := clusterquota.Charge(h.obj, ns, quotas[nsN+j].Status.Used)
		b, err := h.slot.encode(charged)
		if err != nil {
			return fail(InternalError(err))
		}
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: h.key, Value: b})
		plan.crqWrites = append(plan.crqWrites, crqWrite{slot: h.slot, value: b, obj: charged})
	}
	cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: ClusterQuotaSetKey, Revision: st.crqSetRev})
	for j := range quotas[:nsN] {
		q := &quotas[j]
		if !touched[j] {
			continue
		}
		b, err := st.enc.Encode(q)
		if err != nil {
			return fail(InternalError(err))
		}
		key := quotaPrefix + q.Name
		// The hub may share the quota: its maps are never modified once in a plan.
		plan.offers = append(plan.offers, quotaOffer{key: key, value: b, quota: *q})
		cmps = plan.guard(cmps, st.stored[j], key)
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: key, Value: b})
		putsQuota = true
		next.stored[j] = storedQuota{value: b, by: in.mine}
	}
	if plan.validate {
		// Refusals may come from quotas this batch does not touch: confirm them all.
		for j := range st.quotas {
			if !touched[j] {
				cmps = plan.guard(cmps, st.stored[j], quotaPrefix+st.quotas[j].Name)
			}
		}
	}
	// The quota set: no quota created, edited, repaired or deleted since the state was
	// read (what a quota the batch does not touch holds matters only to refusals, confirmed
	// above). A pipelined plan compares the set key's revision as read; a solo plan, which
	// read everything at st.readRev, compares the whole quota-set prefix at that revision,
	// which covers the namespace's turn too (step 6) in one compare.
	if pipelined {
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: QuotaSetKey(ns), Revision: st.setRev})
	} else {
		cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: QuotaSetKey(ns), Revision: st.readRev})
	}
	if quotaWrite {
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: QuotaSetKey(ns)})
	}
	// 5. The usage epochs of the group-resources written: recomputations (of a quota, of a
	// cluster quota) guard on them to learn that nothing they count changed. A transaction
	// that puts one of the namespace's quotas skips them: every recomputation also guards
	// the namespace's quota prefix, which that put moves (and a quota's deletion, which a
	// range cannot see, puts the epochs).
	if !putsQuota {
		for _, gr := range writtenGRs {
			ops = append(ops, storage.Op{Type: storage.OpPut, Key: EpochKeyFor(ns, gr)})
		}
		if len(writtenGRs) == 0 {
			ops = append(ops, storage.Op{Type: storage.OpPut, Key: EpochKey(ns)})
		}
	}
	// 6. The namespace's turn as read: absent, so that another replica's claim fails this
	// transaction; or held by this replica, which the transaction releases (turn.go). A
	// solo plan's quota-set guard above covers it: a claim or a takeover puts the key after
	// the read (a release by its holder deletes it, as a commit holding it would).
	if pipelined {
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: TurnKey(ns), Revision: st.turn.rev})
	}
	if st.turn.rev != 0 {
		plan.release = storage.Op{Type: storage.OpDelete, Key: TurnKey(ns)}
		ops = append(ops, plan.release)
	}
	plan.txn = storage.Txn{Compares: cmps, Ops: ops}
	plan.next = next
	plan.pipelined = pipelined
	return plan, nil
}

// decodeState builds a namespace's quota state from its quotas' keys as read at revision
// rev (kvs, in key order). The quota-set key's revision and the cluster quotas binding the
// namespace are read apart (readStateOnce).
func decodeState(env Env, kvs []storage.KV, rev int64) (*nsState, error) {
	st := &nsState{readRev: rev, enc: codec.NewQuotaEncoder(quotaGVK)}
	for _, kv := range kvs {
		obj, err := env.Decode(quotaGR, kv)
		if err != nil {
			return nil, err
		}
		q := obj.(*corev1.ResourceQuota)
		quota.KeepCanonical(q.Spec.Hard, true)
		quota.KeepCanonical(q.Status.Hard, true)
		quota.KeepCanonical(q.Status.Used, false)
		st.quotas = append(st.quotas, *q)
		st.stored = append(st.stored, storedQuota{value: kv.Value, rev: kv.ModRevision})
	}
	return st, nil
}
