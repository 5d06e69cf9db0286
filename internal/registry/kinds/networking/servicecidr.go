package networking

import (
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ServiceCIDR is the strategy of servicecidrs.
type ServiceCIDR struct{}

// Validate returns upstream's errors for a new object.
func (ServiceCIDR) Validate(obj runtime.Object) field.ErrorList {
	return validation.ServiceCIDR(obj.(*networkingv1.ServiceCIDR))
}

// ValidateUpdate returns upstream's errors for an update.
func (ServiceCIDR) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ServiceCIDRUpdate(obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR))
}

// ConvertToTable prints upstream's columns.
func (ServiceCIDR) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ServiceCIDRPrinter().Convert(objs, now, include, false)
}
