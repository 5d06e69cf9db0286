package policy

import (
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's eviction texts (pkg/registry/core/pod/storage/eviction.go).
const (
	evictionRefused = "Cannot evict pod as it would violate the pod's disruption budget."
	// EvictionManyBudgets is the text of upstream's 500 when several budgets select the pod.
	EvictionManyBudgets  = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
	maxDisruptedPodsSize = 2000
)

// TakeDisruption is upstream's checkAndDecrement on a fresh copy of the budget.
func TakeDisruption(pdb *policyv1.PodDisruptionBudget, podName string) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return tooManyEvictions(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPodsSize {
		return apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		return tooManyEvictions(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
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

// tooManyEvictions is upstream's 429 refusal with the DisruptionBudget cause.
func tooManyEvictions(cause string) error {
	err := apierrors.NewTooManyRequests(evictionRefused, 0)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
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
