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

// Endpoints is the strategy of endpoints.
type Endpoints struct{}

// Default sets upstream's defaults.
func (Endpoints) Default(obj runtime.Object) { defaults.Endpoints(obj.(*corev1.Endpoints)) }

// Validate returns upstream's errors for a new object.
func (Endpoints) Validate(obj runtime.Object) field.ErrorList {
	return validation.Endpoints(obj.(*corev1.Endpoints))
}

// ValidateUpdate returns upstream's errors for an update.
func (Endpoints) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.EndpointsUpdate(obj.(*corev1.Endpoints), old.(*corev1.Endpoints))
}

// ConvertToTable prints upstream's columns.
func (Endpoints) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.EndpointsPrinter().Convert(objs, now, include, false)
}
