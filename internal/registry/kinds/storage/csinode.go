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

// CSINode is the strategy of csinodes.
type CSINode struct{}

// Validate returns upstream's errors for a new object.
func (CSINode) Validate(obj runtime.Object) field.ErrorList {
	return validation.CSINode(obj.(*storagev1.CSINode))
}

// ValidateUpdate returns upstream's errors for an update.
func (CSINode) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.CSINodeUpdate(obj.(*storagev1.CSINode), old.(*storagev1.CSINode))
}

// ConvertToTable prints upstream's columns.
func (CSINode) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.CSINodePrinter().Convert(objs, now, include, false)
}
