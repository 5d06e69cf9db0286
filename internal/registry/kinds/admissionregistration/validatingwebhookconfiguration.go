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

// ValidatingWebhookConfiguration is the strategy of validatingwebhookconfigurations.
type ValidatingWebhookConfiguration struct{}

// Default sets upstream's defaults.
func (ValidatingWebhookConfiguration) Default(obj runtime.Object) {
	defaults.ValidatingWebhookConfiguration(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
}

// Validate returns upstream's errors for a new object.
func (ValidatingWebhookConfiguration) Validate(obj runtime.Object) field.ErrorList {
	return validation.ValidatingWebhookConfiguration(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration))
}

// ValidateUpdate returns upstream's errors for an update.
func (ValidatingWebhookConfiguration) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ValidatingWebhookConfigurationUpdate(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration), old.(*admissionregistrationv1.ValidatingWebhookConfiguration))
}

// ConvertToTable prints upstream's columns.
func (ValidatingWebhookConfiguration) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ValidatingWebhookPrinter().Convert(objs, now, include, false)
}
