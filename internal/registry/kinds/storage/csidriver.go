package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// CSIDriver is the strategy of csidrivers.
type CSIDriver struct{}

// Default sets upstream's defaults.
func (CSIDriver) Default(obj runtime.Object) { defaults.CSIDriver(obj.(*storagev1.CSIDriver)) }

// Validate returns upstream's errors for a new object.
func (CSIDriver) Validate(obj runtime.Object) field.ErrorList {
	return validation.CSIDriver(obj.(*storagev1.CSIDriver))
}

// ValidateUpdate returns upstream's errors for an update.
func (CSIDriver) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.CSIDriverUpdate(obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver))
}

// ConvertToTable prints upstream's columns.
func (CSIDriver) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.CSIDriverPrinter().Convert(objs, now, include, false)
}

// PrepareForUpdate counts spec changes in the generation: a CSIDriver is created at
// generation 0 (upstream's strategy does not set it) and counts from there.
func (CSIDriver) PrepareForUpdate(obj, old runtime.Object, subresource string, _ metav1.Time) {
	if subresource != "" {
		return
	}
	d, o := obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver)
	if !quantity.Semantic().DeepEqual(d.Spec, o.Spec) {
		d.Generation = o.Generation + 1
	}
}
