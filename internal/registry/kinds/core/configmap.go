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

// ConfigMap is the strategy of configmaps.
type ConfigMap struct{}

// Default sets upstream's defaults.
func (ConfigMap) Default(obj runtime.Object) { defaults.ConfigMap(obj.(*corev1.ConfigMap)) }

// Validate returns upstream's errors for a new object.
func (ConfigMap) Validate(obj runtime.Object) field.ErrorList {
	return validation.ConfigMap(obj.(*corev1.ConfigMap))
}

// ValidateUpdate returns upstream's errors for an update.
func (ConfigMap) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ConfigMapUpdate(obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap))
}

// ConvertToTable prints upstream's columns.
func (ConfigMap) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ConfigMapPrinter().Convert(objs, now, include, false)
}
