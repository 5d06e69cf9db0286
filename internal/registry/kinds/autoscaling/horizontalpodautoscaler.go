package autoscaling

import (
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// HorizontalPodAutoscaler is the strategy of horizontalpodautoscalers.
type HorizontalPodAutoscaler struct{}

// Default sets upstream's defaults.
func (HorizontalPodAutoscaler) Default(obj runtime.Object) {
	defaults.HorizontalPodAutoscaler(obj.(*autoscalingv2.HorizontalPodAutoscaler))
}

// Validate returns upstream's errors for a new object.
func (HorizontalPodAutoscaler) Validate(obj runtime.Object) field.ErrorList {
	return validation.HorizontalPodAutoscaler(obj.(*autoscalingv2.HorizontalPodAutoscaler))
}

// ValidateUpdate returns upstream's errors for an update.
func (HorizontalPodAutoscaler) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.HorizontalPodAutoscalerUpdate(obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler))
}

// ConvertToTable prints upstream's columns.
func (HorizontalPodAutoscaler) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.HPAAnyVersionPrinter().Convert(objs, now, include, false)
}

// StatusKeepsMetadata: a HorizontalPodAutoscaler's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (HorizontalPodAutoscaler) StatusKeepsMetadata() bool { return true }
