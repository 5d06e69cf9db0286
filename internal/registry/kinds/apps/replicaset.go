package apps

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ReplicaSet is the strategy of replicasets.
type ReplicaSet struct{}

// Default sets upstream's defaults.
func (ReplicaSet) Default(obj runtime.Object) { defaults.ReplicaSet(obj.(*appsv1.ReplicaSet)) }

// Validate returns upstream's errors for a new object.
func (ReplicaSet) Validate(obj runtime.Object) field.ErrorList {
	return validation.ReplicaSet(obj.(*appsv1.ReplicaSet))
}

// ValidateUpdate returns upstream's errors for an update.
func (ReplicaSet) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ReplicaSetUpdate(obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet))
}

// ConvertToTable prints upstream's columns.
func (ReplicaSet) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ReplicaSetPrinter().Convert(objs, now, include, false)
}

// Fields adds upstream's replica set field labels.
func (ReplicaSet) Fields(obj runtime.Object, set fields.Set) {
	set["status.replicas"] = fmt.Sprint(obj.(*appsv1.ReplicaSet).Status.Replicas)
}

// Warnings are upstream's warnings on create (validation.ReplicaSetWarnings).
func (ReplicaSet) Warnings(obj runtime.Object) []string {
	return validation.ReplicaSetWarnings(obj.(*appsv1.ReplicaSet), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (ReplicaSet) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.ReplicaSetWarnings(obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet))
}

// StatusKeepsMetadata: a ReplicaSet's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (ReplicaSet) StatusKeepsMetadata() bool { return true }
