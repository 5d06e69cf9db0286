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

// FlowSchema is the strategy of flowschemas.
type FlowSchema struct{}

// Default sets upstream's defaults.
func (FlowSchema) Default(obj runtime.Object) { defaults.FlowSchema(obj.(*flowcontrolv1.FlowSchema)) }

// Validate returns upstream's errors for a new object.
func (FlowSchema) Validate(obj runtime.Object) field.ErrorList {
	return validation.FlowSchema(obj.(*flowcontrolv1.FlowSchema))
}

// ValidateUpdate returns upstream's errors for an update.
func (FlowSchema) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.FlowSchemaUpdate(obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema))
}

// ConvertToTable prints upstream's columns.
func (FlowSchema) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.FlowSchemaPrinter().Convert(objs, now, include, false)
}

// ConvertListToTable prints a list by matching precedence, then name.
func (FlowSchema) ConvertListToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.FlowSchemaPrinter().Convert(table.SortFlowSchemas(objs), now, include, false)
}
