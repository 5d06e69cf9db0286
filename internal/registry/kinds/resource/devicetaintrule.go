package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// DeviceTaintRule is the strategy of devicetaintrules (upstream's
// pkg/registry/resource/devicetaintrule): the scheduler and the device taint eviction
// controller list and watch them.
type DeviceTaintRule struct{}

// Validate returns upstream's errors for a new object.
func (DeviceTaintRule) Validate(obj runtime.Object) field.ErrorList {
	return validation.DeviceTaintRule(obj.(*resourcev1.DeviceTaintRule))
}

// ValidateUpdate returns upstream's errors for an update.
func (DeviceTaintRule) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.DeviceTaintRuleUpdate(obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule))
}

// ValidateSubresourceUpdate validates a write through /status with the status rules.
func (DeviceTaintRule) ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool) {
	if subresource != "status" {
		return nil, false
	}
	return validation.DeviceTaintRuleStatusUpdate(obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)), true
}

// PrepareForUpdate bumps the taint's timeAdded when its effect changes and the client kept
// the old time, as upstream: timeAdded tracks when the effect was added, which tolerations'
// durations count from. Encoded times have second resolution, so now is truncated.
func (DeviceTaintRule) PrepareForUpdate(obj, old runtime.Object, subresource string, now metav1.Time) {
	if subresource != "" {
		return
	}
	r, o := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	if r.Spec.Taint.Effect != o.Spec.Taint.Effect && r.Spec.Taint.TimeAdded.Equal(o.Spec.Taint.TimeAdded) {
		r.Spec.Taint.TimeAdded = &metav1.Time{Time: now.Truncate(time.Second)}
	}
}

// ConvertToTable prints upstream's columns.
func (DeviceTaintRule) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.DeviceTaintRulePrinter().Convert(objs, now, include, false)
}
