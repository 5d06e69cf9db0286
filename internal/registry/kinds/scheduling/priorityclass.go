package scheduling

import (
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// PriorityClass is the strategy of priorityclasses.
type PriorityClass struct{}

// Default sets upstream's defaults.
func (PriorityClass) Default(obj runtime.Object) {
	defaults.PriorityClass(obj.(*schedulingv1.PriorityClass))
}

// Validate returns upstream's errors for a new object.
func (PriorityClass) Validate(obj runtime.Object) field.ErrorList {
	return validation.PriorityClass(obj.(*schedulingv1.PriorityClass))
}

// ValidateUpdate returns upstream's errors for an update.
func (PriorityClass) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PriorityClassUpdate(obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass))
}

// ConvertToTable prints upstream's columns.
func (PriorityClass) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PriorityClassPrinter().Convert(objs, now, include, false)
}
