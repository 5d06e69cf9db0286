package apps

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ControllerRevision is the strategy of controllerrevisions.
type ControllerRevision struct{}

// Validate returns upstream's errors for a new object.
func (ControllerRevision) Validate(obj runtime.Object) field.ErrorList {
	return validation.ControllerRevision(obj.(*appsv1.ControllerRevision))
}

// ValidateUpdate returns upstream's errors for an update.
func (ControllerRevision) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ControllerRevisionUpdate(obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision))
}

// ConvertToTable prints upstream's columns.
func (ControllerRevision) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ControllerRevisionPrinter().Convert(objs, now, include, false)
}
