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

// MutatingAdmissionPolicyBinding is the strategy of mutatingadmissionpolicybindings.
type MutatingAdmissionPolicyBinding struct{}

// Default sets upstream's defaults.
func (MutatingAdmissionPolicyBinding) Default(obj runtime.Object) {
	defaults.MutatingAdmissionPolicyBinding(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding))
}

// Validate returns upstream's errors for a new object.
func (MutatingAdmissionPolicyBinding) Validate(obj runtime.Object) field.ErrorList {
	return validation.MutatingAdmissionPolicyBinding(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding))
}

// ValidateUpdate returns upstream's errors for an update.
func (MutatingAdmissionPolicyBinding) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.MutatingAdmissionPolicyBindingUpdate(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding), old.(*admissionregistrationv1.MutatingAdmissionPolicyBinding))
}

// ConvertToTable prints upstream's columns.
func (MutatingAdmissionPolicyBinding) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.MutatingAdmissionPolicyBindingPrinter().Convert(objs, now, include, false)
}
