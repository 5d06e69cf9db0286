package commit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/storage"
)

func storageTxnPut(key string, value []byte) storage.Txn {
	return storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: key, Value: value}}}
}

// TestPlanBatchProperties drives planBatch through random sequences of writes as the
// driver (engine.go) does — batches taken off a queue (takeBatch), pipelined on the state
// the previous plan leaves or planned solo on a fresh read, quota writes redone on the quota
// as read (redoMoved), failed guards sorted and retried, too-large batches split — with
// other writers committing in between, transactions failing (before or after they apply)
// and injected errors. The store is memKV; the oracle is quota.CheckRequest. After every
// step:
//
//   - I1: every stored quota's status.used is what its stored objects charge;
//   - I2: no admitted request raises used[r] above an (Enforce) quota's spec.hard[r]: the
//     committed writes are replayed in batch order on the quotas as stored before, each
//     moving used by what the evaluator says its objects charge; a request (any write
//     but /status) that raises a name must leave it within hard, a reported fact (a
//     /status write: a pod's phase, what its node allocated) is recorded exactly and may
//     take it past hard;
//   - every write of a committed transaction got the oracle's decision (admitted, or the
//     same refusal), on the quotas stored when it committed, in batch order, and every
//     quota it charged is stored with the oracle's status.used;
//   - a write whose own object moved is told so (ErrObjectChanged), never committed.
func TestPlanBatchProperties(t *testing.T) {
	sequences, rounds := 100, 25
	if testing.Short() {
		sequences = 40
	}
	total := map[string]int{}
	for seed := 1; seed <= sequences; seed++ {
		r := &propRun{planEnv: newPlanEnv(t), rng: rand.New(rand.NewPCG(uint64(seed), 24)), seed: seed, stats: total,
			injected: map[*Write]error{}, unprepared: map[*Write]bool{}}
		for round := 0; round < rounds; round++ {
			r.round(round)
		}
	}
	t.Logf("%d sequences of %d rounds: %v", sequences, rounds, total)
	// The run covers what it claims to.
	for _, what := range []string{"committed", "refused", "conflict", "objectChanged", "pipelined", "redo", "tooLarge",
		"txnFailed", "ambiguous", "planError", "interference", "quotaWrite", "dryRun", "unprepared", "injectedError",
		"graceful", "gracefulPending", "reportedPastHard"} {
		if total[what] == 0 {
			t.Errorf("no %s in the run", what)
		}
	}
}

// propRun is one random sequence: the store, the namespace's queue and pipelined state.
type propRun struct {
	*planEnv
	rng     *rand.Rand
	seed    int
	roundNo int
	// state is the state the last pipelined plan leaves (nil: read it).
	state *nsState
	names int
	stats map[string]int
	// injected are the writes given a quota error instead of their decision; unprepared
	// those queued without Prepare (the namespace looked quota-free).
	injected   map[*Write]error
	unprepared map[*Write]bool
	log        []string
}

func (r *propRun) fatalf(format string, args ...any) {
	r.t.Helper()
	tail := r.log
	if len(tail) > 30 {
		tail = tail[len(tail)-30:]
	}
	r.t.Fatalf("seed %d round %d: %s\nlast steps:\n  %s", r.seed, r.roundNo, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
}

func (r *propRun) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *propRun) pick(list ...string) string { return list[r.rng.IntN(len(list))] }

// storedPods and storedQuotas are the names stored now, in key order.
func (r *propRun) storedNames(res *kind) []string {
	var out []string
	for _, kv := range r.kv.list(res.KeyPrefix(planNS)) {
		out = append(out, strings.TrimPrefix(kv.Key, res.KeyPrefix(planNS)))
	}
	return out
}

func (r *propRun) randomHard() corev1.ResourceList {
	l := corev1.ResourceList{}
	if r.rng.IntN(4) > 0 {
		l = hardOf("requests.cpu", r.pick("500m", "1", "2", "3"))
	}
	if r.rng.IntN(2) == 0 {
		l["pods"] = hardOf("pods", r.pick("2", "4", "6"))["pods"]
	}
	if r.rng.IntN(4) == 0 {
		l["resourcequotas"] = hardOf("resourcequotas", r.pick("1", "2", "3"))["resourcequotas"]
	}
	if r.rng.IntN(5) == 0 {
		l["count/pods"] = hardOf("count/pods", r.pick("3", "5"))["count/pods"]
	}
	return l
}

// genWrite returns a random write on the store as it is now.
func (r *propRun) genWrite() *Write {
	pods, quotas := r.storedNames(r.pods()), r.storedNames(r.quotas())
	cpu := func() string { return r.pick("100m", "250m", "500m", "1") }
	n := r.rng.IntN(100)
	var w *Write
	switch {
	case n < 40 || len(pods) == 0 && n < 75:
		r.names++
		name := fmt.Sprint("p", r.names)
		if r.rng.IntN(20) == 0 && len(pods) > 0 {
			name = pods[r.rng.IntN(len(pods))] // already exists: its guard fails
		}
		phase := corev1.PodPhase("")
		if r.rng.IntN(10) == 0 {
			phase = corev1.PodSucceeded
		}
		dry, unprepared := r.rng.IntN(10) == 0, r.rng.IntN(10) == 0
		p := newPod(name, cpu(), phase)
		if r.rng.IntN(3) > 0 {
			p.Spec.NodeName = "n1" // bound: deleted gracefully
		}
		if g := r.rng.IntN(3); g > 0 {
			p.Spec.TerminationGracePeriodSeconds = ptr.To(int64(30 * (g - 1)))
		}
		if r.rng.IntN(6) == 0 {
			p.Finalizers = []string{"example.com/hold"}
		}
		w = r.newWrite(r.pods(), admission.Create, "", name, p, nil, 0, dry, unprepared)
		r.unprepared[w] = unprepared
		r.logf("create pod %s dry=%v unprepared=%v", name, dry, unprepared)
	case n < 75:
		name := pods[r.rng.IntN(len(pods))]
		switch r.rng.IntN(7) {
		case 4, 5:
			grace := []*int64{nil, ptr.To[int64](0), ptr.To[int64](1), ptr.To[int64](30)}[r.rng.IntN(4)]
			w = r.storeDelete(name, grace)
		case 6:
			w = r.dropFinalizers(name)
		case 0:
			if r.rng.IntN(2) == 0 {
				// The node reports what it allocated after a resize (a fact, never refused).
				c := r.pick("100m", "1", "2", "3")
				w = r.podUpdate("status", name, func(p *corev1.Pod) {
					p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", AllocatedResources: hardOf("cpu", c)}}
				})
				r.logf("pod %s/status allocated cpu %s", name, c)
				break
			}
			phase := corev1.PodPhase(r.pick(string(corev1.PodSucceeded), string(corev1.PodFailed), string(corev1.PodRunning)))
			w = r.podUpdate("status", name, func(p *corev1.Pod) { p.Status.Phase = phase })
			r.logf("pod %s/status phase %s", name, phase)
		case 1:
			c := cpu()
			w = r.podUpdate("resize", name, func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = hardOf("cpu", c)
			})
			r.logf("pod %s/resize cpu %s", name, c)
		case 2:
			w = r.podUpdate("", name, func(p *corev1.Pod) { p.Labels = map[string]string{"n": fmt.Sprint(r.names)} })
			r.logf("pod %s labels", name)
		default:
			w = r.deletePod(name)
			r.logf("delete pod %s", name)
		}
		if r.rng.IntN(15) == 0 {
			w.Guard-- // written on a stale read: its own guard fails
			r.logf("  (stale guard)")
		}
	case n < 82 || len(quotas) == 0:
		r.names++
		name := fmt.Sprint("q", r.names)
		w = r.createQuota(newQuota(name, r.randomHard()))
		r.logf("create quota %s", name)
	case n < 94:
		name := quotas[r.rng.IntN(len(quotas))]
		hard := r.randomHard()
		w = r.quotaUpdate(name, "", func(q *corev1.ResourceQuota) { q.Spec.Hard = hard })
		r.logf("edit quota %s hard %v", name, hard)
	case n < 97:
		name := quotas[r.rng.IntN(len(quotas))]
		hard := r.randomHard()
		w = r.quotaUpdate(name, "status", func(q *corev1.ResourceQuota) { q.Status.Hard = hard })
		r.logf("quota %s/status hard %v", name, hard)
	default:
		name := quotas[r.rng.IntN(len(quotas))]
		old, rev := r.stored(r.quotas(), name)
		w = r.newWrite(r.quotas(), admission.Delete, "", name, nil, old, rev, false, false)
		r.logf("delete quota %s", name)
	}
	if w.Attrs.Resource == podsGVR && r.rng.IntN(30) == 0 {
		err := apierrors.NewForbidden(podsGVR.GroupResource(), w.Attrs.Name, errors.New("injected"))
		w.Decision, w.DecisionErr, w.Prepared = nil, err, true
		r.injected[w] = err
		r.logf("  (injected quota error)")
	}
	return w
}

// storeDelete is planEnv.storeDelete at the round's time, logged.
func (r *propRun) storeDelete(name string, grace *int64) *Write {
	now := metav1.NewTime(time.Unix(1_000_000_000+int64(r.roundNo)*10, 0))
	w, what := r.planEnv.storeDelete(name, grace, now)
	show := "nil"
	if grace != nil {
		show = fmt.Sprint(*grace)
	}
	switch what {
	case "pending":
		r.stats["gracefulPending"]++
		w = r.podUpdate("", name, func(p *corev1.Pod) { p.Labels = map[string]string{"n": fmt.Sprint(r.names)} })
	case "marked":
		r.stats["graceful"]++
	}
	r.logf("delete pod %s grace %s: %s", name, show, what)
	return w
}

// dropFinalizers is planEnv.dropFinalizers, logged.
func (r *propRun) dropFinalizers(name string) *Write {
	r.logf("pod %s finalizers dropped", name)
	return r.planEnv.dropFinalizers(name)
}

// quotaUpdate is an update of the stored quota with a redo, as the store prepares quota
// updates: when the quota moved before the write's batch, the change is made again on the
// quota as read (redoMoved).
func (r *propRun) quotaUpdate(name, sub string, change func(*corev1.ResourceQuota)) *Write {
	var build func(cur runtime.Object, rev int64) *Write
	build = func(cur runtime.Object, rev int64) *Write {
		q := cur.DeepCopyObject().(*corev1.ResourceQuota)
		change(q)
		w := r.newWrite(r.quotas(), admission.Update, sub, name, q, cur, rev, false, false)
		w.Redo = func(cur runtime.Object, rev int64) (*Write, error) {
			r.stats["redo"]++
			return build(cur, rev), nil
		}
		return w
	}
	old, rev := r.stored(r.quotas(), name)
	return build(old, rev)
}

// round queues a few writes and commits them all, as the namespace's leaders would.
func (r *propRun) round(round int) {
	r.roundNo = round
	q := &nsQueue{}
	for i, n := 0, 1+r.rng.IntN(8); i < n; i++ {
		q.waiting = append(q.waiting, &pending{w: r.genWrite(), done: make(chan struct{})})
	}
	for len(q.waiting) > 0 {
		batch := takeBatch(q)
		if isQuotaWrite(batch[0].w) {
			r.stats["quotaWrite"]++
			r.state = nil
			r.solo(q, batch)
			continue
		}
		r.pipelined(q, batch)
	}
}

// solo commits a batch on a fresh read, as commitSolo does.
func (r *propRun) solo(q *nsQueue, batch []*pending) {
	st := r.read()
	live := (&Engine{}).redoMoved(batch, st)
	for _, p := range batch {
		if isSettled(p) && !errors.Is(p.err, ErrObjectChanged) {
			r.fatalf("redo failed: %v", p.err)
		}
	}
	if len(live) == 0 {
		return
	}
	r.listErr = nil
	if r.rng.IntN(25) == 0 {
		r.listErr = errors.New("injected list error")
	}
	plan, err := r.plan(st, writesOf(live), nil)
	r.listErr = nil
	if err != nil {
		r.stats["planError"]++
		r.logf("plan failed: %v", err)
		return // every write of the batch is settled with the error; nothing is written
	}
	if r.finish(q, live, plan, nil) && live[0].w.Attrs.Subresource == "status" {
		// The writer restores the quota's exact status at once (restoreQuotaStatus); the
		// writes queued meanwhile go first.
		name := live[0].w.Attrs.Name
		q.waiting = append(q.waiting, &pending{w: r.quotaUpdate(name, "", func(*corev1.ResourceQuota) {}), done: make(chan struct{})})
		r.logf("  restore quota %s status", name)
	}
}

// pipelined plans a batch on the state the previous one left, possibly the next batch on
// the state this one leaves before either commits, and commits them in order.
func (r *propRun) pipelined(q *nsQueue, batch []*pending) {
	st := r.state
	if st == nil {
		st = r.read()
	}
	mine := &batchDone{}
	plan, err := r.plan(st, writesOf(batch), mine)
	if err != nil {
		r.fatalf("planning pods: %v", err)
	}
	r.state = plan.next
	var second []*pending
	var plan2 *batchPlan
	mine2 := &batchDone{}
	if len(q.waiting) > 0 && !isQuotaWrite(q.waiting[0].w) && r.rng.IntN(2) == 0 {
		second = takeBatch(q)
		if plan2, err = r.plan(plan.next, writesOf(second), mine2); err != nil {
			r.fatalf("planning pods: %v", err)
		}
		r.state = plan2.next
		r.stats["pipelined"]++
	}
	ok := r.finish(q, batch, plan, mine)
	if second != nil {
		plan2.resolveGuards()
		ok = r.finish(q, second, plan2, mine2) && ok
	}
	if !ok {
		r.state = nil
	}
}

func writesOf(ps []*pending) []*Write {
	out := make([]*Write, len(ps))
	for i, p := range ps {
		out[i] = p.w
	}
	return out
}

func isSettled(p *pending) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// interfere lets another writer (another replica) commit before the batch's transaction.
func (r *propRun) interfere() {
	r.stats["interference"]++
	pods, quotas := r.storedNames(r.pods()), r.storedNames(r.quotas())
	switch n := r.rng.IntN(5); {
	case n == 4:
		r.names++
		name := fmt.Sprint("oq", r.names)
		r.commitOther(r.createQuota(newQuota(name, r.randomHard())))
		r.logf("  other writer: created quota %s", name)
	case n == 0 && len(quotas) > 0:
		// A quota rewritten unchanged: its revision moves, its bytes do not.
		kv := r.kv.keys[r.quotas().Key(planNS, quotas[0])]
		r.kv.txn(storageTxnPut(kv.Key, kv.Value))
		r.logf("  other writer: quota %s rewritten unchanged", quotas[0])
	case n == 1 && len(pods) > 0:
		r.commitOther(r.deletePod(pods[r.rng.IntN(len(pods))]))
		r.logf("  other writer: deleted a pod")
	case n == 2 && len(quotas) > 0:
		name := quotas[r.rng.IntN(len(quotas))]
		hard := r.randomHard()
		r.commitOther(r.quotaUpdate(name, "", func(q *corev1.ResourceQuota) { q.Spec.Hard = hard }))
		r.logf("  other writer: quota %s hard %v", name, hard)
	default:
		r.names++
		r.commitOther(r.createPod(newPod(fmt.Sprint("x", r.names), "250m", "")))
		r.logf("  other writer: created a pod")
	}
}

// commitOther commits one write solo on a fresh read, checked like the run's own.
func (r *propRun) commitOther(w *Write) {
	plan, err := r.plan(r.read(), []*Write{w}, nil)
	if err != nil {
		r.fatalf("other writer: %v", err)
	}
	if r.finishChecked(plan, []*Write{w}) == 0 {
		r.fatalf("other writer's transaction on a fresh read failed its guards")
	}
}

// finish runs a plan's transaction as finishBatch does, with injected failures, checks it
// and settles or requeues its writes. It reports whether the batch committed.
func (r *propRun) finish(q *nsQueue, live []*pending, plan *batchPlan, mine *batchDone) bool {
	settleAll := func(err error) {
		for _, p := range live {
			p.err = err
			close(p.done)
		}
	}
	if plan.included == 0 && !plan.validate {
		settleAll(nil)
		return true
	}
	if r.rng.IntN(8) == 0 {
		r.interfere()
	}
	switch n := r.rng.IntN(40); {
	case n == 0:
		r.stats["txnFailed"]++
		r.logf("  transaction failed")
		settleAll(errors.New("etcd unavailable"))
		return false
	case n == 1 && len(live) > 1:
		r.stats["tooLarge"]++
		r.logf("  transaction too large")
		for _, p := range live {
			p.alone = true
		}
		r.requeue(q, live)
		return false
	}
	ambiguous := r.rng.IntN(40) == 0
	rev := r.finishChecked(plan, writesOf(live))
	if rev != 0 {
		if mine != nil && !ambiguous {
			mine.rev.Store(rev)
		}
		if ambiguous {
			// Applied, but the answer was lost: the writes fail, the store is as committed.
			r.stats["ambiguous"]++
			r.logf("  committed, answer lost")
			settleAll(errors.New("timeout"))
			return false
		}
		r.stats["committed"]++
		for i, p := range live {
			p.err = plan.results[i]
			if p.err != nil {
				r.stats["refused"]++
			}
			close(p.done)
		}
		return true
	}
	// A guard failed: the writes whose own object changed are told so, the others are
	// evaluated again on a fresh read (sortConflict).
	r.stats["conflict"]++
	r.logf("  conflict")
	var again []*pending
	for _, p := range live {
		kv, exists := r.kv.keys[p.w.Key]
		if (!exists && p.w.Guard != 0) || (exists && kv.ModRevision != p.w.Guard && p.w.Redo == nil) {
			r.stats["objectChanged"]++
			p.err = ErrObjectChanged
			close(p.done)
			continue
		}
		again = append(again, p)
	}
	r.requeue(q, again)
	return false
}

// requeue puts writes back at the head of the queue, as the driver does, with a
// fresh read.
func (r *propRun) requeue(q *nsQueue, ps []*pending) {
	for _, p := range ps {
		p.attempts++
		if p.attempts > 50 {
			r.fatalf("write %s retried %d times", p.w.Key, p.attempts)
		}
	}
	q.waiting = append(append([]*pending(nil), ps...), q.waiting...)
	r.state = nil
}

// finishChecked runs a plan's transaction on the store (only its compares when it stores
// nothing, as finishBatch) and, when it commits, checks its results against the oracle
// and I1 and I2. It returns the revision committed at (0: a guard failed).
func (r *propRun) finishChecked(plan *batchPlan, writes []*Write) int64 {
	before := r.storedQuotas()
	expect, expectQuotas := r.oracle(before, writes)
	txn := plan.txn
	if plan.included == 0 {
		txn.Ops = nil
	}
	rev := r.kv.txn(txn)
	if rev == 0 {
		r.checkI1(fmt.Sprintf("seed %d round %d, after a conflict", r.seed, r.roundNo))
		return 0
	}
	// Each write got the oracle's decision on the quotas stored when it committed.
	for i, w := range writes {
		got, want := plan.results[i], expect[i]
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			r.fatalf("write %d (%s %s): planned %v, oracle %v", i, w.Attrs.Operation, w.Key, got, want)
		}
		if r.injected[w] != nil {
			r.stats["injectedError"]++
		}
		if w.Attrs.DryRun {
			r.stats["dryRun"]++
		}
		if r.unprepared[w] && len(before) > 0 {
			if !w.Prepared {
				r.fatalf("write %d judged unprepared on %d quotas", i, len(before))
			}
			r.stats["unprepared"]++
		}
	}
	after := r.storedQuotas()
	quotaBatch := isQuotaWrite(writes[0])
	for name, q := range after {
		// Each quota the oracle charged is stored with its used; the others are as they were.
		if !quotaBatch {
			if want, ok := expectQuotas[name]; ok && !quota.Equals(q.Status.Used, want.Status.Used) {
				r.fatalf("quota %s stored used %v, oracle %v", name, q.Status.Used, want.Status.Used)
			}
		}
	}
	if !quotaBatch {
		r.checkI2(before, after, plan, writes)
	}
	r.checkI1(fmt.Sprintf("seed %d round %d", r.seed, r.roundNo))
	return rev
}

// checkI2 replays a committed batch's admitted writes in order on each Enforce quota as
// stored before (and still stored, the same quota), each moving used[r] by its objects'
// usage delta as the evaluator computes it: a request that raises a name must leave it
// within spec.hard; a reported fact (/status) may take it anywhere. The replay must end
// at the stored used.
func (r *propRun) checkI2(before, after map[string]*corev1.ResourceQuota, plan *batchPlan, writes []*Write) {
	for name, q := range after {
		old, ok := before[name]
		if !ok || old.UID != q.UID || quota.EnforcementOf(q.Annotations) != quota.Enforce {
			continue
		}
		used := old.Status.Used.DeepCopy()
		for i, w := range writes {
			if plan.results[i] != nil || w.Attrs.DryRun {
				continue
			}
			delta := r.usageDelta(w)
			report := quota.IsReport(w.Attrs.Subresource)
			for res, hard := range q.Spec.Hard {
				d, ok := delta[res]
				if !ok || d.IsZero() {
					continue
				}
				prev := used[res]
				now := prev.DeepCopy()
				now.Add(d)
				used[res] = now
				if d.Sign() > 0 && now.Cmp(hard) > 0 {
					if !report {
						r.fatalf("I2: %s %s/%s raised quota %s %s from %s to %s, hard %s", w.Attrs.Operation, w.Attrs.Name, w.Attrs.Subresource, name, res, prev.String(), now.String(), hard.String())
					}
					r.stats["reportedPastHard"]++
				}
			}
		}
		for res := range q.Spec.Hard {
			if got, want := q.Status.Used[res], used[res]; got.Cmp(want) != 0 {
				r.fatalf("quota %s %s stored %s, replay of the batch gives %s", name, res, got.String(), want.String())
			}
		}
	}
}

// usageDelta is what a write moves usage by, per name: its new object's usage less its old
// object's, as the evaluator computes them (no scopes: the run's quotas have none).
func (r *propRun) usageDelta(w *Write) corev1.ResourceList {
	ev := r.reg.Get(w.Attrs.Resource.GroupResource())
	delta := corev1.ResourceList{}
	if ev == nil || !ev.Handles(w.Attrs.Subresource) {
		return delta
	}
	usage := func(obj runtime.Object, sign int) {
		if obj == nil {
			return
		}
		u, err := ev.Usage(obj)
		if err != nil {
			r.fatalf("usage: %v", err)
		}
		for name, v := range u {
			v = v.DeepCopy()
			if sign < 0 {
				v.Neg()
			}
			cur := delta[name]
			cur.Add(v)
			delta[name] = cur
		}
	}
	usage(w.Attrs.Object, 1)
	usage(w.Attrs.OldObject, -1)
	return delta
}

// oracle decides writes in order with quota.CheckRequest on the stored quotas as admission
// judges them (decisionQuotas), charging what it admits, and returns each write's decision
// and the quotas it changed.
func (r *propRun) oracle(stored map[string]*corev1.ResourceQuota, writes []*Write) ([]error, map[string]corev1.ResourceQuota) {
	var list []corev1.ResourceQuota
	for _, name := range r.storedNames(r.quotas()) {
		list = append(list, *stored[name])
	}
	running := DecisionQuotas(list)
	changedQuotas := map[string]corev1.ResourceQuota{}
	out := make([]error, len(writes))
	for i, w := range writes {
		if err := r.injected[w]; err != nil {
			out[i] = err
			continue
		}
		changed, err := quota.CheckRequest(running, requestOf(w.Attrs), r.reg, nil)
		out[i] = err
		if err != nil || w.Attrs.DryRun {
			continue
		}
		for _, c := range changed {
			for j := range running {
				if running[j].Name == c.Name {
					running[j] = c
					changedQuotas[c.Name] = c
				}
			}
		}
	}
	return out, changedQuotas
}

func (r *propRun) storedQuotas() map[string]*corev1.ResourceQuota {
	out := map[string]*corev1.ResourceQuota{}
	for _, name := range r.storedNames(r.quotas()) {
		obj, _ := r.stored(r.quotas(), name)
		out[name] = obj.(*corev1.ResourceQuota)
	}
	return out
}
