package apps

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// DaemonSet is the strategy of daemonsets.
type DaemonSet struct{}

// Default sets upstream's defaults.
func (DaemonSet) Default(obj runtime.Object) { defaults.DaemonSet(obj.(*appsv1.DaemonSet)) }

// Validate returns upstream's errors for a new object.
func (DaemonSet) Validate(obj runtime.Object) field.ErrorList {
	return validation.DaemonSet(obj.(*appsv1.DaemonSet))
}

// ValidateUpdate returns upstream's errors for an update.
func (DaemonSet) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.DaemonSetUpdate(obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet))
}

// ConvertToTable prints upstream's columns.
func (DaemonSet) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.DaemonSetPrinter().Convert(objs, now, include, false)
}

// PrepareForCreate resets the status and starts the template generation.
func (DaemonSet) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	o := obj.(*appsv1.DaemonSet)
	o.Status = appsv1.DaemonSetStatus{}
	defaults.DaemonSetTemplateGeneration(o, nil)
}

// DefaultUpdate sets upstream's defaults, then counts a template change.
func (DaemonSet) DefaultUpdate(obj, old runtime.Object) {
	o := obj.(*appsv1.DaemonSet)
	defaults.DaemonSet(o)
	defaults.DaemonSetTemplateGeneration(o, old.(*appsv1.DaemonSet))
}

// Warnings are upstream's warnings on create (validation.DaemonSetWarnings).
func (DaemonSet) Warnings(obj runtime.Object) []string {
	return validation.DaemonSetWarnings(obj.(*appsv1.DaemonSet), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (DaemonSet) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.DaemonSetWarnings(obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet))
}

// StatusKeepsMetadata: a DaemonSet's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (DaemonSet) StatusKeepsMetadata() bool { return true }
