package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ResourceClaimTemplate is the strategy of resourceclaimtemplates.
type ResourceClaimTemplate struct{}

// Default sets upstream's defaults.
func (ResourceClaimTemplate) Default(obj runtime.Object) {
	o := obj.(*resourcev1.ResourceClaimTemplate)
	defaults.DeviceClaim(&o.Spec.Spec.Devices)
}

// Validate returns upstream's errors for a new object.
func (ResourceClaimTemplate) Validate(obj runtime.Object) field.ErrorList {
	return validation.ResourceClaimTemplate(obj.(*resourcev1.ResourceClaimTemplate))
}

// ValidateUpdate returns upstream's errors for an update.
func (ResourceClaimTemplate) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ResourceClaimTemplateUpdate(obj.(*resourcev1.ResourceClaimTemplate), old.(*resourcev1.ResourceClaimTemplate))
}

// ConvertToTable prints upstream's columns.
func (ResourceClaimTemplate) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ResourceClaimTemplatePrinter().Convert(objs, now, include, false)
}
