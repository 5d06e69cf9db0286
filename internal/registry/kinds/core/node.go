package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Node is the strategy of nodes.
type Node struct{}

// Default sets upstream's defaults.
func (Node) Default(obj runtime.Object) { defaults.Node(obj.(*corev1.Node)) }

// Validate returns upstream's errors for a new object.
func (Node) Validate(obj runtime.Object) field.ErrorList { return validation.Node(obj.(*corev1.Node)) }

// ValidateUpdate returns upstream's errors for an update.
func (Node) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.NodeUpdate(obj.(*corev1.Node), old.(*corev1.Node))
}

// ConvertToTable prints upstream's columns.
func (Node) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.NodePrinter().Convert(objs, now, include, false)
}

// PrepareForCreate keeps the status a node is registered with.
func (Node) PrepareForCreate(runtime.Object, auth.User, metav1.Time) {}

// Fields adds upstream's node field labels.
func (Node) Fields(obj runtime.Object, set fields.Set) {
	set["spec.unschedulable"] = fmt.Sprint(obj.(*corev1.Node).Spec.Unschedulable)
}

// ConvertFieldLabel is upstream's field label conversion of v1 Nodes (no metadata.namespace).
func (Node) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "spec.unschedulable":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// StatusKeepsMetadata: a Node's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (Node) StatusKeepsMetadata() bool { return true }
