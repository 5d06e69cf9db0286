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

// ValidatingAdmissionPolicyBinding is the strategy of validatingadmissionpolicybindings.
type ValidatingAdmissionPolicyBinding struct{}

// Default sets upstream's defaults.
func (ValidatingAdmissionPolicyBinding) Default(obj runtime.Object) {
	defaults.ValidatingAdmissionPolicyBinding(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
}

// Validate returns upstream's errors for a new object.
func (ValidatingAdmissionPolicyBinding) Validate(obj runtime.Object) field.ErrorList {
	return validation.ValidatingAdmissionPolicyBinding(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
}

// ValidateUpdate returns upstream's errors for an update.
func (ValidatingAdmissionPolicyBinding) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ValidatingAdmissionPolicyBindingUpdate(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding), old.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
}

// ConvertToTable prints upstream's columns.
func (ValidatingAdmissionPolicyBinding) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ValidatingAdmissionPolicyBindingPrinter().Convert(objs, now, include, false)
}
