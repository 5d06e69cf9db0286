package coordination

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
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

// PrepareForCreate drops the coordinated leader election fields (strategy, preferred
// holder): CoordinatedLeaderElection is off in v1.37, as upstream's strategy drops them.
func (Lease) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	l := obj.(*coordinationv1.Lease)
	l.Spec.Strategy, l.Spec.PreferredHolder = nil, nil
}

// PrepareForUpdate drops the coordinated leader election fields unless the stored lease
// has them.
func (Lease) PrepareForUpdate(obj, old runtime.Object, _ string, _ metav1.Time) {
	l, o := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	if o.Spec.Strategy == nil {
		l.Spec.Strategy = nil
	}
	if o.Spec.PreferredHolder == nil {
		l.Spec.PreferredHolder = nil
	}
}

// ConvertToTable prints upstream's columns.
func (Lease) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.LeasePrinter().Convert(objs, now, include, false)
}
