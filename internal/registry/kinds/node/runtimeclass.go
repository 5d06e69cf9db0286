package node

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// RuntimeClass is the strategy of runtimeclasses.
type RuntimeClass struct{}

// Validate returns upstream's errors for a new object.
func (RuntimeClass) Validate(obj runtime.Object) field.ErrorList {
	return validation.RuntimeClass(obj.(*nodev1.RuntimeClass))
}

// ValidateUpdate returns upstream's errors for an update.
func (RuntimeClass) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.RuntimeClassUpdate(obj.(*nodev1.RuntimeClass), old.(*nodev1.RuntimeClass))
}

// ConvertToTable prints upstream's columns.
func (RuntimeClass) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.RuntimeClassPrinter().Convert(objs, now, include, false)
}
