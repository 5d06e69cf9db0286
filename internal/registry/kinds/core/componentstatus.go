package core

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
)

// ComponentStatus is the strategy of componentstatuses.
type ComponentStatus struct{}

// ConvertToTable prints upstream's columns.
func (ComponentStatus) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ComponentStatusPrinter().Convert(objs, now, include, false)
}

// Validate is never called: component statuses are computed on every read, never written.
func (ComponentStatus) Validate(runtime.Object) field.ErrorList { return nil }

// ValidateUpdate is never called (see Validate).
func (ComponentStatus) ValidateUpdate(_, _ runtime.Object) field.ErrorList { return nil }
