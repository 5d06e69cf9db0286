package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// PodTemplate is the strategy of podtemplates.
type PodTemplate struct{}

// Default sets upstream's defaults.
func (PodTemplate) Default(obj runtime.Object) { defaults.PodTemplate(obj.(*corev1.PodTemplate)) }

// Validate returns upstream's errors for a new object.
func (PodTemplate) Validate(obj runtime.Object) field.ErrorList {
	return validation.PodTemplate(obj.(*corev1.PodTemplate))
}

// ValidateUpdate returns upstream's errors for an update.
func (PodTemplate) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PodTemplateUpdate(obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate))
}

// ConvertToTable prints upstream's columns.
func (PodTemplate) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PodTemplatePrinter().Convert(objs, now, include, false)
}

// Warnings are upstream's warnings on create (validation.PodTemplateObjectWarnings).
func (PodTemplate) Warnings(obj runtime.Object) []string {
	return validation.PodTemplateObjectWarnings(obj.(*corev1.PodTemplate), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (PodTemplate) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.PodTemplateObjectWarnings(obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate))
}
