package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// APIService validates an APIService on create (upstream kube-aggregator's
// ValidateAPIService): its name must be spec.version + "." + spec.group.
func APIService(a *apiregistrationv1.APIService) field.ErrorList {
	required := a.Spec.Version + "." + a.Spec.Group
	errs := plainMetaNamed(a, func(name string, _ bool) []string {
		if msgs := path.IsValidPathSegmentName(name); len(msgs) > 0 {
			return msgs
		}
		if name != required {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", required)}
		}
		return nil
	})
	sp := field.NewPath("spec")
	if a.Spec.Group == "" && a.Spec.Version != "v1" {
		errs = append(errs, field.Required(sp.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if a.Spec.Group != "" {
		for _, m := range utilvalidation.IsDNS1123Subdomain(a.Spec.Group) {
			errs = append(errs, field.Invalid(sp.Child("group"), a.Spec.Group, m))
		}
	}
	for _, m := range utilvalidation.IsDNS1035Label(a.Spec.Version) {
		errs = append(errs, field.Invalid(sp.Child("version"), a.Spec.Version, m))
	}
	if p := a.Spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		errs = append(errs, field.Invalid(sp.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := a.Spec.VersionPriority; p <= 0 || p > 1000 {
		errs = append(errs, field.Invalid(sp.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	svc := a.Spec.Service
	if svc == nil {
		if len(a.Spec.CABundle) != 0 {
			errs = append(errs, field.Invalid(sp.Child("caBundle"), fmt.Sprintf("%d bytes", len(a.Spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if a.Spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(sp.Child("insecureSkipTLSVerify"), a.Spec.InsecureSkipTLSVerify, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return append(errs, apiServiceStatus(a)...)
	}
	if svc.Namespace == "" {
		errs = append(errs, field.Required(sp.Child("service", "namespace"), ""))
	}
	if svc.Name == "" {
		errs = append(errs, field.Required(sp.Child("service", "name"), ""))
	}
	var port int32
	if svc.Port != nil {
		port = *svc.Port
	}
	if msgs := utilvalidation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(sp.Child("service", "port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if a.Spec.InsecureSkipTLSVerify && len(a.Spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(sp.Child("insecureSkipTLSVerify"), a.Spec.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
	}
	return append(errs, apiServiceStatus(a)...)
}

func apiServiceStatus(a *apiregistrationv1.APIService) field.ErrorList {
	var errs field.ErrorList
	for i, c := range a.Status.Conditions {
		if c.Status != apiregistrationv1.ConditionTrue && c.Status != apiregistrationv1.ConditionFalse && c.Status != apiregistrationv1.ConditionUnknown {
			errs = append(errs, field.NotSupported(field.NewPath("status", "conditions").Index(i).Child("status"), c.Status, []string{"True", "False", "Unknown"}))
		}
	}
	return errs
}

func plainMetaNamed(a *apiregistrationv1.APIService, rule NameFunc) field.ErrorList {
	return objectMeta(&a.ObjectMeta, false, rule, metaPath)
}

// APIServiceUpdate is kube-aggregator's update validation: the metadata update rules, then
// the object validated as new.
func APIServiceUpdate(n, o *apiregistrationv1.APIService) field.ErrorList {
	return append(objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath), APIService(n)...)
}
