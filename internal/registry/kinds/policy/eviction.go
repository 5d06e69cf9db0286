package policy

import (
	"errors"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's eviction texts (pkg/registry/core/pod/storage/eviction.go).
const (
	evictionRefused = "Cannot evict pod as it would violate the pod's disruption budget."
	// EvictionManyBudgets is the text of upstream's 500 when several budgets select the pod.
	EvictionManyBudgets  = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
	maxDisruptedPodsSize = 2000
)

// TakeDisruption is upstream's checkAndDecrement on a fresh copy of the budget: it refuses
// as upstream does (429 while the budget is not yet processed or allows no disruption, 403
// when its status is inconsistent), or takes one disruption, recording podName in
// disruptedPods.
func TakeDisruption(pdb *policyv1.PodDisruptionBudget, podName string) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return BudgetProcessing(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return forbidden(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPodsSize {
		return forbidden(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller", "too many pending evictions not confirmed by PDB controller")
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		return tooManyEvictions(0, noDisruption(pdb))
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		setDisruptionAllowedCondition(pdb)
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.Now()
	return nil
}

// noDisruption is the cause of upstream's refusal by a budget that allows no disruption.
func noDisruption(pdb *policyv1.PodDisruptionBudget) string {
	cond := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	switch {
	// A failed sync first: its healthy counts are not to be trusted.
	case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "" && cond.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "":
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
	default:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
	}
}

// BudgetProcessing is upstream's createTooManyRequestsError: the 429, retry after 10s, of
// an eviction whose budget is not processed yet, or of an unready pod's eviction that
// raced with a change of the pod.
func BudgetProcessing(name string) error {
	return tooManyEvictions(10, fmt.Sprintf("The disruption budget %s is still being processed by the server.", name))
}

// tooManyEvictions is upstream's 429 refusal with the DisruptionBudget cause.
func tooManyEvictions(retryAfter int, cause string) error {
	err := apierrors.NewTooManyRequests(evictionRefused, retryAfter)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
	return err
}

// forbidden is upstream's 403 refusal by a budget whose status cannot be used.
func forbidden(name, why, cause string) error {
	err := apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), name, errors.New(why))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", name, cause)})
	return err
}

// setDisruptionAllowedCondition is upstream's UpdateDisruptionAllowedCondition.
func setDisruptionAllowedCondition(pdb *policyv1.PodDisruptionBudget) {
	c := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, ObservedGeneration: pdb.Status.ObservedGeneration}
	if pdb.Status.DisruptionsAllowed > 0 {
		c.Status, c.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	} else {
		c.Status, c.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	for i := range pdb.Status.Conditions {
		old := &pdb.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.Now()
		}
		*old = c
		return
	}
	c.LastTransitionTime = metav1.Now()
	pdb.Status.Conditions = append(pdb.Status.Conditions, c)
}
