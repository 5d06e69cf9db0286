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

// Namespace is the strategy of namespaces.
type Namespace struct{}

// Default sets upstream's defaults.
func (Namespace) Default(obj runtime.Object) { defaults.Namespace(obj.(*corev1.Namespace)) }

// Validate returns upstream's errors for a new object.
func (Namespace) Validate(obj runtime.Object) field.ErrorList {
	return validation.Namespace(obj.(*corev1.Namespace))
}

// ValidateUpdate returns upstream's errors for an update.
func (Namespace) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.NamespaceUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// ValidateSubresourceUpdate validates namespaces/status (the phase follows the deletion
// timestamp) and namespaces/finalize (each finalizer's name) as upstream's strategies do.
func (Namespace) ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool) {
	n, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	switch subresource {
	case "status":
		return validation.NamespaceStatusUpdate(n, o), true
	case "finalize":
		return validation.NamespaceFinalizeUpdate(n, o), true
	}
	return nil, false
}

// ConvertToTable prints upstream's columns.
func (Namespace) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.NamespacePrinter().Convert(objs, now, include, false)
}

// StatusKeepsMetadata: a namespace's /status write applies its metadata (upstream's status
// strategy keeps only the spec).
func (Namespace) StatusKeepsMetadata() bool { return true }

// PrepareForCreate makes a new namespace Active, held by the kubernetes finalizer.
func (Namespace) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	o := obj.(*corev1.Namespace)
	o.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	has := false
	for _, f := range o.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			has = true
		}
	}
	if !has {
		o.Spec.Finalizers = append(o.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
}

// PrepareForUpdate keeps the spec finalizers on a main-resource update: only /finalize
// changes them.
func (Namespace) PrepareForUpdate(obj, old runtime.Object, subresource string, _ metav1.Time) {
	if subresource == "" {
		obj.(*corev1.Namespace).Spec.Finalizers = old.(*corev1.Namespace).Spec.Finalizers
	}
}

// Fields adds upstream's namespace field labels.
func (Namespace) Fields(obj runtime.Object, set fields.Set) {
	set["status.phase"] = string(obj.(*corev1.Namespace).Status.Phase)
}

// ConvertFieldLabel is upstream's field label conversion of v1 Namespaces (no metadata.namespace).
func (Namespace) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "status.phase", "metadata.name":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}
