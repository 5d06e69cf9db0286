package validation

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// supportedUnhealthyPodEvictionPolicies are upstream's, sorted.
var supportedUnhealthyPodEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

// PodDisruptionBudget validates a policy/v1 PodDisruptionBudget (upstream
// ValidatePodDisruptionBudget): minAvailable and maxUnavailable are exclusive
// non-negative integers or percentages up to 100%, the selector is a valid label
// selector, and unhealthyPodEvictionPolicy is one of upstream's.
func PodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := objectMeta(&pdb.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, pdbSpec(&pdb.Spec, field.NewPath("spec"))...)
}

func pdbSpec(s *policyv1.PodDisruptionBudgetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinAvailable != nil && s.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p, convert.InternalJSON(*s), "minAvailable and maxUnavailable cannot be both set"))
	}
	if s.MinAvailable != nil {
		errs = append(errs, positiveIntOrPercent(*s.MinAvailable, p.Child("minAvailable"))...)
		errs = append(errs, notMoreThan100Percent(*s.MinAvailable, p.Child("minAvailable"))...)
	}
	if s.MaxUnavailable != nil {
		errs = append(errs, positiveIntOrPercent(*s.MaxUnavailable, p.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(*s.MaxUnavailable, p.Child("maxUnavailable"))...)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	if v := s.UnhealthyPodEvictionPolicy; v != nil {
		ok := false
		for _, x := range supportedUnhealthyPodEvictionPolicies {
			ok = ok || string(*v) == x
		}
		if !ok {
			errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *v, supportedUnhealthyPodEvictionPolicies))
		}
	}
	return errs
}

// PodDisruptionBudgetUpdate validates an update of a PodDisruptionBudget (the spec is
// mutable since policy/v1; the status is checked when written through /status).
func PodDisruptionBudgetUpdate(n, o *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, pdbSpec(&n.Spec, field.NewPath("spec"))...)
	return append(errs, pdbStatus(&n.Status, field.NewPath("status"))...)
}

// pdbStatus is upstream ValidatePodDisruptionBudgetStatusUpdate's counts check.
func pdbStatus(s *policyv1.PodDisruptionBudgetStatus, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, nonnegative(int64(s.DisruptionsAllowed), p.Child("disruptionsAllowed"))...)
	errs = append(errs, nonnegative(int64(s.CurrentHealthy), p.Child("currentHealthy"))...)
	errs = append(errs, nonnegative(int64(s.DesiredHealthy), p.Child("desiredHealthy"))...)
	errs = append(errs, nonnegative(int64(s.ExpectedPods), p.Child("expectedPods"))...)
	return errs
}
