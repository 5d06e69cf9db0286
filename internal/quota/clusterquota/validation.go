package clusterquota

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota"
)

// mustRestrict is OpenShift's message for a selector that selects every project.
const mustRestrict = "must restrict the selected projects"

// Validate validates a cluster quota on create, as OpenShift's ValidateClusterResourceQuota:
// metadata (cluster-scoped, name a DNS subdomain), a selector that restricts the selected
// namespaces (labels or annotations), a valid label selector and annotations, and
// spec.quota as a ResourceQuotaSpec. The status is the server's (computed on every write)
// and is not validated.
func Validate(crq *ClusterResourceQuota) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&crq.ObjectMeta, false, quota.ValidateResourceQuotaName, field.NewPath("metadata"))
	errs = append(errs, quota.ValidateQuotaAnnotations(crq.Annotations, field.NewPath("metadata", "annotations"))...)
	return append(errs, validateRest(crq)...)
}

// validateRest validates all but the metadata.
func validateRest(crq *ClusterResourceQuota) field.ErrorList {
	var errs field.ErrorList
	sel := crq.Spec.Selector
	selPath := field.NewPath("spec", "selector")
	restricts := func() bool {
		return sel.LabelSelector != nil && len(sel.LabelSelector.MatchLabels)+len(sel.LabelSelector.MatchExpressions) > 0
	}
	if !restricts() && len(sel.AnnotationSelector) == 0 {
		errs = append(errs, field.Required(selPath, mustRestrict))
	}
	if sel.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, selPath.Child("labels"))...)
		if !restricts() {
			errs = append(errs, field.Invalid(selPath.Child("labels"), sel.LabelSelector, mustRestrict))
		}
	}
	if sel.AnnotationSelector != nil {
		errs = append(errs, apimachineryvalidation.ValidateAnnotations(sel.AnnotationSelector, selPath.Child("annotations"))...)
	}
	errs = append(errs, quota.ValidateResourceQuotaSpec(&crq.Spec.Quota, field.NewPath("spec", "quota"))...)
	return errs
}

// ValidateUpdate validates an update: the metadata update rules and the new object (quotad's
// annotations only when changed, quota.ValidateQuotaAnnotationsUpdate).
func ValidateUpdate(crq, old *ClusterResourceQuota) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(&crq.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, apimachineryvalidation.ValidateObjectMeta(&crq.ObjectMeta, false, quota.ValidateResourceQuotaName, field.NewPath("metadata"))...)
	errs = append(errs, quota.ValidateQuotaAnnotationsUpdate(crq.Annotations, old.Annotations, field.NewPath("metadata", "annotations"))...)
	return append(errs, validateRest(crq)...)
}
