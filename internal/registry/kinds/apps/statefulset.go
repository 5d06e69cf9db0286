package apps

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// StatefulSet is the strategy of statefulsets.
type StatefulSet struct{}

// Default sets upstream's defaults.
func (StatefulSet) Default(obj runtime.Object) { defaults.StatefulSet(obj.(*appsv1.StatefulSet)) }

// Validate returns upstream's errors for a new object.
func (StatefulSet) Validate(obj runtime.Object) field.ErrorList {
	return validation.StatefulSet(obj.(*appsv1.StatefulSet))
}

// ValidateUpdate returns upstream's errors for an update.
func (StatefulSet) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.StatefulSetUpdate(obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet))
}

// ConvertToTable prints upstream's columns.
func (StatefulSet) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.StatefulSetPrinter().Convert(objs, now, include, false)
}

// Warnings are upstream's warnings on create (validation.StatefulSetWarnings).
func (StatefulSet) Warnings(obj runtime.Object) []string {
	return validation.StatefulSetWarnings(obj.(*appsv1.StatefulSet), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (StatefulSet) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.StatefulSetWarnings(obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet))
}

// StatusKeepsMetadata: a StatefulSet's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (StatefulSet) StatusKeepsMetadata() bool { return true }
