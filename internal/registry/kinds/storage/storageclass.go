package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// StorageClass is the strategy of storageclasses.
type StorageClass struct{}

// Default sets upstream's defaults.
func (StorageClass) Default(obj runtime.Object) { defaults.StorageClass(obj.(*storagev1.StorageClass)) }

// Validate returns upstream's errors for a new object.
func (StorageClass) Validate(obj runtime.Object) field.ErrorList {
	return validation.StorageClass(obj.(*storagev1.StorageClass))
}

// ValidateUpdate returns upstream's errors for an update.
func (StorageClass) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.StorageClassUpdate(obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass))
}

// ConvertToTable prints upstream's columns.
func (StorageClass) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.StorageClassPrinter().Convert(objs, now, include, false)
}

// ConvertListToTable prints a list, marking its effective default class.
func (StorageClass) ConvertListToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.StorageClassListPrinter(objs).Convert(objs, now, include, false)
}
