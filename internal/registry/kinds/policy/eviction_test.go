package policy

import (
	"errors"
	"fmt"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTakeDisruptionRefusals pins upstream's refusals of checkAndDecrement, code, retry
// and cause, byte for byte.
func TestTakeDisruptionRefusals(t *testing.T) {
	cond := func(status metav1.ConditionStatus, reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: status, Reason: reason, Message: msg}}
	}
	for _, tc := range []struct {
		name       string
		gen        int64
		st         policyv1.PodDisruptionBudgetStatus
		code       int32
		message    string
		retryAfter int32
		cause      string
	}{
		{"not processed", 2, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", 10, "The disruption budget web is still being processed by the server."},
		{"negative", 1, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: -1}, 403,
			`poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative`, 0, "The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative"},
		{"too many disrupted", 1, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, DisruptedPods: disrupted(2001)}, 403,
			`poddisruptionbudget.policy "web" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`, 0,
			"The disruption budget web does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller"},
		{"sync failed", 1, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2,
			Conditions: cond(metav1.ConditionFalse, policyv1.SyncFailedReason, "found no controllers for pod \"web-0\"")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", 0, `The disruption budget web does not allow evicting pods currently because it failed sync: found no controllers for pod "web-0"`},
		{"needs healthy", 1, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 2, DesiredHealthy: 2,
			Conditions: cond(metav1.ConditionFalse, policyv1.InsufficientPodsReason, "")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", 0, "The disruption budget web needs 2 healthy pods and has 2 currently"},
		{"condition says why", 1, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2,
			Conditions: cond(metav1.ConditionFalse, "SomeReason", "some message")}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", 0, "The disruption budget web does not allow evicting pods currently (SomeReason): some message"},
		{"no reason", 1, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2}, 429,
			"Cannot evict pod as it would violate the pod's disruption budget.", 0, "The disruption budget web does not allow evicting pods currently"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: tc.gen}, Status: tc.st}
			err := TakeDisruption(pdb, "web-0")
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("err %v, want a status", err)
			}
			st := se.ErrStatus
			if st.Code != tc.code || st.Message != tc.message || st.Details == nil || st.Details.RetryAfterSeconds != tc.retryAfter {
				t.Errorf("status %d %q retry %v; want %d %q retry %d", st.Code, st.Message, st.Details, tc.code, tc.message, tc.retryAfter)
			}
			if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || st.Details.Causes[0].Message != tc.cause {
				t.Errorf("causes %+v, want %q", st.Details, tc.cause)
			}
			if pdb.Status.DisruptionsAllowed != tc.st.DisruptionsAllowed || len(pdb.Status.DisruptedPods) != len(tc.st.DisruptedPods) {
				t.Errorf("a refusal changed the budget: %+v", pdb.Status)
			}
		})
	}
}

// TestTakeDisruption takes the last disruption: recorded, and the condition turns False.
func TestTakeDisruption(t *testing.T) {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2,
			Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason}}}}
	if err := TakeDisruption(pdb, "web-0"); err != nil {
		t.Fatal(err)
	}
	if _, ok := pdb.Status.DisruptedPods["web-0"]; !ok || pdb.Status.DisruptionsAllowed != 0 ||
		pdb.Status.Conditions[0].Status != metav1.ConditionFalse || pdb.Status.Conditions[0].Reason != policyv1.InsufficientPodsReason {
		t.Errorf("status after the last disruption: %+v", pdb.Status)
	}
}

func disrupted(n int) map[string]metav1.Time {
	m := map[string]metav1.Time{}
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("web-%d", i)] = metav1.Now()
	}
	return m
}
