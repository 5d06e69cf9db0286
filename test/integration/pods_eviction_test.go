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
