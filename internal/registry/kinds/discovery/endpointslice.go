package discovery

import (
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// EndpointSlice is the strategy of endpointslices.
type EndpointSlice struct{}

// Default sets upstream's defaults.
func (EndpointSlice) Default(obj runtime.Object) {
	defaults.EndpointSlice(obj.(*discoveryv1.EndpointSlice))
}

// Validate returns upstream's errors for a new object.
func (EndpointSlice) Validate(obj runtime.Object) field.ErrorList {
	return validation.EndpointSlice(obj.(*discoveryv1.EndpointSlice))
}

// ValidateUpdate returns upstream's errors for an update.
func (EndpointSlice) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.EndpointSliceUpdate(obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice))
}

// ConvertToTable prints upstream's columns.
func (EndpointSlice) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.EndpointSlicePrinter().Convert(objs, now, include, false)
}
