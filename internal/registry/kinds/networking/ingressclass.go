package networking

import (
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// IngressClass is the strategy of ingressclasses.
type IngressClass struct{}

// Default sets upstream's defaults.
func (IngressClass) Default(obj runtime.Object) {
	defaults.IngressClass(obj.(*networkingv1.IngressClass))
}

// Validate returns upstream's errors for a new object.
func (IngressClass) Validate(obj runtime.Object) field.ErrorList {
	return validation.IngressClass(obj.(*networkingv1.IngressClass))
}

// ValidateUpdate returns upstream's errors for an update.
func (IngressClass) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.IngressClassUpdate(obj.(*networkingv1.IngressClass), old.(*networkingv1.IngressClass))
}

// ConvertToTable prints upstream's columns.
func (IngressClass) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.IngressClassPrinter().Convert(objs, now, include, false)
}
