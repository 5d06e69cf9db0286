package coordination

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Lease is the strategy of leases.
type Lease struct{}

// Validate returns upstream's errors for a new object.
func (Lease) Validate(obj runtime.Object) field.ErrorList {
	return validation.Lease(obj.(*coordinationv1.Lease))
}

// ValidateUpdate returns upstream's errors for an update.
func (Lease) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.LeaseUpdate(obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease))
}

// ConvertToTable prints upstream's columns.
func (Lease) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.LeasePrinter().Convert(objs, now, include, false)
}
