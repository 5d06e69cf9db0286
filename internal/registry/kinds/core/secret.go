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

// Secret is the strategy of secrets.
type Secret struct{}

// Default sets upstream's defaults.
func (Secret) Default(obj runtime.Object) { defaults.Secret(obj.(*corev1.Secret)) }

// Validate returns upstream's errors for a new object.
func (Secret) Validate(obj runtime.Object) field.ErrorList {
	return validation.Secret(obj.(*corev1.Secret))
}

// ValidateUpdate returns upstream's errors for an update.
func (Secret) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.SecretUpdate(obj.(*corev1.Secret), old.(*corev1.Secret))
}

// ConvertToTable prints upstream's columns.
func (Secret) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.SecretPrinter().Convert(objs, now, include, false)
}

// Fields adds upstream's secret field labels.
func (Secret) Fields(obj runtime.Object, set fields.Set) {
	set["type"] = string(obj.(*corev1.Secret).Type)
}

// ConvertFieldLabel is upstream's field label conversion of v1 Secrets.
func (Secret) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "type", "metadata.namespace", "metadata.name":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}
