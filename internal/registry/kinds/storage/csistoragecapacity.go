package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// CSIStorageCapacity is the strategy of csistoragecapacities.
type CSIStorageCapacity struct{}

// Validate returns upstream's errors for a new object.
func (CSIStorageCapacity) Validate(obj runtime.Object) field.ErrorList {
	return validation.CSIStorageCapacity(obj.(*storagev1.CSIStorageCapacity))
}

// ValidateUpdate returns upstream's errors for an update.
func (CSIStorageCapacity) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.CSIStorageCapacityUpdate(obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity))
}

// ConvertToTable prints upstream's default columns (Name, Created At): its storage uses
// the default convertor.
func (CSIStorageCapacity) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.CSIStorageCapacityPrinter().Convert(objs, now, include, false)
}
