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

// VolumeAttributesClass is the strategy of volumeattributesclasses.
type VolumeAttributesClass struct{}

// Validate returns upstream's errors for a new object.
func (VolumeAttributesClass) Validate(obj runtime.Object) field.ErrorList {
	return validation.VolumeAttributesClass(obj.(*storagev1.VolumeAttributesClass))
}

// ValidateUpdate returns upstream's errors for an update.
func (VolumeAttributesClass) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.VolumeAttributesClassUpdate(obj.(*storagev1.VolumeAttributesClass), old.(*storagev1.VolumeAttributesClass))
}

// ConvertToTable prints upstream's columns.
func (VolumeAttributesClass) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.VolumeAttributesClassPrinter().Convert(objs, now, include, false)
}
