package garbagecollector

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

var (
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	rsGVR  = appsv1.SchemeGroupVersion.WithResource("replicasets")
)

// harness runs a collector over the fake client, feeding it the client's changes as its
// watches would and working its queue until both are empty.
type harness struct {
	t    *testing.T
	fc   *fake.Client
	c    *Collector
	seen int
}

func newHarness(t *testing.T) *harness {
	fc := fake.New(nil)
	c := New(fc, nil, Options{})
	c.q = controller.NewQueue("garbagecollector-test")
	t.Cleanup(c.q.ShutDown)
	return &harness{t: t, fc: fc, c: c}
}

// settle delivers every change to the graph and processes every work item, until nothing
// is left to do.
func (h *harness) settle() {
	h.t.Helper()
	ctx := context.Background()
	for i := 0; ; i++ {
		if i > 1000 {
			h.t.Fatal("the collector does not settle")
		}
		changes, next := h.fc.Changes(h.seen)
		h.seen = next
		for _, ch := range changes {
			h.c.observe(ch.Res, ch.Object, ch.Type == watch.Deleted)
		}
		if h.c.q.Len() == 0 {
			if len(changes) == 0 {
				return
			}
			continue
		}
		key, _ := h.c.q.Get()
		if _, err := h.c.process(ctx, key); err != nil {
			h.t.Fatalf("process %s: %v", key, err)
		}
		h.c.q.Done(key)
	}
}

func (h *harness) delete(gvrRes string, ns, name string, policy metav1.DeletionPropagation) {
	h.t.Helper()
	res := h.fc.Catalogue().Get(rsGVR)
	if gvrRes == "pods" {
		res = h.fc.Catalogue().Get(podGVR)
	}
	if _, err := h.fc.Delete(context.Background(), res, ns, name, metav1.DeleteOptions{PropagationPolicy: &policy}, registryWrite); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) pod(name string) *corev1.Pod {
	if o := h.fc.Object(podGVR, "ns", name); o != nil {
		return o.(*corev1.Pod)
	}
	return nil
}

func (h *harness) rs(name string) *appsv1.ReplicaSet {
	if o := h.fc.Object(rsGVR, "ns", name); o != nil {
		return o.(*appsv1.ReplicaSet)
	}
	return nil
}

func owner(name string, uid types.UID) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid}}
}

func ref(name string, uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: uid, BlockOwnerDeletion: &block}
}

func dependent(name string, finalizers []string, refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: refs, Finalizers: finalizers}}
}

func TestBackgroundDeletesDependents(t *testing.T) {
	h := newHarness(t)
	h.fc.Add(owner("rs", "rs-uid"), dependent("a", nil, ref("rs", "rs-uid", true)), dependent("b", nil, ref("rs", "rs-uid", false)),
		dependent("other", nil, ref("keep", "keep-uid", true)), owner("keep", "keep-uid"))
	h.settle()
	if h.pod("a") == nil || h.pod("b") == nil {
		t.Fatal("dependents of a live owner were collected")
	}
	h.delete("replicasets", "ns", "rs", metav1.DeletePropagationBackground)
	h.settle()
	if h.rs("rs") != nil || h.pod("a") != nil || h.pod("b") != nil {
		t.Fatalf("after a background delete: owner %v, a %v, b %v", h.rs("rs"), h.pod("a"), h.pod("b"))
	}
	if h.pod("other") == nil {
		t.Fatal("the dependent of another owner was collected")
	}
}

func TestDanglingAtStart(t *testing.T) {
	// Owners gone before the collector starts, recreated under the same name (another UID),
	// of a kind no resource serves, and a cluster-scoped dependent naming a namespaced owner.
	h := newHarness(t)
	h.fc.Add(owner("recreated", "new-uid"),
		dependent("gone", nil, ref("missing", "missing-uid", true)),
		dependent("stale", nil, ref("recreated", "old-uid", true)),
		dependent("unknown", nil, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "w-uid"}),
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster", OwnerReferences: []metav1.OwnerReference{ref("recreated", "other-uid", false)}}},
	)
	h.settle()
	if h.pod("gone") != nil || h.pod("stale") != nil {
		t.Error("dependents of missing or recreated owners were kept")
	}
	if h.pod("unknown") == nil {
		t.Error("a dependent whose owner's kind cannot be checked was collected")
	}
	if h.fc.Object(rbacv1.SchemeGroupVersion.WithResource("clusterroles"), "", "cluster") != nil {
		t.Error("a cluster-scoped dependent of a namespaced owner was kept")
	}
	if h.rs("recreated") == nil {
		t.Error("the recreated owner was deleted")
	}
}

func TestSurvivingOwnerKeepsDependent(t *testing.T) {
	h := newHarness(t)
	h.fc.Add(owner("one", "one-uid"), owner("two", "two-uid"),
		dependent("shared", nil, ref("one", "one-uid", true), ref("two", "two-uid", true)))
	h.settle()
	h.delete("replicasets", "ns", "one", metav1.DeletePropagationBackground)
	h.settle()
	p := h.pod("shared")
	if p == nil {
		t.Fatal("a dependent with a live owner was collected")
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "two-uid" {
		t.Fatalf("owner references %+v, want only two's", p.OwnerReferences)
	}
}

func TestOrphanRemovesReferences(t *testing.T) {
	h := newHarness(t)
	h.fc.Add(owner("rs", "rs-uid"), dependent("a", nil, ref("rs", "rs-uid", true)),
		dependent("b", nil, ref("rs", "rs-uid", true), ref("keep", "keep-uid", true)), owner("keep", "keep-uid"))
	h.settle()
	h.delete("replicasets", "ns", "rs", metav1.DeletePropagationOrphan)
	if r := h.rs("rs"); r == nil || r.DeletionTimestamp == nil {
		t.Fatalf("orphan delete should leave the owner deleting, got %+v", r)
	}
	h.settle()
	if h.rs("rs") != nil {
		t.Fatal("the owner was kept after its dependents were orphaned")
	}
	if a := h.pod("a"); a == nil || len(a.OwnerReferences) != 0 {
		t.Fatalf("a = %+v, want kept without owner references", a)
	}
	if b := h.pod("b"); b == nil || len(b.OwnerReferences) != 1 || b.OwnerReferences[0].UID != "keep-uid" {
		t.Fatalf("b = %+v, want kept with only keep's reference", b)
	}
}

func TestForegroundWaitsForBlockingDependents(t *testing.T) {
	h := newHarness(t)
	// "held" has a finalizer of its own: it stays deleting, blocking its owner, until a
	// test releases it; "free" does not block (blockOwnerDeletion false).
	h.fc.Add(owner("rs", "rs-uid"),
		dependent("held", []string{"example.com/hold"}, ref("rs", "rs-uid", true)),
		dependent("plain", nil, ref("rs", "rs-uid", true)))
	h.settle()
	h.delete("replicasets", "ns", "rs", metav1.DeletePropagationForeground)
	h.settle()
	if h.pod("plain") != nil {
		t.Fatal("a dependent of a foreground deletion was kept")
	}
	held := h.pod("held")
	if held == nil || held.DeletionTimestamp == nil {
		t.Fatalf("held = %+v, want deleting", held)
	}
	r := h.rs("rs")
	if r == nil || !hasFinalizer(r.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("owner %+v deleted while a blocking dependent remains", r)
	}
	// Releasing the dependent deletes it, and then the owner.
	podRes := h.fc.Catalogue().Get(podGVR)
	if _, err := h.fc.Update(context.Background(), podRes, "ns", "held", "", func(o runtimeObject) (runtimeObject, error) {
		o.(*corev1.Pod).Finalizers = nil
		return o, nil
	}, registryWrite); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if h.pod("held") != nil || h.rs("rs") != nil {
		t.Fatalf("after release: held %v, owner %v", h.pod("held"), h.rs("rs"))
	}
}

func TestForegroundIgnoresNonBlockingDependents(t *testing.T) {
	h := newHarness(t)
	h.fc.Add(owner("rs", "rs-uid"), dependent("free", []string{"example.com/hold"}, ref("rs", "rs-uid", false)))
	h.settle()
	h.delete("replicasets", "ns", "rs", metav1.DeletePropagationForeground)
	h.settle()
	if h.rs("rs") != nil {
		t.Fatal("a dependent without blockOwnerDeletion held its owner's foreground deletion")
	}
	if f := h.pod("free"); f == nil || f.DeletionTimestamp == nil {
		t.Fatalf("free = %+v, want deleting (held by its own finalizer)", f)
	}
}

func TestForegroundCascadesThroughLevels(t *testing.T) {
	// rs → pod "mid" (a ReplicaSet owning a pod through two levels is modelled with a
	// second ReplicaSet): deleting the top in foreground deletes the middle in foreground,
	// and the top only after both levels are gone.
	h := newHarness(t)
	mid := owner("mid", "mid-uid")
	mid.OwnerReferences = []metav1.OwnerReference{ref("top", "top-uid", true)}
	h.fc.Add(owner("top", "top-uid"), mid, dependent("leaf", nil, ref("mid", "mid-uid", true)))
	h.settle()
	h.delete("replicasets", "ns", "top", metav1.DeletePropagationForeground)
	h.settle()
	if h.rs("top") != nil || h.rs("mid") != nil || h.pod("leaf") != nil {
		t.Fatalf("top %v, mid %v, leaf %v: want all gone", h.rs("top"), h.rs("mid"), h.pod("leaf"))
	}
	// The leaf went before the middle, and the middle before the top.
	var order []string
	for _, a := range h.fc.Actions() {
		if a.Err == nil && (a.Verb == "delete" || a.Verb == "update") {
			order = append(order, a.Verb+" "+a.Resource+"/"+a.Name)
		}
	}
	idx := func(s string) int {
		for i, o := range order {
			if o == s {
				return i
			}
		}
		t.Fatalf("%q not in %v", s, order)
		return -1
	}
	if !(idx("delete pods/leaf") < idx("update replicasets/mid") && idx("update replicasets/mid") < idx("update replicasets/top")) {
		t.Fatalf("writes in order %v", order)
	}
}

func TestForegroundCycleUnblocks(t *testing.T) {
	// a owns b and b owns a, both blocking; deleting a in foreground must not wait forever.
	h := newHarness(t)
	a, b := owner("a", "a-uid"), owner("b", "b-uid")
	a.OwnerReferences = []metav1.OwnerReference{ref("b", "b-uid", true)}
	b.OwnerReferences = []metav1.OwnerReference{ref("a", "a-uid", true)}
	h.fc.Add(a, b)
	h.settle()
	h.delete("replicasets", "ns", "a", metav1.DeletePropagationForeground)
	h.settle()
	if h.rs("a") != nil || h.rs("b") != nil {
		t.Fatalf("a %+v, b %+v: a foreground cycle was left waiting", h.rs("a"), h.rs("b"))
	}
}

type runtimeObject = runtime.Object

var registryWrite = registry.WriteOptions{}

// TestLeavesKeptByUID: objects without owners, finalizers or a deletion under way are kept
// by UID alone, and still count as live owners; an object moves between leaf and node as
// its owner references come and go, and is collected or kept accordingly.
func TestLeavesKeptByUID(t *testing.T) {
	h := newHarness(t)
	h.fc.Add(owner("rs", "rs-uid"), dependent("owned", nil, ref("rs", "rs-uid", true)), dependent("bare", nil),
		dependent("freed", nil, ref("rs", "rs-uid", true)))
	h.settle()
	uid := func(name string) types.UID { return h.pod(name).UID }
	isLeaf := func(u types.UID) bool {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		_, leaf := h.c.leaves[u]
		_, node := h.c.nodes[u]
		if leaf == node {
			t.Fatalf("%s: leaf %v, node %v: want exactly one", u, leaf, node)
		}
		return leaf
	}
	if !isLeaf("rs-uid") || !isLeaf(uid("bare")) || isLeaf(uid("owned")) {
		t.Fatal("the owner and the bare pod must be leaves, the owned pod a node")
	}
	if h.pod("owned") == nil {
		t.Fatal("the dependent of a live owner (a leaf) was collected")
	}
	podRes := h.fc.Catalogue().Get(podGVR)
	update := func(name string, f func(p *corev1.Pod)) {
		t.Helper()
		if _, err := h.fc.Update(context.Background(), podRes, "ns", name, "", func(o runtimeObject) (runtimeObject, error) {
			f(o.(*corev1.Pod))
			return o, nil
		}, registryWrite); err != nil {
			t.Fatal(err)
		}
		h.settle()
	}
	// freed loses its owner reference: a leaf, kept when the owner goes.
	update("freed", func(p *corev1.Pod) { p.OwnerReferences = nil })
	if !isLeaf(uid("freed")) {
		t.Fatal("a pod without owner references is not a leaf")
	}
	// bare gains a reference to an owner that never existed: a node, collected.
	update("bare", func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ref("missing", "missing-uid", true)} })
	if h.pod("bare") != nil {
		t.Fatal("a former leaf whose new owner does not exist was kept")
	}
	h.delete("replicasets", "ns", "rs", metav1.DeletePropagationBackground)
	h.settle()
	if h.pod("owned") != nil || h.pod("freed") == nil {
		t.Fatalf("after the owner's deletion: owned %v (want collected), freed %v (want kept)", h.pod("owned"), h.pod("freed"))
	}
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if _, ok := h.c.leaves["rs-uid"]; ok || len(h.c.nodes) != 0 {
		t.Fatalf("after the deletions: leaves hold the owner %v, nodes %d", ok, len(h.c.nodes))
	}
}

// TestOrphanWaitsForTheGraph: the watches of owners and dependents are independent, so an
// owner's orphan deletion can reach the graph before a dependent created just before it
// (upstream's conformance spec "should orphan RS created by deployment" deleted the
// Deployment half a second after creating it, and its ReplicaSet was gone a second later).
// The collector must not remove the orphan finalizer until the graph holds every change up
// to the owner's revision; before that, the dependent would be missed, and deleted once
// the owner is gone.
func TestOrphanWaitsForTheGraph(t *testing.T) {
	h := newHarness(t)
	watches := map[string]*watched{}
	for _, gvr := range []schema.GroupVersionResource{podGVR, rsGVR} {
		w := &watched{cancel: func() {}, res: h.fc.Catalogue().Get(gvr)}
		h.c.watching[gvr.GroupResource()] = w
		watches[gvr.Resource] = w
	}
	// deliver hands the graph the changes of one resource not yet delivered (the other
	// resource's watch lags) and marks that watch as having reached the latest revision.
	var pending []fake.Change
	deliver := func(resource string) {
		changes, next := h.fc.Changes(h.seen)
		h.seen = next
		pending = append(pending, changes...)
		kept := pending[:0]
		for _, ch := range pending {
			if ch.Res.GVR.Resource == resource {
				h.c.observe(ch.Res, ch.Object, ch.Type == watch.Deleted)
			} else {
				kept = append(kept, ch)
			}
		}
		pending = kept
		h.c.reached(watches[resource], h.fc.Revision())
	}
	h.fc.Add(owner("rs", "rs-uid"))
	deliver("replicasets")
	deliver("pods")
	// A dependent created just before the owner's orphan deletion; the pods' watch has
	// not delivered it when the owner's deletion is processed.
	h.fc.Add(dependent("late", nil, ref("rs", "rs-uid", true)))
	h.delete("replicasets", "ns", "rs", metav1.DeletePropagationOrphan)
	deliver("replicasets")

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the graph will not advance while the owner is processed: give up at once
	if _, err := h.c.process(ctx, itemOwner+"rs-uid"); err == nil {
		t.Fatal("the owner's orphan deletion was carried out with the graph behind the owner")
	}
	if r := h.rs("rs"); r == nil || len(r.Finalizers) == 0 {
		t.Fatalf("the owner lost its orphan finalizer with the graph behind it: %+v", r)
	}

	deliver("pods")
	if _, err := h.c.process(context.Background(), itemOwner+"rs-uid"); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if h.rs("rs") != nil {
		t.Fatal("the owner was kept after its dependents were orphaned")
	}
	if p := h.pod("late"); p == nil || len(p.OwnerReferences) != 0 {
		t.Fatalf("late = %+v, want kept without owner references", p)
	}
}
