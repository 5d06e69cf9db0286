package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ServiceAccount is the strategy of serviceaccounts.
type ServiceAccount struct{}

// Validate returns upstream's errors for a new object.
func (ServiceAccount) Validate(obj runtime.Object) field.ErrorList {
	return validation.ServiceAccount(obj.(*corev1.ServiceAccount))
}

// ValidateUpdate returns upstream's errors for an update.
func (ServiceAccount) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ServiceAccountUpdate(obj.(*corev1.ServiceAccount), old.(*corev1.ServiceAccount))
}

// ConvertToTable prints upstream's columns.
func (ServiceAccount) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ServiceAccountPrinter().Convert(objs, now, include, false)
}
