package flowcontrol

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// PriorityLevelConfiguration is the strategy of prioritylevelconfigurations.
type PriorityLevelConfiguration struct{}

// Default sets upstream's defaults.
func (PriorityLevelConfiguration) Default(obj runtime.Object) {
	defaults.PriorityLevelConfiguration(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

// Validate returns upstream's errors for a new object.
func (PriorityLevelConfiguration) Validate(obj runtime.Object) field.ErrorList {
	return validation.PriorityLevelConfiguration(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

// ValidateUpdate returns upstream's errors for an update.
func (PriorityLevelConfiguration) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PriorityLevelConfigurationUpdate(obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration))
}

// ConvertToTable prints upstream's columns.
func (PriorityLevelConfiguration) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PriorityLevelPrinter().Convert(objs, now, include, false)
}
