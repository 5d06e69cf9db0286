package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ValidatingAdmissionPolicy is the strategy of validatingadmissionpolicys.
type ValidatingAdmissionPolicy struct{}

// Default sets upstream's defaults.
func (ValidatingAdmissionPolicy) Default(obj runtime.Object) {
	defaults.ValidatingAdmissionPolicy(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy))
}

// Validate returns upstream's errors for a new object.
func (ValidatingAdmissionPolicy) Validate(obj runtime.Object) field.ErrorList {
	return validation.ValidatingAdmissionPolicy(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy))
}

// ValidateUpdate returns upstream's errors for an update.
func (ValidatingAdmissionPolicy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ValidatingAdmissionPolicyUpdate(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy))
}

// ConvertToTable prints upstream's columns.
func (ValidatingAdmissionPolicy) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ValidatingAdmissionPolicyPrinter().Convert(objs, now, include, false)
}
