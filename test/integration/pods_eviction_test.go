package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// markReady sets a pod Running and Ready through /status, as a kubelet would.
func markReady(t *testing.T, s *servertest.Server, ns, name string) {
	t.Helper()
	ctx := ctxT(t)
	p, err := s.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	if _, err := s.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitBudget waits until the budget's status satisfies cond.
func waitBudget(t *testing.T, s *servertest.Server, ns, name string, cond func(policyv1.PodDisruptionBudgetStatus) bool) policyv1.PodDisruptionBudgetStatus {
	t.Helper()
	ctx := ctxT(t)
	var st policyv1.PodDisruptionBudgetStatus
	waitFor(t, func() bool {
		pdb, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st = pdb.Status
		return pdb.Status.ObservedGeneration == pdb.Generation && cond(pdb.Status)
	})
	return st
}

// TestDisruptionBudgetAndEviction: the disruption controller keeps a budget's status
// current from its Ready pods; an eviction takes a disruption and deletes the pod, the next
// is refused with upstream's 429; Pending pods are evicted whatever the budget says.
func TestDisruptionBudgetAndEviction(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "evict"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	one := intstr.FromInt32(1)
	web := map[string]string{"app": "web"}
	if _, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: meta("pdb"),
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: web}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, s, ns, "pdb", func(st policyv1.PodDisruptionBudgetStatus) bool {
		return st.DesiredHealthy == 1 && st.ExpectedPods == 0 && len(st.Conditions) == 1 && st.Conditions[0].Reason == policyv1.InsufficientPodsReason
	})
	for _, n := range []string{"a", "b", "pending"} {
		if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, simplePod(n, web), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	markReady(t, s, ns, "a")
	markReady(t, s, ns, "b")
	st := waitBudget(t, s, ns, "pdb", func(st policyv1.PodDisruptionBudgetStatus) bool { return st.CurrentHealthy == 2 })
	if st.DisruptionsAllowed != 1 || st.ExpectedPods != 3 || st.DesiredHealthy != 1 || st.Conditions[0].Status != metav1.ConditionTrue || st.Conditions[0].Reason != policyv1.SufficientPodsReason {
		t.Errorf("status with two ready pods: %+v", st)
	}
	evict := func(name string) error {
		return s.Client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	}
	if err := evict("a"); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	if _, err := s.Client.CoreV1().Pods(ns).Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("evicted pod: %v", err)
	}
	// The refusal's cause quotes the budget's status, which the disruption controller
	// recomputes after the first eviction: wait for it, so the message is deterministic.
	waitBudget(t, s, ns, "pdb", func(st policyv1.PodDisruptionBudgetStatus) bool {
		return st.CurrentHealthy == 1 && st.DisruptionsAllowed == 0
	})
	err := evict("b")
	var se *apierrors.StatusError
	if !asStatus(err, &se) || se.ErrStatus.Code != 429 || se.ErrStatus.Message != "Cannot evict pod as it would violate the pod's disruption budget." ||
		se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Type != policyv1.DisruptionBudgetCause ||
		se.ErrStatus.Details.Causes[0].Message != "The disruption budget pdb needs 1 healthy pods and has 1 currently" {
		t.Errorf("second eviction: %v %+v", err, se)
	}
	if _, err := s.Client.CoreV1().Pods(ns).Get(ctx, "b", metav1.GetOptions{}); err != nil {
		t.Errorf("refused eviction removed the pod: %v", err)
	}
	if err := evict("pending"); err != nil {
		t.Errorf("eviction of a pending pod: %v", err)
	}
	waitBudget(t, s, ns, "pdb", func(st policyv1.PodDisruptionBudgetStatus) bool {
		return st.ExpectedPods == 1 && st.CurrentHealthy == 1 && st.DisruptionsAllowed == 0 && len(st.DisruptedPods) == 0
	})
	if err := evict("missing"); !apierrors.IsNotFound(err) {
		t.Errorf("eviction of a missing pod: %v", err)
	}
	s.CheckInvariant()
}

// TestEvictionDisruptionTarget: an eviction writes the DisruptionTarget condition
// (EvictionByEvictionAPI) to the pod's status before deleting it, as upstream's
// addConditionAndDeletePod: a bound pod stays terminating with it; a resourceVersion
// precondition is checked against the pod before the condition is written (upstream's
// 409 text) and then holds for the delete; a dry run writes nothing; a pod two budgets
// select is upstream's 500; an unready pod of a healthy budget is evicted without taking a
// disruption.
func TestEvictionDisruptionTarget(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "disrupt"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	pods := s.Client.CoreV1().Pods(ns)
	bound := func(name string, labels map[string]string) *corev1.Pod {
		p := simplePod(name, labels)
		p.Spec.NodeName = "node-1"
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		markReady(t, s, ns, name)
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	evict := func(name string, opts *metav1.DeleteOptions) error {
		return s.Client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, DeleteOptions: opts})
	}
	disruption := func(p *corev1.Pod) *corev1.PodCondition {
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				return &p.Status.Conditions[i]
			}
		}
		return nil
	}

	// 1. A bound pod: the condition, then a graceful delete.
	bound("a", nil)
	if err := evict("a", nil); err != nil {
		t.Fatal(err)
	}
	a, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := disruption(a)
	if a.DeletionTimestamp == nil || c == nil || c.Status != corev1.ConditionTrue || c.Reason != "EvictionByEvictionAPI" || c.Message != "Eviction API: evicting" || c.LastTransitionTime.IsZero() {
		t.Fatalf("evicted pod: terminating %v, DisruptionTarget %+v", a.DeletionTimestamp != nil, c)
	}
	// Evicting it again changes nothing.
	if err := evict("a", nil); err != nil {
		t.Fatal(err)
	}
	if again, err := pods.Get(ctx, "a", metav1.GetOptions{}); err != nil || again.ResourceVersion != a.ResourceVersion {
		t.Errorf("a second eviction of a terminating pod: %v, rv %s → %s", err, a.ResourceVersion, again.ResourceVersion)
	}

	// 2. A stale resourceVersion precondition: upstream's 409, nothing written.
	b := bound("b", nil)
	stale := "1"
	err = evict("b", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	want := `Operation cannot be fulfilled on Pod "b": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` + b.ResourceVersion + `). The object might have been modified`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("eviction with a stale precondition: %v\nwant %s", err, want)
	}
	if got, err := pods.Get(ctx, "b", metav1.GetOptions{}); err != nil || got.ResourceVersion != b.ResourceVersion {
		t.Errorf("a refused eviction wrote the pod: %v", err)
	}
	// The current one holds through the condition's write.
	if err := evict("b", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &b.ResourceVersion, UID: &b.UID}}); err != nil {
		t.Fatalf("eviction with the current resourceVersion: %v", err)
	}
	if got, err := pods.Get(ctx, "b", metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil || disruption(got) == nil {
		t.Errorf("pod b after its eviction: %v", err)
	}

	// 3. A dry run writes nothing.
	d := bound("dry", nil)
	if err := s.Client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "dry", Namespace: ns},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := pods.Get(ctx, "dry", metav1.GetOptions{}); err != nil || got.ResourceVersion != d.ResourceVersion {
		t.Errorf("a dry-run eviction wrote the pod: %v", err)
	}

	// 4. Two budgets: upstream's 500, a Status with no reason.
	web := map[string]string{"app": "web"}
	one := intstr.FromInt32(1)
	for _, n := range []string{"web-1", "web-2"} {
		if _, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: meta(n),
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: web}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound("w", web)
	err = evict("w", nil)
	var se *apierrors.StatusError
	if !asStatus(err, &se) || se.ErrStatus.Code != 500 || se.ErrStatus.Reason != "" || se.ErrStatus.Message != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
		t.Errorf("eviction with two budgets: %v %+v", err, se)
	}
	if err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// 5. An unready pod, its budget healthy: evicted, no disruption taken.
	bound("w2", web)
	u := simplePod("u", web)
	u.Spec.NodeName = "node-1"
	if _, err := pods.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err = pods.Get(ctx, "u", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, s, ns, "web-1", func(st policyv1.PodDisruptionBudgetStatus) bool {
		return st.CurrentHealthy == 2 && st.DesiredHealthy == 1 && st.DisruptionsAllowed == 1
	})
	if err := evict("u", nil); err != nil {
		t.Fatalf("eviction of an unready pod: %v", err)
	}
	if got, err := pods.Get(ctx, "u", metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil || disruption(got) == nil {
		t.Errorf("pod u after its eviction: %v", err)
	}
	if pdb, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web-1", metav1.GetOptions{}); err != nil || len(pdb.Status.DisruptedPods) != 0 {
		t.Errorf("the unready pod's eviction took a disruption: %v %+v", err, pdb.Status)
	}
	s.CheckInvariant()
}
