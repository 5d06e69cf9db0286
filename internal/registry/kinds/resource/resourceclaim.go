package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ResourceClaim is the strategy of resourceclaims.
type ResourceClaim struct{}

// Default sets upstream's defaults.
func (ResourceClaim) Default(obj runtime.Object) {
	o := obj.(*resourcev1.ResourceClaim)
	defaults.DeviceClaim(&o.Spec.Devices)
}

// Validate returns upstream's errors for a new object.
func (ResourceClaim) Validate(obj runtime.Object) field.ErrorList {
	return validation.ResourceClaim(obj.(*resourcev1.ResourceClaim))
}

// ValidateUpdate returns upstream's errors for an update.
func (ResourceClaim) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ResourceClaimUpdate(obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim))
}

// ConvertToTable prints upstream's columns.
func (ResourceClaim) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ResourceClaimPrinter().Convert(objs, now, include, false)
}
