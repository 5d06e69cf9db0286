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

// NetworkPolicy is the strategy of networkpolicies.
type NetworkPolicy struct{}

// Default sets upstream's defaults.
func (NetworkPolicy) Default(obj runtime.Object) {
	defaults.NetworkPolicy(obj.(*networkingv1.NetworkPolicy))
}

// Validate returns upstream's errors for a new object.
func (NetworkPolicy) Validate(obj runtime.Object) field.ErrorList {
	return validation.NetworkPolicy(obj.(*networkingv1.NetworkPolicy))
}

// ValidateUpdate returns upstream's errors for an update.
func (NetworkPolicy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.NetworkPolicyUpdate(obj.(*networkingv1.NetworkPolicy), old.(*networkingv1.NetworkPolicy))
}

// ConvertToTable prints upstream's columns.
func (NetworkPolicy) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.NetworkPolicyPrinter().Convert(objs, now, include, false)
}
