package validation

import (
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Lease validates a coordination.k8s.io Lease (upstream ValidateLease).
func Lease(l *coordinationv1.Lease) field.ErrorList {
	errs := objectMeta(&l.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, leaseSpec(&l.Spec, field.NewPath("spec"))...)
}

// LeaseUpdate validates an update of a Lease.
func LeaseUpdate(n, o *coordinationv1.Lease) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, leaseSpec(&n.Spec, field.NewPath("spec"))...)
}

func leaseSpec(s *coordinationv1.LeaseSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), s.LeaseDurationSeconds, "must be greater than 0"))
	}
	if s.LeaseTransitions != nil && *s.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), s.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if s.Strategy != nil {
		sp := p.Child("strategy")
		if strings.Contains(string(*s.Strategy), "/") {
			for _, msg := range validation.IsQualifiedName(string(*s.Strategy)) {
				errs = append(errs, field.Invalid(sp, *s.Strategy, msg))
			}
		} else if *s.Strategy != coordinationv1.OldestEmulationVersion {
			errs = append(errs, field.NotSupported(sp, *s.Strategy, []string{string(coordinationv1.OldestEmulationVersion)}))
		}
	}
	if s.PreferredHolder != nil && *s.PreferredHolder != "" && (s.Strategy == nil || *s.Strategy == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}
