package commit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/storage"
)

func init() {
	testKinds[namespacesGR] = &kind{gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), gvk: corev1.SchemeGroupVersion.WithKind("Namespace"),
		new: func() runtime.Object { return &corev1.Namespace{} }}
	testKinds[crqGR] = &kind{gvr: clusterquota.SchemeGroupVersion.WithResource("clusterresourcequotas"), gvk: clusterquota.SchemeGroupVersion.WithKind("ClusterResourceQuota"),
		new: func() runtime.Object { return &clusterquota.ClusterResourceQuota{} }}
}

// listingEnv is testEnv whose object lists read the store at a revision, as recomputations
// (of a cluster quota, of a namespace's usage under one) do.
type listingEnv struct {
	testEnv
	store *memStore
}

func (e listingEnv) List(ctx context.Context, gr schema.GroupResource, ns string, rev int64) ([]runtime.Object, error) {
	lr, err := e.store.List(ctx, e.KeyPrefix(gr, ns), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, kv := range lr.KVs {
		obj, err := e.Decode(gr, kv)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// TestClusterQuotaRecomputeSeesQuotaCharges: a transaction that charges one of its
// namespace's quotas puts no usage epoch (planBatch), so a cluster quota's recomputation
// must learn from the namespace's quotas that what it counted changed. A pod is committed
// between the recomputation's read and its transaction: the transaction fails, and the
// status it commits on the next attempt counts the pod.
func TestClusterQuotaRecomputeSeesQuotaCharges(t *testing.T) {
	r := newRecomputeRun(t, map[string]string{"team": "a"})
	r.raceBefore(r.crqKey)
	if _, err := r.e.Commit(r.ctx, r.crqWrite()); err != nil {
		t.Fatal(err)
	}
	r.check()
}

// TestNamespaceMoveSeesQuotaCharges: the same for a namespace relabelled into a cluster
// quota, whose usage the move counts at one revision.
func TestNamespaceMoveSeesQuotaCharges(t *testing.T) {
	r := newRecomputeRun(t, nil)
	if _, err := r.e.Commit(r.ctx, r.crqWrite()); err != nil {
		t.Fatal(err)
	}
	kv := r.h.kv.keys[r.nsKey]
	old, err := r.env.Decode(namespacesGR, kv)
	if err != nil {
		t.Fatal(err)
	}
	ns := old.DeepCopyObject().(*corev1.Namespace)
	ns.Labels = map[string]string{"team": "a"}
	b, err := r.env.Encode(namespacesGR, ns)
	if err != nil {
		t.Fatal(err)
	}
	w := &Write{GR: namespacesGR, Key: r.nsKey, Obj: ns, Value: b, Guard: kv.ModRevision, Attrs: &admission.Attributes{Operation: admission.Update,
		Name: planNS, Object: ns, OldObject: old, Resource: testKinds[namespacesGR].gvr, Kind: testKinds[namespacesGR].gvk}}
	r.raceBefore(r.nsKey)
	if _, err := r.e.Commit(r.ctx, w); err != nil {
		t.Fatal(err)
	}
	r.check()
}

// recomputeRun is a namespace with quota q (10 pods) and pod a, and an engine whose
// transaction writing a given key first lets pod b commit.
type recomputeRun struct {
	t             *testing.T
	ctx           context.Context
	h             *turnHarness
	env           listingEnv
	rs            *replicaStore
	e             *Engine
	crqKey, nsKey string
	pod           *Write
}

func newRecomputeRun(t *testing.T, labels map[string]string) *recomputeRun {
	h := newTurnHarness(t, "pods", "10")
	r := &recomputeRun{t: t, ctx: context.Background(), h: h, env: listingEnv{store: h.store}}
	r.crqKey = r.env.KeyPrefix(crqGR, "") + "c"
	r.nsKey = r.env.KeyPrefix(namespacesGR, "") + planNS
	b, err := r.env.Encode(namespacesGR, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: planNS, Labels: labels}})
	if err != nil {
		t.Fatal(err)
	}
	h.kv.txn(storageTxnPut(r.nsKey, b))
	h.commitSolo(h.createPod(newPod("a", "10m", "")))
	r.rs = &replicaStore{memStore: h.store}
	r.e = New(Config{Storage: r.rs, Env: r.env, Quota: h.acct, MaxRetries: 5, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return r
}

// crqWrite creates cluster quota c (100 pods) selecting team=a.
func (r *recomputeRun) crqWrite() *Write {
	crq := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "c"},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
			Quota:    corev1.ResourceQuotaSpec{Hard: hardOf("pods", "100")},
		},
	}
	return &Write{GR: crqGR, Key: r.crqKey, Obj: crq, Attrs: &admission.Attributes{Operation: admission.Create, Name: "c", Object: crq,
		Resource: testKinds[crqGR].gvr, Kind: testKinds[crqGR].gvk}}
}

// raceBefore commits pod b before the first transaction that puts key.
func (r *recomputeRun) raceBefore(key string) {
	r.rs.beforeTxn = func(txn storage.Txn) error {
		if r.pod != nil || !slicesContainsPut(txn.Ops, key) {
			return nil
		}
		r.pod = r.h.createPod(newPod("b", "10m", ""))
		if _, err := r.e.Commit(r.ctx, r.pod); err != nil {
			r.t.Errorf("pod committed during the recomputation: %v", err)
		}
		return nil
	}
}

// check: pod b's transaction charged quota q without an epoch, the recomputation's
// first transaction failed, and the cluster quota counts both pods.
func (r *recomputeRun) check() {
	t := r.t
	t.Helper()
	if r.pod == nil {
		t.Fatal("the recomputation's transaction was never sent")
	}
	if stored, _ := r.h.committedWith(r.pod.Key); !stored {
		t.Fatal("pod b not stored")
	}
	for _, rev := range r.h.kv.log {
		if !slicesContainsPut(rev.ops, r.pod.Key) {
			continue
		}
		for _, op := range rev.ops {
			if strings.HasPrefix(op.Key, epochPrefix) {
				t.Errorf("the pod's transaction put the epoch %s although it put its quota", op.Key)
			}
		}
		if !slicesContainsPut(rev.ops, r.h.quotas().Key(planNS, "q")) {
			t.Errorf("the pod's transaction did not charge quota q")
		}
	}
	if r.rs.conflicts.Load() == 0 {
		t.Error("the recomputation's first transaction did not fail")
	}
	var got clusterquota.ClusterResourceQuota
	if err := json.Unmarshal(r.h.kv.keys[r.crqKey].Value, &got); err != nil {
		t.Fatal(err)
	}
	if used := got.Status.Total.Used["pods"]; used.Value() != 2 {
		t.Errorf("cluster quota counts %s pods, want 2", used.String())
	}
}

func slicesContainsPut(ops []storage.Op, key string) bool {
	for _, op := range ops {
		if op.Type == storage.OpPut && op.Key == key {
			return true
		}
	}
	return false
}

// TestDeletedClusterQuotaForgotten: the slot of a deleted cluster quota keeps nothing of
// it (its value, its object with a status entry per namespace, the encoder's entries):
// cluster quotas created and deleted under ever new names would otherwise hold memory
// for as long as the process runs.
func TestDeletedClusterQuotaForgotten(t *testing.T) {
	r := newRecomputeRun(t, map[string]string{"team": "a"})
	create := r.crqWrite()
	rev, err := r.e.Commit(r.ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	sl := r.e.crq.slot("c")
	if sl.obj == nil || sl.rev != rev {
		t.Fatalf("after the create the slot holds %v at %d, want the cluster quota at %d", sl.obj, sl.rev, rev)
	}
	del := &Write{GR: crqGR, Key: r.crqKey, Guard: rev, Attrs: &admission.Attributes{Operation: admission.Delete, Name: "c",
		OldObject: create.Obj, Resource: testKinds[crqGR].gvr, Kind: testKinds[crqGR].gvk}}
	if _, err := r.e.Commit(r.ctx, del); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.h.kv.keys[r.crqKey]; ok {
		t.Fatal("the cluster quota is still stored")
	}
	if sl.obj != nil || sl.value != nil || sl.rev != 0 || !reflect.ValueOf(sl.enc).IsZero() {
		t.Errorf("the deleted cluster quota's slot keeps obj %v, %d bytes, revision %d, encoder %+v", sl.obj, len(sl.value), sl.rev, sl.enc)
	}
}
