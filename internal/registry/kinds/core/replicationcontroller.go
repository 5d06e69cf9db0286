package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ReplicationController is the strategy of replicationcontrollers.
type ReplicationController struct{}

// Default sets upstream's defaults.
func (ReplicationController) Default(obj runtime.Object) {
	defaults.ReplicationController(obj.(*corev1.ReplicationController))
}

// Validate returns upstream's errors for a new object.
func (ReplicationController) Validate(obj runtime.Object) field.ErrorList {
	return validation.ReplicationController(obj.(*corev1.ReplicationController))
}

// ValidateUpdate returns upstream's errors for an update.
func (ReplicationController) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ReplicationControllerUpdate(obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController))
}

// ConvertToTable prints upstream's columns.
func (ReplicationController) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ReplicationControllerPrinter().Convert(objs, now, include, false)
}

// Fields adds upstream's replication controller field labels.
func (ReplicationController) Fields(obj runtime.Object, set fields.Set) {
	set["status.replicas"] = fmt.Sprint(obj.(*corev1.ReplicationController).Status.Replicas)
}

// ConvertFieldLabel is upstream's field label conversion of v1 ReplicationControllers.
func (ReplicationController) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace", "status.replicas":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// Warnings are upstream's warnings on create (validation.ReplicationControllerWarnings).
func (ReplicationController) Warnings(obj runtime.Object) []string {
	return validation.ReplicationControllerWarnings(obj.(*corev1.ReplicationController), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (ReplicationController) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.ReplicationControllerWarnings(obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController))
}

// StatusKeepsMetadata: a ReplicationController's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (ReplicationController) StatusKeepsMetadata() bool { return true }
