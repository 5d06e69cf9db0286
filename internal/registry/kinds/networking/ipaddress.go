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

// IPAddress is the strategy of ipaddresses.
type IPAddress struct{}

// Validate returns upstream's errors for a new object.
func (IPAddress) Validate(obj runtime.Object) field.ErrorList {
	return validation.IPAddress(obj.(*networkingv1.IPAddress))
}

// ValidateUpdate returns upstream's errors for an update.
func (IPAddress) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.IPAddressUpdate(obj.(*networkingv1.IPAddress), old.(*networkingv1.IPAddress))
}

// ConvertToTable prints upstream's columns.
func (IPAddress) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.IPAddressPrinter().Convert(objs, now, include, false)
}
