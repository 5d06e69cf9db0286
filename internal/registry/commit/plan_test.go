package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/storage"
)

// The commit engine's planning tested without etcd: memKV models the part of etcd a
// transaction sees (mod revisions, compares, puts and deletes); planBatch's transactions run
// on it as they would on etcd.

const planNS = "ns"

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// kind is a resource the tests store: its keys (kube-apiserver's, as the store's catalogue
// gives them) and stored form (the store's codec).
type kind struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
	new func() runtime.Object
}

var testKinds = map[schema.GroupResource]*kind{
	podsGVR.GroupResource(): {gvr: podsGVR, gvk: corev1.SchemeGroupVersion.WithKind("Pod"), new: func() runtime.Object { return &corev1.Pod{} }},
	quotaGR: {gvr: corev1.SchemeGroupVersion.WithResource("resourcequotas"), gvk: quotaGVK,
		new: func() runtime.Object { return &corev1.ResourceQuota{} }},
}

func (k *kind) KeyPrefix(ns string) string          { return "/registry/" + k.gvr.Resource + "/" + ns + "/" }
func (k *kind) Key(ns, name string) string          { return k.KeyPrefix(ns) + name }
func (k *kind) GroupResource() schema.GroupResource { return k.gvr.GroupResource() }

// testEnv is the engine's Env over the test kinds; the in-memory store is read directly.
type testEnv struct{}

func (testEnv) KeyPrefix(gr schema.GroupResource, ns string) string {
	return testKinds[gr].KeyPrefix(ns)
}

func (testEnv) Encode(gr schema.GroupResource, obj runtime.Object) ([]byte, error) {
	return codec.EncodeForStorage(obj, testKinds[gr].gvk)
}

func (testEnv) Decode(gr schema.GroupResource, kv storage.KV) (runtime.Object, error) {
	obj := testKinds[gr].new()
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		return nil, err
	}
	obj.(metav1.Object).SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return obj, nil
}

func (testEnv) List(context.Context, schema.GroupResource, string, int64) ([]runtime.Object, error) {
	panic("planning lists through planInput.objects")
}

func (testEnv) Offer(schema.GroupResource, string, []byte, func() runtime.Object) {}

// memKV is an in-memory key-value store with etcd's revisions and transaction semantics
// (storage.Txn: compares, then every op at one new revision), and its history.
type memKV struct {
	rev  int64
	keys map[string]storage.KV
	// log holds the ops of every revision, in order.
	log []memRev
}

// memRev is the ops a transaction applied at one revision.
type memRev struct {
	rev int64
	ops []storage.Op
}

func newMemKV() *memKV { return &memKV{rev: 1, keys: map[string]storage.KV{}} }

// holds reports whether c holds.
func (m *memKV) holds(c storage.Compare) bool {
	switch c.Target {
	case storage.ModRevisionEquals:
		return m.keys[c.Key].ModRevision == c.Revision
	case storage.ValueEquals:
		kv, ok := m.keys[c.Key]
		return ok && bytes.Equal(kv.Value, c.Value)
	case storage.RangeNotModifiedAfter:
		for k, kv := range m.keys {
			if strings.HasPrefix(k, c.Key) && kv.ModRevision > c.Revision {
				return false
			}
		}
		return true
	}
	panic(fmt.Sprintf("compare target %d", c.Target))
}

// txn commits txn iff all its compares hold, returning the new revision (0: not committed).
// As etcd, a transaction writing nothing does not move the revision.
func (m *memKV) txn(txn storage.Txn) int64 {
	for _, c := range txn.Compares {
		if !m.holds(c) {
			return 0
		}
	}
	if len(txn.Ops) == 0 {
		return m.rev
	}
	m.rev++
	m.log = append(m.log, memRev{rev: m.rev, ops: append([]storage.Op(nil), txn.Ops...)})
	for _, op := range txn.Ops {
		switch op.Type {
		case storage.OpPut:
			kv := m.keys[op.Key]
			if kv.CreateRevision == 0 {
				kv.CreateRevision = m.rev
			}
			kv.Key, kv.Value, kv.ModRevision = op.Key, op.Value, m.rev
			m.keys[op.Key] = kv
		case storage.OpDelete:
			delete(m.keys, op.Key)
		}
	}
	return m.rev
}

// list returns the keys under prefix in key order.
func (m *memKV) list(prefix string) []storage.KV {
	var out []storage.KV
	for k, kv := range m.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, kv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// planEnv is what planning needs around it: the catalogue, the quota accounting (the
// quota core with the real evaluators, as the server wires it) and the store's contents.
type planEnv struct {
	t    testing.TB
	reg  quota.Registry
	acct Quota
	kv   *memKV
	// listErr, when set, fails the object lists of quota status computations.
	listErr error
	// decoded caches decodes by key and mod revision (objects read are never modified).
	decoded map[decodedKey]runtime.Object
}

type decodedKey struct {
	key string
	rev int64
}

// decode decodes a stored object, once per revision.
func (e *planEnv) decode(res *kind, kv storage.KV) runtime.Object {
	e.t.Helper()
	k := decodedKey{kv.Key, kv.ModRevision}
	if obj, ok := e.decoded[k]; ok {
		return obj
	}
	obj, err := testEnv{}.Decode(res.GroupResource(), kv)
	if err != nil {
		e.t.Fatal(err)
	}
	e.decoded[k] = obj
	return obj
}

func newPlanEnv(t testing.TB) *planEnv {
	reg := evaluator.NewRegistry()
	return &planEnv{t: t, reg: reg, acct: testAccounting{reg: reg}, kv: newMemKV(),
		decoded: map[decodedKey]runtime.Object{}}
}

// testAccounting is the store's Quota over the quota core (server.quotaAccounting without
// the admission plugin's configuration: no limitedResources).
type testAccounting struct{ reg quota.Registry }

func (a testAccounting) Limits() bool { return false }

func (a testAccounting) Prepare(attrs *admission.Attributes) (QuotaDecision, error) {
	p, err := quota.Prepare(requestOf(attrs), a.reg, nil)
	if err != nil || p == nil {
		return nil, err
	}
	return p, nil
}

func (a testAccounting) Usage(rq *corev1.ResourceQuota, list func(schema.GroupResource) ([]runtime.Object, error)) (corev1.ResourceList, error) {
	return quota.CalculateUsage(rq, a.reg, list)
}

// requestOf is the quota request of a write's attributes (as the ResourceQuota plugin
// builds it).
func requestOf(a *admission.Attributes) quota.Request {
	return quota.Request{
		Operation: quota.Operation(a.Operation), Resource: a.Resource.GroupResource(), Subresource: a.Subresource,
		Name: a.Name, Object: a.Object, OldObject: a.OldObject,
	}
}

func (e *planEnv) pods() *kind   { return testKinds[podsGVR.GroupResource()] }
func (e *planEnv) quotas() *kind { return testKinds[quotaGR] }

// read is the driver's readState on the in-memory store.
func (e *planEnv) read() *nsState {
	e.t.Helper()
	st, err := decodeState(testEnv{}, e.kv.list(e.quotas().KeyPrefix(planNS)), e.kv.rev)
	if err != nil {
		e.t.Fatal(err)
	}
	st.setRev = e.kv.keys[QuotaSetKey(planNS)].ModRevision
	return st
}

// objects lists the stored objects of a group-resource (the store's latest revision: the
// harness plans a quota write on a state read just before).
func (e *planEnv) objects(gr schema.GroupResource) ([]runtime.Object, error) {
	if e.listErr != nil {
		return nil, e.listErr
	}
	res := testKinds[gr]
	if res == nil {
		return nil, nil
	}
	var out []runtime.Object
	for _, kv := range e.kv.list(res.KeyPrefix(planNS)) {
		out = append(out, e.decode(res, kv))
	}
	return out, nil
}

// plan plans writes on st (pipelined when mine is set), and checks that the next state
// carries, for each quota, whether it is settled as Settled finds it (a chain of states
// does not compare the hards again).
func (e *planEnv) plan(st *nsState, writes []*Write, mine *batchDone) (*batchPlan, error) {
	plan, err := planBatch(planInput{ns: planNS, state: st, writes: writes, mine: mine, quota: e.acct, env: testEnv{}, objects: e.objects})
	if err == nil && plan.next != nil && !slices.Contains(writes, nil) && !slices.ContainsFunc(writes, isQuotaWrite) {
		for j := range plan.next.quotas {
			if got, want := plan.next.settled[j], Settled(&plan.next.quotas[j]); got != want {
				e.t.Fatalf("next state's quota %s: settled %v, Settled finds %v", plan.next.quotas[j].Name, got, want)
			}
		}
	}
	return plan, err
}

// stored returns the stored object at key with its revision, or nil.
func (e *planEnv) stored(res *kind, name string) (runtime.Object, int64) {
	e.t.Helper()
	kv, ok := e.kv.keys[res.Key(planNS, name)]
	if !ok {
		return nil, 0
	}
	return e.decode(res, kv), kv.ModRevision
}

// newWrite builds a write as the store's commit does before queueing it: prepared
// (unless unprepared, as when the namespace looked quota-free) and, for objects other than
// quotas, encoded.
func (e *planEnv) newWrite(res *kind, op admission.Operation, sub, name string, obj, old runtime.Object, guard int64, dryRun, unprepared bool) *Write {
	e.t.Helper()
	attrs := &admission.Attributes{Operation: op, Resource: res.gvr, Subresource: sub, Kind: res.gvk, Namespace: planNS,
		Name: name, Object: obj, OldObject: old, DryRun: dryRun}
	w := &Write{GR: res.GroupResource(), Namespaced: true, Attrs: attrs, Key: res.Key(planNS, name), Guard: guard, Obj: obj}
	if !unprepared {
		w.Decision, w.DecisionErr = e.acct.Prepare(attrs)
		w.Prepared = true
	}
	if obj != nil && !isQuotaWrite(w) && !dryRun {
		b, err := testEnv{}.Encode(res.GroupResource(), obj)
		if err != nil {
			e.t.Fatal(err)
		}
		w.Value, w.Size = b, len(b)
	}
	return w
}

func newPod(name string, cpu string, phase corev1.PodPhase) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: planNS, UID: types.UID("pod-" + name)}}
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
	}}}
	p.Status.Phase = phase
	return p
}

func newQuota(name string, hard corev1.ResourceList) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: planNS, UID: types.UID("quota-" + name)}}
	q.Spec.Hard = hard
	return q
}

func hardOf(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

// createPod, updatePod, podStatus and deletePod are writes of the pod as stored now.
func (e *planEnv) createPod(p *corev1.Pod) *Write {
	return e.newWrite(e.pods(), admission.Create, "", p.Name, p, nil, 0, false, false)
}

func (e *planEnv) podUpdate(sub string, name string, change func(*corev1.Pod)) *Write {
	e.t.Helper()
	old, rev := e.stored(e.pods(), name)
	if old == nil {
		e.t.Fatalf("no pod %s", name)
	}
	p := old.DeepCopyObject().(*corev1.Pod)
	change(p)
	return e.newWrite(e.pods(), admission.Update, sub, name, p, old, rev, false, false)
}

func (e *planEnv) deletePod(name string) *Write {
	e.t.Helper()
	old, rev := e.stored(e.pods(), name)
	return e.newWrite(e.pods(), admission.Delete, "", name, nil, old, rev, false, false)
}

func (e *planEnv) createQuota(q *corev1.ResourceQuota) *Write {
	return e.newWrite(e.quotas(), admission.Create, "", q.Name, q, nil, 0, false, false)
}

// commitSolo plans writes solo on a fresh read and runs the transaction, failing the test
// unless it commits; it returns the plan.
func (e *planEnv) commitSolo(writes ...*Write) *batchPlan {
	e.t.Helper()
	plan, err := e.plan(e.read(), writes, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.kv.txn(plan.txn) == 0 {
		e.t.Fatalf("solo transaction on a fresh read failed its guards: %+v", plan.txn.Compares)
	}
	return plan
}

// used returns the stored quota's status.used.
func (e *planEnv) used(name string) corev1.ResourceList {
	e.t.Helper()
	obj, _ := e.stored(e.quotas(), name)
	if obj == nil {
		e.t.Fatalf("no quota %s", name)
	}
	return obj.(*corev1.ResourceQuota).Status.Used
}

// checkI1 fails unless every stored quota's status.used equals the usage its objects
// charge, for every name of its status.hard (design.md §2, I1).
func (e *planEnv) checkI1(context string) {
	e.t.Helper()
	for _, kv := range e.kv.list(e.quotas().KeyPrefix(planNS)) {
		q := e.decode(e.quotas(), kv).(*corev1.ResourceQuota)
		want, err := quota.CalculateUsage(q, e.reg, e.objects)
		if err != nil {
			e.t.Fatal(err)
		}
		// A quota whose status.hard a /status write set apart from spec.hard is exact on
		// spec.hard's names (what charges judge and keep) until the writer restores it.
		names := quota.ResourceNames(q.Status.Hard)
		if !Settled(q) {
			names = quota.ResourceNames(q.Spec.Hard)
			want, err = quota.CalculateUsage(&corev1.ResourceQuota{Spec: q.Spec, Status: corev1.ResourceQuotaStatus{Hard: q.Spec.Hard}}, e.reg, e.objects)
			if err != nil {
				e.t.Fatal(err)
			}
		}
		if got := quota.Mask(q.Status.Used, names); !quota.Equals(got, quota.Mask(want, names)) {
			e.t.Fatalf("%s: I1: quota %s used %v, its objects charge %v", context, q.Name, got, want)
		}
	}
}

func forbiddenRefusal(err error) bool { return apierrors.IsForbidden(err) }

// TestPlanBatch: table tests of one plan on a known state: the results, the transaction's
// compares and ops, and the next state.
func TestPlanBatch(t *testing.T) {
	type setup struct {
		quotas []*corev1.ResourceQuota
		pods   []*corev1.Pod
	}
	cpuQuota := []*corev1.ResourceQuota{newQuota("q", hardOf("requests.cpu", "1", "pods", "3"))}
	cases := []struct {
		name  string
		setup setup
		// writes builds the batch on the environment as set up.
		writes    func(e *planEnv) []*Write
		pipelined bool
		// refused lists the indexes of the writes refused.
		refused []int
		// included is how many writes the transaction stores; validate whether it must run
		// even when it stores none.
		included int
		validate bool
		// used is the quota q's status.used in the next state ("" entries: not checked).
		used corev1.ResourceList
		// keys are the keys the transaction puts or deletes, in order.
		keys []string
	}{
		{
			name:  "two creates charge one quota write",
			setup: setup{quotas: cpuQuota},
			writes: func(e *planEnv) []*Write {
				return []*Write{e.createPod(newPod("a", "300m", "")), e.createPod(newPod("b", "500m", ""))}
			},
			pipelined: true,
			included:  2,
			used:      hardOf("requests.cpu", "800m", "pods", "2"),
			keys:      []string{"/registry/pods/ns/a", "/registry/pods/ns/b", "/registry/resourcequotas/ns/q"},
		},
		{
			name:  "the write past hard is refused, the next one still fits",
			setup: setup{quotas: cpuQuota},
			writes: func(e *planEnv) []*Write {
				return []*Write{e.createPod(newPod("a", "700m", "")), e.createPod(newPod("b", "500m", "")), e.createPod(newPod("c", "300m", ""))}
			},
			pipelined: true,
			refused:   []int{1},
			included:  2,
			validate:  true,
			used:      hardOf("requests.cpu", "1", "pods", "2"),
			keys:      []string{"/registry/pods/ns/a", "/registry/pods/ns/c", "/registry/resourcequotas/ns/q"},
		},
		{
			name:  "a delete credits what a create then takes",
			setup: setup{quotas: cpuQuota, pods: []*corev1.Pod{newPod("old", "800m", "")}},
			writes: func(e *planEnv) []*Write {
				return []*Write{e.createPod(newPod("a", "800m", "")), e.deletePod("old"), e.createPod(newPod("b", "800m", ""))}
			},
			refused:  []int{0},
			included: 2,
			validate: true,
			used:     hardOf("requests.cpu", "800m", "pods", "1"),
			keys:     []string{"/registry/pods/ns/old", "/registry/pods/ns/b", "/registry/resourcequotas/ns/q"},
		},
		{
			name:  "a pod reaching Succeeded through /status is credited",
			setup: setup{quotas: cpuQuota, pods: []*corev1.Pod{newPod("p", "600m", corev1.PodRunning)}},
			writes: func(e *planEnv) []*Write {
				return []*Write{e.podUpdate("status", "p", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}
			},
			pipelined: true,
			included:  1,
			used:      hardOf("requests.cpu", "0", "pods", "0"),
			keys:      []string{"/registry/pods/ns/p", "/registry/resourcequotas/ns/q"},
		},
		{
			name:  "a dry run is judged and confirmed, never stored nor charged",
			setup: setup{quotas: cpuQuota},
			writes: func(e *planEnv) []*Write {
				p := newPod("a", "300m", "")
				return []*Write{e.newWrite(e.pods(), admission.Create, "", "a", p, nil, 0, true, false)}
			},
			pipelined: true,
			validate:  true,
			used:      hardOf("requests.cpu", "0", "pods", "0"),
			keys:      []string{"/registry/quotad.io/usage-epoch/ns/"},
		},
		{
			name:  "a write that skipped Prepare is prepared when a quota appeared",
			setup: setup{quotas: cpuQuota},
			writes: func(e *planEnv) []*Write {
				p := newPod("a", "300m", "")
				return []*Write{e.newWrite(e.pods(), admission.Create, "", "a", p, nil, 0, false, true)}
			},
			pipelined: true,
			included:  1,
			used:      hardOf("requests.cpu", "300m", "pods", "1"),
			keys:      []string{"/registry/pods/ns/a", "/registry/resourcequotas/ns/q"},
		},
		{
			name:  "no quota: the object and its epoch",
			setup: setup{},
			writes: func(e *planEnv) []*Write {
				return []*Write{e.createPod(newPod("a", "300m", ""))}
			},
			pipelined: true,
			included:  1,
			keys:      []string{"/registry/pods/ns/a", "/registry/quotad.io/usage-epoch/ns/pods"},
		},
		{
			name:  "a quota create gets its status from the objects and puts the quota set",
			setup: setup{pods: []*corev1.Pod{newPod("a", "300m", ""), newPod("done", "1", corev1.PodFailed)}},
			writes: func(e *planEnv) []*Write {
				return []*Write{e.createQuota(newQuota("q", hardOf("requests.cpu", "2", "pods", "5")))}
			},
			included: 1,
			keys:     []string{"/registry/resourcequotas/ns/q", QuotaSetKey(planNS)},
		},
		{
			name:  "a quota's deletion puts the epoch (a range compare cannot see a deleted key)",
			setup: setup{quotas: cpuQuota},
			writes: func(e *planEnv) []*Write {
				old, rev := e.stored(e.quotas(), "q")
				return []*Write{e.newWrite(e.quotas(), admission.Delete, "", "q", nil, old, rev, false, false)}
			},
			included: 1,
			keys: []string{"/registry/resourcequotas/ns/q", QuotaSetKey(planNS),
				"/registry/quotad.io/usage-epoch/ns/resourcequotas"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newPlanEnv(t)
			for _, q := range c.setup.quotas {
				e.commitSolo(e.createQuota(q.DeepCopy()))
			}
			for _, p := range c.setup.pods {
				e.commitSolo(e.createPod(p.DeepCopy()))
			}
			st := e.read()
			writes := c.writes(e)
			var mine *batchDone
			if c.pipelined {
				mine = &batchDone{}
			}
			plan, err := e.plan(st, writes, mine)
			if err != nil {
				t.Fatal(err)
			}
			var refused []int
			for i, r := range plan.results {
				if r != nil {
					if !forbiddenRefusal(r) {
						t.Errorf("write %d: %v, want a Forbidden refusal", i, r)
					}
					refused = append(refused, i)
				}
			}
			if fmt.Sprint(refused) != fmt.Sprint(c.refused) {
				t.Errorf("refused %v, want %v (results %v)", refused, c.refused, plan.results)
			}
			if plan.included != c.included || plan.validate != c.validate {
				t.Errorf("included %d, validate %v; want %d, %v", plan.included, plan.validate, c.included, c.validate)
			}
			var keys []string
			for _, op := range plan.txn.Ops {
				keys = append(keys, op.Key)
			}
			if strings.Join(keys, " ") != strings.Join(c.keys, " ") {
				t.Errorf("ops on\n %v\nwant\n %v", keys, c.keys)
			}
			if plan.pipelined != c.pipelined {
				t.Errorf("pipelined %v", plan.pipelined)
			}
			// The guards: every written object by its revision; solo plans the quota-set
			// prefix at the read revision, pipelined ones the quota set's revision; a quota
			// write's status the quota prefix and usage epochs at the read revision.
			guarded := map[string]storage.Compare{}
			for _, cmp := range plan.txn.Compares {
				guarded[cmp.Key] = cmp
			}
			for _, w := range writes {
				if w.Attrs.DryRun {
					continue
				}
				if cmp, ok := guarded[w.Key]; ok && (cmp.Target != storage.ModRevisionEquals || cmp.Revision != w.Guard) {
					t.Errorf("object %s guarded by %+v, want its revision %d", w.Key, cmp, w.Guard)
				}
			}
			prefix, set := guarded[e.quotas().KeyPrefix(planNS)], guarded[QuotaSetKey(planNS)]
			if c.pipelined {
				if set.Target != storage.ModRevisionEquals || set.Revision != st.setRev {
					t.Errorf("quota set guarded by %+v, want revision %d", set, st.setRev)
				}
			} else if set.Target != storage.RangeNotModifiedAfter || set.Revision != st.readRev {
				t.Errorf("quota set guarded by %+v, want its prefix not modified after %d", set, st.readRev)
			}
			if computes := slices.ContainsFunc(writes, func(w *Write) bool { return isQuotaWrite(w) && w.Obj != nil }); computes &&
				(prefix.Target != storage.RangeNotModifiedAfter || prefix.Revision != st.readRev) {
				t.Errorf("quota prefix guarded by %+v, want not modified after %d", prefix, st.readRev)
			}
			if c.used != nil {
				var got corev1.ResourceList
				for _, q := range plan.next.quotas {
					if q.Name == "q" {
						got = q.Status.Used
					}
				}
				if !quota.Equals(got, c.used) {
					t.Errorf("next state used %v, want %v", got, c.used)
				}
			}
			// The plan runs on the state it was planned on, and I1 holds after it.
			if e.kv.txn(plan.txn) == 0 {
				t.Fatalf("the transaction failed its guards on the state it was planned on: %+v", plan.txn.Compares)
			}
			e.checkI1(c.name)
		})
	}
}

// TestPlanBatchPipelinedGuards: a batch planned on the state the previous one leaves
// guards each quota it takes from it by the bytes it writes: it commits after the previous
// batch, and fails when that one did not commit (or when another writer moved the quota).
func TestPlanBatchPipelinedGuards(t *testing.T) {
	for _, firstCommits := range []bool{true, false} {
		e := newPlanEnv(t)
		e.commitSolo(e.createQuota(newQuota("q", hardOf("requests.cpu", "1"))))
		st := e.read()
		mine1, mine2 := &batchDone{}, &batchDone{}
		p1, err := e.plan(st, []*Write{e.createPod(newPod("a", "400m", ""))}, mine1)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := e.plan(p1.next, []*Write{e.createPod(newPod("b", "600m", "")), e.createPod(newPod("c", "1m", ""))}, mine2)
		if err != nil {
			t.Fatal(err)
		}
		if p2.results[0] != nil || p2.results[1] == nil {
			t.Fatalf("second batch results %v: want b admitted on a's usage, c refused", p2.results)
		}
		if len(p2.pending) == 0 {
			t.Fatal("second plan has no value guard on the quota the first writes")
		}
		if firstCommits {
			mine1.rev.Store(e.kv.txn(p1.txn))
		} else {
			// Another writer moves the quota first: the first batch fails its guard.
			e.commitSolo(e.createPod(newPod("x", "100m", "")))
			if e.kv.txn(p1.txn) != 0 {
				t.Fatal("first batch committed on a moved quota")
			}
		}
		p2.resolveGuards()
		rev := e.kv.txn(p2.txn)
		if got := rev != 0; got != firstCommits {
			t.Fatalf("first batch committed %v: second committed %v", firstCommits, got)
		}
		e.checkI1(fmt.Sprint("first commits ", firstCommits))
		if firstCommits && !quota.Equals(e.used("q"), hardOf("requests.cpu", "1")) {
			t.Errorf("used %v after both batches, want requests.cpu 1", e.used("q"))
		}
	}
}

// TestPlanBatchErrors: a write's own quota error is its result; a failed object list
// fails the plan of a quota write.
func TestPlanBatchErrors(t *testing.T) {
	e := newPlanEnv(t)
	e.commitSolo(e.createQuota(newQuota("q", hardOf("pods", "5"))))
	bad := e.createPod(newPod("a", "1", ""))
	prepErr := apierrors.NewForbidden(podsGVR.GroupResource(), "a", errors.New("prepared badly"))
	bad.Decision, bad.DecisionErr = nil, prepErr
	plan, err := e.plan(e.read(), []*Write{bad, e.createPod(newPod("b", "1", ""))}, &batchDone{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.results[0] != prepErr || plan.results[1] != nil || plan.included != 1 || !plan.judged[0] || !plan.judged[1] {
		t.Fatalf("results %v, included %d, judged %v: want the prepare error, then b included, both judged", plan.results, plan.included, plan.judged)
	}

	e.listErr = errors.New("list failed")
	plan, err = e.plan(e.read(), []*Write{e.createQuota(newQuota("q2", hardOf("pods", "1")))}, nil)
	if err == nil || !apierrors.IsInternalError(err) {
		t.Fatalf("plan error %v, want an internal error", err)
	}
	if plan == nil || len(plan.judged) != 1 || !plan.judged[0] {
		t.Fatalf("failed plan %+v: want judged kept", plan)
	}
}

// TestTakeBatch: a quota write alone; otherwise writes up to the first repeated key, the
// first one asking to be alone, maxBatchWrites or maxBatchBytes.
func TestTakeBatch(t *testing.T) {
	e := newPlanEnv(t)
	pod := func(name string, size int) *pending {
		w := e.createPod(newPod(name, "1m", ""))
		w.Size = size
		return &pending{w: w}
	}
	q := func(name string) *pending { return &pending{w: e.createQuota(newQuota(name, hardOf("pods", "1")))} }
	alone := func(p *pending) *pending { p.alone = true; return p }
	many := func(n int) []*pending {
		var out []*pending
		for i := 0; i < n; i++ {
			out = append(out, pod(fmt.Sprint("p", i), 10))
		}
		return out
	}
	cases := []struct {
		name    string
		waiting []*pending
		want    []int // sizes of the successive batches
	}{
		{"empty", nil, nil},
		{"all together", many(5), []int{5}},
		{"quota write alone", []*pending{pod("a", 1), pod("b", 1), q("q"), pod("c", 1)}, []int{2, 1, 1}},
		{"quota write first", []*pending{q("q"), q("r"), pod("a", 1)}, []int{1, 1, 1}},
		{"same key splits", []*pending{pod("a", 1), pod("b", 1), pod("a", 1), pod("c", 1)}, []int{2, 2}},
		{"alone", []*pending{pod("a", 1), alone(pod("b", 1)), pod("c", 1)}, []int{1, 1, 1}},
		{"at most maxBatchWrites", many(maxBatchWrites + 3), []int{maxBatchWrites, 3}},
		{"bytes", []*pending{pod("a", maxBatchBytes/2), pod("b", maxBatchBytes/2), pod("c", 1), pod("d", maxBatchBytes+1)}, []int{2, 1, 1}},
	}
	for _, c := range cases {
		nq := &nsQueue{waiting: c.waiting}
		var got []int
		seen := 0
		for {
			b := takeBatch(nq)
			if len(b) == 0 {
				break
			}
			for i, p := range b {
				if p != c.waiting[seen+i] {
					t.Fatalf("%s: batch out of arrival order", c.name)
				}
			}
			seen += len(b)
			got = append(got, len(b))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: batches %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPlanBatchSoloGuards: a solo batch guards the quotas it charges by revision and the
// quota set (with the turn) at the read revision. Another quota's usage moving does not fail
// it, unless a write was refused (the refusal is confirmed on every quota); a quota created,
// or repaired, since the read does, as does a claim of the turn; a quota write's status,
// computed at the read revision, fails when anything it counts was written since.
func TestPlanBatchSoloGuards(t *testing.T) {
	bestEffort := func(name string) *corev1.Pod {
		p := newPod(name, "0", "")
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		return p
	}
	scoped := func(name, pods string, scope corev1.ResourceQuotaScope) *corev1.ResourceQuota {
		q := newQuota(name, hardOf("pods", pods))
		q.Spec.Scopes = []corev1.ResourceQuotaScope{scope}
		return q
	}
	onePod := func(e *planEnv) []*Write { return []*Write{e.createPod(newPod("a", "300m", ""))} }
	newQuotaWrite := func(e *planEnv) []*Write {
		return []*Write{e.createQuota(newQuota("more", hardOf("requests.cpu", "5")))}
	}
	for _, c := range []struct {
		name string
		// writes is the batch planned solo on a read; meanwhile writes before it commits.
		writes    func(e *planEnv) []*Write
		meanwhile func(e *planEnv)
		commits   bool
	}{
		{
			name:      "a quota the batch does not charge moves",
			writes:    onePod,
			meanwhile: func(e *planEnv) { e.commitSolo(e.createPod(bestEffort("x"))) },
			commits:   true,
		},
		{
			name:      "a quota the batch charges moves",
			writes:    onePod,
			meanwhile: func(e *planEnv) { e.commitSolo(e.createPod(newPod("x", "100m", ""))) },
		},
		{
			name: "a refusal, and a quota the batch does not charge moves",
			writes: func(e *planEnv) []*Write {
				return []*Write{e.createPod(newPod("a", "300m", "")), e.createPod(newPod("b", "300m", ""))}
			},
			meanwhile: func(e *planEnv) { e.commitSolo(e.createPod(bestEffort("x"))) },
		},
		{
			name:      "a quota created",
			writes:    onePod,
			meanwhile: func(e *planEnv) { e.commitSolo(e.createQuota(newQuota("pods", hardOf("pods", "10")))) },
		},
		{
			name:   "the quota set put (a quota's status repaired)",
			writes: onePod,
			meanwhile: func(e *planEnv) {
				e.kv.txn(storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: QuotaSetKey(planNS)}}})
			},
		},
		{
			name:   "the turn claimed by another replica",
			writes: onePod,
			meanwhile: func(e *planEnv) {
				e.kv.txn(storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: TurnKey(planNS), Value: claimValue("other")}}})
			},
		},
		{
			name:      "a quota created while a pod is charged to another",
			writes:    newQuotaWrite,
			meanwhile: func(e *planEnv) { e.commitSolo(e.createPod(newPod("x", "100m", ""))) },
		},
		{
			name:   "a quota created while a pod charged to none is written",
			writes: newQuotaWrite,
			meanwhile: func(e *planEnv) {
				e.commitSolo(e.podUpdate("", "old", func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }))
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newPlanEnv(t)
			e.commitSolo(e.createQuota(scoped("nbe", "2", corev1.ResourceQuotaScopeNotBestEffort)))
			e.commitSolo(e.createQuota(scoped("be", "5", corev1.ResourceQuotaScopeBestEffort)))
			e.commitSolo(e.createPod(newPod("old", "100m", "")))
			plan, err := e.plan(e.read(), c.writes(e), nil)
			if err != nil {
				t.Fatal(err)
			}
			before := e.kv.rev
			c.meanwhile(e)
			if e.kv.rev == before {
				t.Fatal("the write meanwhile stored nothing")
			}
			if committed := e.kv.txn(plan.txn) != 0; committed != c.commits {
				t.Fatalf("committed %v, want %v; results %v, compares %+v", committed, c.commits, plan.results, plan.txn.Compares)
			}
			e.checkI1(c.name)
		})
	}
}
