package validation

import (
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StorageVersionMigration is upstream's ValidateStorageVersionMigration: the
// resource is required, a DNS-1035 label; the group, when set, a DNS-1123
// subdomain.
func StorageVersionMigration(o *svmv1.StorageVersionMigration) field.ErrorList {
	errs := objectMeta(&o.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metaPath)
	res := field.NewPath("spec", "resource")
	if o.Spec.Resource.Resource == "" {
		errs = append(errs, field.Required(res.Child("resource"), "resource is required to be set"))
	} else if msgs := utilvalidation.IsDNS1035Label(o.Spec.Resource.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(res.Child("resource"), o.Spec.Resource.Resource, strings.Join(msgs, ",")))
	}
	if o.Spec.Resource.Group != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(o.Spec.Resource.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(res.Child("group"), o.Spec.Resource.Group, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// StorageVersionMigrationUpdate is upstream's update rule: the spec never changes.
func StorageVersionMigrationUpdate(n, o *svmv1.StorageVersionMigration) field.ErrorList {
	errs := StorageVersionMigration(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	return append(errs, immutable(n.Spec, o.Spec, field.NewPath("spec"))...)
}

// StorageVersionMigrationStatusUpdate is upstream's /status rule: a resourceVersion
// that, once set, never changes; valid conditions, never both Succeeded and Failed,
// and neither taken back once true.
func StorageVersionMigrationStatusUpdate(n, o *svmv1.StorageVersionMigration) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	st := field.NewPath("status")
	if rv := n.Status.ResourceVersion; rv != "" {
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(st.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(n.Status.Conditions, st.Child("conditions"))...)
	if o.Status.ResourceVersion != "" && o.Status.ResourceVersion != n.Status.ResourceVersion {
		errs = append(errs, field.Invalid(st.Child("resourceVersion"), n.Status.ResourceVersion, "field is immutable"))
	}
	if migrationIs(n, svmv1.MigrationSucceeded) && migrationIs(n, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(st.Child("conditions"), n.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if migrationIs(o, svmv1.MigrationSucceeded) && !migrationIs(n, svmv1.MigrationSucceeded) {
		errs = append(errs, field.Invalid(st.Child("conditions"), n.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if migrationIs(o, svmv1.MigrationFailed) && !migrationIs(n, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(st.Child("conditions"), n.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

func migrationIs(o *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	c := apimeta.FindStatusCondition(o.Status.Conditions, string(t))
	return c != nil && c.Status == metav1.ConditionTrue
}
