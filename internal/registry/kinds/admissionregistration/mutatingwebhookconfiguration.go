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

// MutatingWebhookConfiguration is the strategy of mutatingwebhookconfigurations.
type MutatingWebhookConfiguration struct{}

// Default sets upstream's defaults.
func (MutatingWebhookConfiguration) Default(obj runtime.Object) {
	defaults.MutatingWebhookConfiguration(obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
}

// Validate returns upstream's errors for a new object.
func (MutatingWebhookConfiguration) Validate(obj runtime.Object) field.ErrorList {
	return validation.MutatingWebhookConfiguration(obj.(*admissionregistrationv1.MutatingWebhookConfiguration))
}

// ValidateUpdate returns upstream's errors for an update.
func (MutatingWebhookConfiguration) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.MutatingWebhookConfigurationUpdate(obj.(*admissionregistrationv1.MutatingWebhookConfiguration), old.(*admissionregistrationv1.MutatingWebhookConfiguration))
}

// ConvertToTable prints upstream's columns.
func (MutatingWebhookConfiguration) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.MutatingWebhookPrinter().Convert(objs, now, include, false)
}
