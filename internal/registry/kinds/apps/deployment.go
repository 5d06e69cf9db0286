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

// Deployment is the strategy of deployments.
type Deployment struct{}

// Default sets upstream's defaults.
func (Deployment) Default(obj runtime.Object) { defaults.Deployment(obj.(*appsv1.Deployment)) }

// Validate returns upstream's errors for a new object.
func (Deployment) Validate(obj runtime.Object) field.ErrorList {
	return validation.Deployment(obj.(*appsv1.Deployment))
}

// ValidateUpdate returns upstream's errors for an update.
func (Deployment) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.DeploymentUpdate(obj.(*appsv1.Deployment), old.(*appsv1.Deployment))
}

// ConvertToTable prints upstream's columns.
func (Deployment) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.DeploymentPrinter().Convert(objs, now, include, false)
}

// Warnings are upstream's warnings on create (validation.DeploymentWarnings).
func (Deployment) Warnings(obj runtime.Object) []string {
	return validation.DeploymentWarnings(obj.(*appsv1.Deployment), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (Deployment) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.DeploymentWarnings(obj.(*appsv1.Deployment), old.(*appsv1.Deployment))
}

// StatusKeepsMetadata: a Deployment's /status write applies its annotations, finalizers
// and owner references; its labels stay as stored (PrepareForUpdate), as upstream's status
// strategy.
func (Deployment) StatusKeepsMetadata() bool { return true }

// PrepareForUpdate keeps a Deployment's labels as stored on a /status write.
func (Deployment) PrepareForUpdate(obj, old runtime.Object, subresource string, _ metav1.Time) {
	if subresource == "status" {
		obj.(*appsv1.Deployment).Labels = old.(*appsv1.Deployment).Labels
	}
}
