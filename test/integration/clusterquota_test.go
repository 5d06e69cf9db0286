package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/controller/quotaverify"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

var (
	crqGVR     = clusterquota.SchemeGroupVersion.WithResource("clusterresourcequotas")
	appliedGVR = clusterquota.SchemeGroupVersion.WithResource("appliedclusterresourcequotas")
)

// mkLabeledNamespace creates a namespace with labels and waits for its kube-root-ca.crt.
func mkLabeledNamespace(t *testing.T, s *servertest.Server, name string, labels map[string]string) {
	t.Helper()
	ctx := ctxT(t)
	w, err := s.Client.CoreV1().ConfigMaps(name).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			return
		}
	}
	t.Fatalf("namespace %s: kube-root-ca.crt never appeared", name)
}

func crqUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func fromUnstructured[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// clusterQuota is a cluster quota selecting label team=<team>.
func clusterQuota(name, team string, hard corev1.ResourceList) *clusterquota.ClusterResourceQuota {
	return &clusterquota.ClusterResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "quota.openshift.io/v1", Kind: "ClusterResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": team}}},
			Quota:    corev1.ResourceQuotaSpec{Hard: hard},
		},
	}
}

func createCRQ(t *testing.T, s *servertest.Server, crq *clusterquota.ClusterResourceQuota, opts metav1.CreateOptions) (*clusterquota.ClusterResourceQuota, error) {
	t.Helper()
	u, err := s.Dynamic.Resource(crqGVR).Create(ctxT(t), crqUnstructured(t, crq), opts)
	if err != nil {
		return nil, err
	}
	return fromUnstructured[clusterquota.ClusterResourceQuota](t, u), nil
}

func getCRQ(t *testing.T, s *servertest.Server, name string) *clusterquota.ClusterResourceQuota {
	t.Helper()
	u, err := s.Dynamic.Resource(crqGVR).Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fromUnstructured[clusterquota.ClusterResourceQuota](t, u)
}

// crqUsed returns a cluster quota's total used of one resource and each namespace's.
func crqUsed(t *testing.T, s *servertest.Server, name string, r corev1.ResourceName) (string, map[string]string) {
	t.Helper()
	c := getCRQ(t, s, name)
	per := map[string]string{}
	for _, e := range c.Status.Namespaces {
		v := e.Status.Used[r]
		per[e.Namespace] = v.String()
	}
	total := c.Status.Total.Used[r]
	return total.String(), per
}

func expectCRQ(t *testing.T, s *servertest.Server, name string, r corev1.ResourceName, total string, per map[string]string) {
	t.Helper()
	gotTotal, gotPer := crqUsed(t, s, name, r)
	if gotTotal != total || fmt.Sprint(gotPer) != fmt.Sprint(per) {
		t.Fatalf("cluster quota %s %s: total %s per namespace %v, want %s %v", name, r, gotTotal, gotPer, total, per)
	}
}

// createPods creates pods p<from>..p<to-1> in ns.
func createPods(t *testing.T, s *servertest.Server, ns string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := s.Client.CoreV1().Pods(ns).Create(ctxT(t), pod(fmt.Sprintf("p%d", i), "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClusterQuotaChargesAcrossNamespaces: a cluster quota limits the pods of every
// namespace it selects together, with the namespace's own ResourceQuota charged in the same
// write; the refusal names the cluster quota with upstream's text; deletes credit both;
// namespaces it does not select are not limited; dry runs are checked, never charged.
func TestClusterQuotaChargesAcrossNamespaces(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "a1", map[string]string{"team": "a"})
	mkLabeledNamespace(t, s, "a2", map[string]string{"team": "a"})
	mkNamespace(t, s, "other")
	createPods(t, s, "a1", 0, 2)
	// Created after pods exist: complete status at once.
	c, err := createCRQ(t, s, clusterQuota("team-a", "a", rl("pods", "5")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Status.Total.Used[corev1.ResourcePods]; got.String() != "2" || len(c.Status.Namespaces) != 2 {
		t.Fatalf("status in the create response: %+v", c.Status)
	}
	mkQuota(t, s, "a1", "own", map[string]string{"pods": "10"})
	createPods(t, s, "a2", 0, 3)
	expectCRQ(t, s, "team-a", corev1.ResourcePods, "5", map[string]string{"a1": "2", "a2": "3"})

	// Dry run: refused exactly as a real create, and never charged when admitted.
	_, err = s.Client.CoreV1().Pods("a1").Create(ctx, pod("dry", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	expectForbidden(t, err, `pods "dry" is forbidden: exceeded quota: team-a, requested: pods=1, used: pods=5, limited: pods=5`)
	_, err = s.Client.CoreV1().Pods("a1").Create(ctx, pod("p9", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p9" is forbidden: exceeded quota: team-a, requested: pods=1, used: pods=5, limited: pods=5`)
	createPods(t, s, "other", 0, 3) // not selected

	if err := s.Client.CoreV1().Pods("a2").Delete(ctx, "p0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectCRQ(t, s, "team-a", corev1.ResourcePods, "4", map[string]string{"a1": "2", "a2": "2"})
	if _, err := s.Client.CoreV1().Pods("a1").Create(ctx, pod("dry", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	expectCRQ(t, s, "team-a", corev1.ResourcePods, "4", map[string]string{"a1": "2", "a2": "2"})
	createPods(t, s, "a1", 2, 3)
	expectCRQ(t, s, "team-a", corev1.ResourcePods, "5", map[string]string{"a1": "3", "a2": "2"})
	expectUsed(t, s, "a1", "own", map[string]string{"pods": "3"})

	// The applied view: a1 sees team-a; other sees nothing.
	l, err := s.Dynamic.Resource(appliedGVR).Namespace("a1").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].GetName() != "team-a" || l.Items[0].GetNamespace() != "a1" || l.Items[0].GetKind() != "AppliedClusterResourceQuota" {
		t.Fatalf("applied in a1: %+v", l.Items)
	}
	if _, err := s.Dynamic.Resource(appliedGVR).Namespace("a1").Get(ctx, "team-a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err = s.Dynamic.Resource(appliedGVR).Namespace("other").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("applied in other: %v %v", l, err)
	}
	if _, err := s.Dynamic.Resource(appliedGVR).Namespace("other").Get(ctx, "team-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("applied get in other: %v, want 404", err)
	}

	// Metrics: the total and each namespace's share (from the watch: wait until there).
	waitForMetrics(t, s,
		`quotad_clusterresourcequota{clusterresourcequota="team-a",resource="pods",type="hard"} 5`,
		`quotad_clusterresourcequota{clusterresourcequota="team-a",resource="pods",type="used"} 5`,
		`quotad_clusterresourcequota_namespace{clusterresourcequota="team-a",namespace="a1",resource="pods",type="used"} 3`,
		`quotad_clusterresourcequota_namespace{clusterresourcequota="team-a",namespace="a2",resource="pods",type="used"} 2`,
	)
}

// TestClusterQuotaNamespaceMoves: a namespace that starts or stops matching the selector
// moves its usage into or out of the total at once, and a deleted namespace leaves it.
func TestClusterQuotaNamespaceMoves(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "m1", map[string]string{"team": "m"})
	mkNamespace(t, s, "m2")
	if _, err := createCRQ(t, s, clusterQuota("team-m", "m", rl("pods", "4")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, "m1", 0, 2)
	createPods(t, s, "m2", 0, 3)
	expectCRQ(t, s, "team-m", corev1.ResourcePods, "2", map[string]string{"m1": "2"})

	// m2 joins: its 3 pods count at once (above hard, as lowering hard is allowed).
	n, err := s.Client.CoreV1().Namespaces().Get(ctx, "m2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["team"] = "m"
	if _, err := s.Client.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectCRQ(t, s, "team-m", corev1.ResourcePods, "5", map[string]string{"m1": "2", "m2": "3"})
	_, err = s.Client.CoreV1().Pods("m1").Create(ctx, pod("x", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "x" is forbidden: exceeded quota: team-m, requested: pods=1, used: pods=5, limited: pods=4`)

	// m1 leaves.
	n, err = s.Client.CoreV1().Namespaces().Get(ctx, "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(n.Labels, "team")
	if _, err := s.Client.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectCRQ(t, s, "team-m", corev1.ResourcePods, "3", map[string]string{"m2": "3"})
	createPods(t, s, "m1", 2, 5) // no longer limited

	// m2 is deleted: its pods go, then the namespace, which leaves the cluster quota.
	w, err := s.Client.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=m2"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := s.Client.CoreV1().Namespaces().Delete(ctx, "m2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			break
		}
	}
	expectCRQ(t, s, "team-m", corev1.ResourcePods, "0", map[string]string{})

	// Editing the cluster quota's selector recomputes it at once.
	c := getCRQ(t, s, "team-m")
	c.Spec.Selector.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "m1"}}
	u, err := s.Dynamic.Resource(crqGVR).Update(ctx, crqUnstructured(t, c), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := fromUnstructured[clusterquota.ClusterResourceQuota](t, u)
	if v := got.Status.Total.Used[corev1.ResourcePods]; v.String() != "5" {
		t.Fatalf("after selector edit: %+v", got.Status)
	}
	_, err = s.Client.CoreV1().Pods("m1").Create(ctx, pod("p5", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p5" is forbidden: exceeded quota: team-m, requested: pods=1, used: pods=5, limited: pods=4`)

	// Deleted, it limits nothing any more.
	if err := s.Dynamic.Resource(crqGVR).Delete(ctx, "team-m", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, "m1", 5, 7)
}

// TestClusterQuotaScopes: spec.quota's scopes and scope selectors apply as for a
// ResourceQuota.
func TestClusterQuotaScopes(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "s1", map[string]string{"team": "s"})
	mkLabeledNamespace(t, s, "s2", map[string]string{"team": "s"})
	c := clusterQuota("besteffort", "s", rl("pods", "1"))
	c.Spec.Quota.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	if _, err := createCRQ(t, s, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c = clusterQuota("high", "s", rl("pods", "1"))
	c.Spec.Quota.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
		ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
	if _, err := createCRQ(t, s, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.CoreV1().Pods("s1").Create(ctx, pod("be", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Client.CoreV1().Pods("s2").Create(ctx, pod("be", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "be" is forbidden: exceeded quota: besteffort, requested: pods=1, used: pods=1, limited: pods=1`)
	// Not best-effort, no priority class: neither applies.
	for i := 0; i < 3; i++ {
		if _, err := s.Client.CoreV1().Pods("s2").Create(ctx, pod(fmt.Sprintf("burst%d", i), "100m", "64Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expectCRQ(t, s, "besteffort", corev1.ResourcePods, "1", map[string]string{"s1": "1", "s2": "0"})
	expectCRQ(t, s, "high", corev1.ResourcePods, "0", map[string]string{"s1": "0", "s2": "0"})
}

// TestClusterQuotaValidation: OpenShift's rules: a selector that restricts the namespaces is
// required; spec.quota is validated as a ResourceQuotaSpec.
func TestClusterQuotaValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := clusterQuota("bad", "x", rl("pods", "1"))
	c.Spec.Selector = clusterquota.ClusterResourceQuotaSelector{}
	_, err := createCRQ(t, s, c, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `ClusterResourceQuota.quota.openshift.io "bad" is invalid: spec.selector: Required value: must restrict the selected projects` {
		t.Fatalf("err = %v", err)
	}
	c = clusterQuota("bad", "x", rl("pods", "1"))
	c.Spec.Quota.Hard = rl("nonsense", "1")
	_, err = createCRQ(t, s, c, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422", err)
	}
}

// TestClusterQuotaConcurrentAcrossReplicas: parallel creates in 10 namespaces under one
// cluster quota, over two quotad processes sharing one etcd, never exceed the shared hard:
// exactly hard pods are stored and the total equals them.
func TestClusterQuotaConcurrentAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	ctx := ctxT(t)
	const namespaces, hard, attempts = 10, 20, 60
	for i := 0; i < namespaces; i++ {
		mkLabeledNamespace(t, a, fmt.Sprintf("c%d", i), map[string]string{"team": "c"})
	}
	if _, err := createCRQ(t, a, clusterQuota("team-c", "c", rl("pods", fmt.Sprint(hard))), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var admitted, refused int
	var mu sync.Mutex
	acrossReplicas(attempts, a, b, func(i int, s *servertest.Server) error {
		_, err := s.Client.CoreV1().Pods(fmt.Sprintf("c%d", i%namespaces)).Create(ctx, pod(fmt.Sprintf("p%d", i), "", ""), metav1.CreateOptions{})
		return err
	}, func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			admitted++
		case apierrors.IsForbidden(err):
			refused++
		default:
			t.Errorf("create %d: %v", i, err)
		}
	})
	if admitted != hard || refused != attempts-hard {
		t.Fatalf("admitted %d refused %d, want %d and %d", admitted, refused, hard, attempts-hard)
	}
	stored := 0
	for i := 0; i < namespaces; i++ {
		l, err := a.Client.CoreV1().Pods(fmt.Sprintf("c%d", i)).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stored += len(l.Items)
	}
	total, _ := crqUsed(t, b, "team-c", corev1.ResourcePods)
	if stored != hard || total != fmt.Sprint(hard) {
		t.Fatalf("stored %d pods, total used %s, want %d", stored, total, hard)
	}
}

// TestClusterQuotaTightJoined: 200 parallel creates over 10 namespaces of one replica, whose
// batches are joined into shared transactions under the cluster quota, admit exactly hard;
// each namespace's entry is what it stores.
func TestClusterQuotaTightJoined(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const namespaces, hard, attempts = 10, 50, 200
	for i := 0; i < namespaces; i++ {
		mkLabeledNamespace(t, s, fmt.Sprintf("j%d", i), map[string]string{"team": "j"})
	}
	if _, err := createCRQ(t, s, clusterQuota("team-j", "j", rl("pods", fmt.Sprint(hard))), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := 0; i < attempts; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.Client.CoreV1().Pods(fmt.Sprintf("j%d", i%namespaces)).Create(ctx, pod(fmt.Sprintf("p%d", i), "", ""), metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
			case apierrors.IsForbidden(err):
			default:
				t.Errorf("create %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if admitted != hard {
		t.Fatalf("admitted %d, want %d", admitted, hard)
	}
	total, per := crqUsed(t, s, "team-j", corev1.ResourcePods)
	for i := 0; i < namespaces; i++ {
		ns := fmt.Sprintf("j%d", i)
		l, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if per[ns] != fmt.Sprint(len(l.Items)) {
			t.Errorf("%s: entry %s, stored %d", ns, per[ns], len(l.Items))
		}
	}
	if total != fmt.Sprint(hard) {
		t.Fatalf("total %s, want %d", total, hard)
	}
}

// TestClusterQuotaThenResourceQuota: a namespace under a cluster quota keeps its state between
// batches while it has no ResourceQuota; one created later is charged (and enforced) from the
// next write on.
func TestClusterQuotaThenResourceQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "r1", map[string]string{"team": "r"})
	if _, err := createCRQ(t, s, clusterQuota("team-r", "r", rl("pods", "10")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, "r1", 0, 2)
	mkQuota(t, s, "r1", "own", map[string]string{"pods": "3"})
	createPods(t, s, "r1", 2, 3)
	_, err := s.Client.CoreV1().Pods("r1").Create(ctx, pod("p3", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p3" is forbidden: exceeded quota: own, requested: pods=1, used: pods=3, limited: pods=3`)
	expectUsed(t, s, "r1", "own", map[string]string{"pods": "3"})
	expectCRQ(t, s, "team-r", corev1.ResourcePods, "3", map[string]string{"r1": "3"})
}

// TestVerifierRepairsClusterQuota corrupts a cluster quota's stored status behind the
// registry's back and checks that the verifier finds and repairs it (total and entries).
func TestVerifierRepairsClusterQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "v1", map[string]string{"team": "v"})
	if _, err := createCRQ(t, s, clusterQuota("team-v", "v", rl("pods", "5")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, "v1", 0, 2)
	// 1. Corrupt: total used 4, the entry dropped.
	key := registry.KeyPrefix(crqGVR.GroupResource(), "") + "team-v"
	servertest.EditStored(t, s, key, func(c *clusterquota.ClusterResourceQuota) {
		c.Status.Total.Used[corev1.ResourcePods] = resource.MustParse("4")
		c.Status.Namespaces = nil
	})
	// 2. The verifier repairs it and reports one repair; nothing is left after.
	obs := &countRepairs{}
	v := quotaverify.New(s.Store, 0, slog.New(slog.DiscardHandler), obs)
	if n, err := v.VerifyAll(ctx); err != nil || n != 1 || obs.n != 1 {
		t.Fatalf("VerifyAll repaired %d (observer %d), err %v", n, obs.n, err)
	}
	expectCRQ(t, s, "team-v", corev1.ResourcePods, "2", map[string]string{"v1": "2"})
	if n, err := v.VerifyAll(ctx); err != nil || n != 0 {
		t.Fatalf("second VerifyAll repaired %d, err %v", n, err)
	}
}

// TestAppliedClusterQuotaWatch: a watch of a namespace's applied view sees a cluster quota
// that selects it added and modified as it is charged, and deleted once its selector stops
// selecting the namespace.
func TestAppliedClusterQuotaWatch(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "w1", map[string]string{"team": "w"})
	w, err := s.Dynamic.Resource(appliedGVR).Namespace("w1").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := createCRQ(t, s, clusterQuota("other", "x", rl("pods", "5")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := createCRQ(t, s, clusterQuota("team-w", "w", rl("pods", "5")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	next := func(want watch.EventType) *unstructured.Unstructured {
		t.Helper()
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("watch closed, want %s", want)
		}
		u := ev.Object.(*unstructured.Unstructured)
		if ev.Type != want || u.GetName() != "team-w" || u.GetNamespace() != "w1" || u.GetKind() != "AppliedClusterResourceQuota" {
			t.Fatalf("event %s %s/%s %s, want %s of team-w in w1", ev.Type, u.GetNamespace(), u.GetName(), u.GetKind(), want)
		}
		return u
	}
	next(watch.Added)
	createPods(t, s, "w1", 0, 1)
	u := next(watch.Modified)
	if used, _, _ := unstructured.NestedString(u.Object, "status", "total", "used", "pods"); used != "1" {
		t.Fatalf("modified: used pods %q", used)
	}
	c := getCRQ(t, s, "team-w")
	c.Spec.Selector.LabelSelector.MatchLabels["team"] = "nobody"
	if _, err := s.Dynamic.Resource(crqGVR).Update(ctx, crqUnstructured(t, c), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	next(watch.Deleted)
}

var crqForbiddenPod = regexp.MustCompile(`^pods "web-[a-z0-9]+-[bcdfghjklmnpqrstvwxz2456789]{5}" is forbidden: exceeded quota: team-d, requested: pods=1, used: pods=3, limited: pods=3$`)

// TestDeploymentStopsAtClusterQuota: a Deployment in a namespace under a cluster quota stops
// at what the cluster quota leaves (other namespaces' pods count), saying why on its
// ReplicaSet as for a ResourceQuota.
func TestDeploymentStopsAtClusterQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	mkLabeledNamespace(t, s, "d1", map[string]string{"team": "d"})
	mkLabeledNamespace(t, s, "d2", map[string]string{"team": "d"})
	if _, err := createCRQ(t, s, clusterQuota("team-d", "d", rl("pods", "3")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, "d2", 0, 1)
	if _, err := s.Client.AppsV1().Deployments("d1").Create(ctxT(t), wlDeployment("web", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "ReplicaFailure naming the cluster quota", func(ctx context.Context) (bool, error) {
		rs, err := wlDeploymentRS(ctx, s, "d1", "web")
		if err != nil {
			return false, err
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue && crqForbiddenPod.MatchString(c.Message) {
				return rs.Status.Replicas == 2, nil
			}
		}
		return false, nil
	})
	expectCRQ(t, s, "team-d", corev1.ResourcePods, "3", map[string]string{"d1": "2", "d2": "1"})
}

// TestClusterQuotaMalformed: malformed cluster quotas are refused with 400 or 422 and change
// nothing; the server keeps serving.
func TestClusterQuotaMalformed(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	for _, body := range []string{
		`{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"x"},"spec":"nope"}`,
		`{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"x"},"spec":{"selector":{"labels":{"matchExpressions":[{"key":"a","operator":"Foo"}]}},"quota":{"hard":{"pods":"1"}}}}`,
		`{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"x"},"spec":{"selector":{"annotations":{"a":"b"}},"quota":{"hard":{"pods":"abc"}}}}`,
		`{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"x"},"spec":{"selector":{"annotations":{"a":"b"}},"quota":{"hard":{"pods":"1e1000000000"}}}}`,
		`{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"x"},"spec":{"selector":{"annotations":{"a":"b"}},"quota":{"scopeSelector":{"matchExpressions":[{"scopeName":"Nope","operator":"In"}]}}},"status":{"total":{"used":{"pods":"-5"}},"namespaces":[{"namespace":""}]}}`,
		`{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"x"},"spec":{"selector":{"labels":null,"annotations":null},"quota":null}}`,
	} {
		res := s.Client.CoreV1().RESTClient().Post().AbsPath("/apis/quota.openshift.io/v1/clusterresourcequotas").Body([]byte(body)).SetHeader("Content-Type", "application/json").Do(ctx)
		var code int
		res.StatusCode(&code)
		if code != 400 && code != 422 {
			t.Errorf("%s: status %d (%v), want 400 or 422", body, code, res.Error())
		}
	}
	l, err := s.Dynamic.Resource(crqGVR).List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("after malformed creates: %v %v", l, err)
	}
}

// TestClusterQuotaStoredForm: a cluster quota is stored without its entries' hards (each is
// spec.quota.hard), and get, list and watch all show OpenShift's shape (every entry with
// hard, sorted by namespace); a value stored in the earlier form, with every entry's hard,
// reads the same and is charged on.
func TestClusterQuotaStoredForm(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "f2", map[string]string{"team": "f"})
	mkLabeledNamespace(t, s, "f1", map[string]string{"team": "f"})
	w, err := s.Dynamic.Resource(crqGVR).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := createCRQ(t, s, clusterQuota("team-f", "f", rl("pods", "10", "count/configmaps", "4")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, "f1", 0, 2)
	createPods(t, s, "f2", 0, 1)
	wantHard := map[string]interface{}{"count/configmaps": "4", "pods": "10"}
	// shape checks an object's status as OpenShift has it and returns its entries' used pods.
	shape := func(what string, u *unstructured.Unstructured) string {
		t.Helper()
		entries, _, _ := unstructured.NestedSlice(u.Object, "status", "namespaces")
		out := ""
		for _, e := range entries {
			m := e.(map[string]interface{})
			hard, _, _ := unstructured.NestedMap(m, "status", "hard")
			if fmt.Sprint(hard) != fmt.Sprint(wantHard) {
				t.Fatalf("%s: entry %v: hard %v, want spec.quota.hard %v", what, m["namespace"], hard, wantHard)
			}
			used, _, _ := unstructured.NestedString(m, "status", "used", "pods")
			out += fmt.Sprintf("%s=%s ", m["namespace"], used)
		}
		return out
	}
	const want = "f1=2 f2=1 "
	// 1. Stored as rows: one list of the resources' names, then each namespace's used values.
	st := s.Store.Storage()
	key := registry.KeyPrefix(crqGVR.GroupResource(), "") + "team-f"
	kv, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Status struct {
			Namespaces json.RawMessage `json:"namespaces"`
			Rows       struct {
				Resources []string    `json:"resources"`
				Rows      [][]*string `json:"rows"`
			} `json:"namespaceRows"`
		} `json:"status"`
	}
	if err := json.Unmarshal(kv.Value, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Status.Namespaces != nil || fmt.Sprint(raw.Status.Rows.Resources) != "[count/configmaps pods]" || len(raw.Status.Rows.Rows) != 2 {
		t.Fatalf("stored: %s", kv.Value)
	}
	for _, row := range raw.Status.Rows.Rows {
		if len(row) != 3 || row[0] == nil || row[2] == nil || *row[2] != map[string]string{"f1": "2", "f2": "1"}[*row[0]] {
			t.Fatalf("stored rows: %s", kv.Value)
		}
	}
	// 2. Get, list and the last watch event show every entry with its hard.
	u, err := s.Dynamic.Resource(crqGVR).Get(ctx, "team-f", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := shape("get", u); got != want {
		t.Fatalf("get: %s, want %s", got, want)
	}
	l, err := s.Dynamic.Resource(crqGVR).List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v %v", l, err)
	}
	if got := shape("list", &l.Items[0]); got != want {
		t.Fatalf("list: %s, want %s", got, want)
	}
	for ev := range w.ResultChan() {
		eu := ev.Object.(*unstructured.Unstructured)
		got := shape(string(ev.Type), eu)
		if eu.GetResourceVersion() == u.GetResourceVersion() {
			if got != want {
				t.Fatalf("watch: %s, want %s", got, want)
			}
			break
		}
	}
	// 3. The earlier form (OpenShift's, every entry's hard stored) reads the same, and is
	// charged on.
	var full clusterquota.ClusterResourceQuota
	if err := codec.DecodeClusterQuota(kv.Value, &full); err != nil {
		t.Fatal(err)
	}
	if len(full.Status.Namespaces) != 2 || full.Status.Namespaces[0].Status.Hard == nil {
		t.Fatalf("decoded: %+v", full.Status)
	}
	b, _ := json.Marshal(&full)
	if _, err := st.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: key, Value: b}}}); err != nil {
		t.Fatal(err)
	}
	u, err = s.Dynamic.Resource(crqGVR).Get(ctx, "team-f", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := shape("earlier form", u); got != want {
		t.Fatalf("earlier form: %s, want %s", got, want)
	}
	createPods(t, s, "f2", 1, 2)
	expectCRQ(t, s, "team-f", corev1.ResourcePods, "4", map[string]string{"f1": "2", "f2": "2"})
	u, err = s.Dynamic.Resource(crqGVR).Get(ctx, "team-f", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := shape("charged", u); got != "f1=2 f2=2 " {
		t.Fatalf("charged: %s", got)
	}
}

// chargeTwoNamespaces makes namespaces <team>1 and <team>2 under cluster quota team-<team> of
// 10 pods, with 2 pods in the first and 1 in the second, all through s.
func chargeTwoNamespaces(t *testing.T, s *servertest.Server, team string) {
	t.Helper()
	mkLabeledNamespace(t, s, team+"1", map[string]string{"team": team})
	mkLabeledNamespace(t, s, team+"2", map[string]string{"team": team})
	if _, err := createCRQ(t, s, clusterQuota("team-"+team, team, rl("pods", "10")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPods(t, s, team+"1", 0, 2)
	createPods(t, s, team+"2", 0, 1)
}

// storedCRQ returns a cluster quota's stored value and its entries' used pods as an earlier
// quotad reads them: plain JSON, "ns=pods " per entry.
func storedCRQ(t *testing.T, s *servertest.Server, name string) ([]byte, string) {
	t.Helper()
	kv, err := s.Store.Storage().Get(ctxT(t), registry.KeyPrefix(crqGVR.GroupResource(), "")+name)
	if err != nil {
		t.Fatal(err)
	}
	var c clusterquota.ClusterResourceQuota
	if err := json.Unmarshal(kv.Value, &c); err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, e := range c.Status.Namespaces {
		q := e.Status.Used[corev1.ResourcePods]
		out += e.Namespace + "=" + q.String() + " "
	}
	return kv.Value, out
}

// TestClusterQuotaRowsOff: with --cluster-quota-rows=false (NoClusterQuotaRows), a cluster
// quota charged through joined rounds and moves is stored in OpenShift's shape, which a
// replica of an earlier version decodes as plain JSON into every entry; reads are the same.
func TestClusterQuotaRowsOff(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) { c.NoClusterQuotaRows = true })
	chargeTwoNamespaces(t, s, "r")
	expectCRQ(t, s, "team-r", corev1.ResourcePods, "3", map[string]string{"r1": "2", "r2": "1"})
	// An earlier quotad decodes the stored value as plain JSON (and fills in each entry's
	// hard from spec.quota.hard).
	v, got := storedCRQ(t, s, "team-r")
	if bytes.Contains(v, []byte(`"namespaceRows"`)) {
		t.Fatalf("stored as rows: %s", v)
	}
	if got != "r1=2 r2=1 " {
		t.Fatalf("entries as an earlier quotad reads them: %q (%s)", got, v)
	}
}

// TestClusterQuotaRowsGoingBack: replicas sharing one etcd, one storing rows and one with
// --cluster-quota-rows=false (going back to a quotad older than the rows, docs/ha.md): a write
// of the cluster quota object through the second stores it whole in OpenShift's shape, and
// its charges keep it so; both read the same status throughout.
func TestClusterQuotaRowsGoingBack(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	rows := servertest.Start(t, servertest.WithEtcd(etcd))
	back := servertest.Start(t, servertest.WithEtcd(etcd), func(c *server.Config) { c.NoClusterQuotaRows = true })
	ctx := ctxT(t)
	chargeTwoNamespaces(t, rows, "g")
	if v, _ := storedCRQ(t, rows, "team-g"); !bytes.Contains(v, []byte(`"namespaceRows"`)) {
		t.Fatalf("charged through the replica storing rows: %s", v)
	}
	// An earlier quotad's decoding: plain JSON, every entry.
	entries := func() string {
		t.Helper()
		_, out := storedCRQ(t, rows, "team-g")
		return out
	}
	u, err := back.Dynamic.Resource(crqGVR).Get(ctx, "team-g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.SetAnnotations(map[string]string{"quotad.io/stored-again": "1"})
	if _, err := back.Dynamic.Resource(crqGVR).Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := entries(); got != "g1=2 g2=1 " {
		t.Fatalf("after the object's write through the replica without rows, an earlier quotad reads %q", got)
	}
	createPods(t, back, "g2", 1, 2)
	if got := entries(); got != "g1=2 g2=2 " {
		t.Fatalf("after a charge through the replica without rows, an earlier quotad reads %q", got)
	}
	for _, s := range []*servertest.Server{rows, back} {
		expectCRQ(t, s, "team-g", corev1.ResourcePods, "4", map[string]string{"g1": "2", "g2": "2"})
	}
}
