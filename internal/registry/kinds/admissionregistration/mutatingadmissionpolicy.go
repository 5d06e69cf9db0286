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

// MutatingAdmissionPolicy is the strategy of mutatingadmissionpolicys.
type MutatingAdmissionPolicy struct{}

// Default sets upstream's defaults.
func (MutatingAdmissionPolicy) Default(obj runtime.Object) {
	defaults.MutatingAdmissionPolicy(obj.(*admissionregistrationv1.MutatingAdmissionPolicy))
}

// Validate returns upstream's errors for a new object.
func (MutatingAdmissionPolicy) Validate(obj runtime.Object) field.ErrorList {
	return validation.MutatingAdmissionPolicy(obj.(*admissionregistrationv1.MutatingAdmissionPolicy))
}

// ValidateUpdate returns upstream's errors for an update.
func (MutatingAdmissionPolicy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.MutatingAdmissionPolicyUpdate(obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy))
}

// ConvertToTable prints upstream's columns.
func (MutatingAdmissionPolicy) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.MutatingAdmissionPolicyPrinter().Convert(objs, now, include, false)
}
