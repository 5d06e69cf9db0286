package autoscaling

import (
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// HorizontalPodAutoscalerV1 is the strategy of horizontalpodautoscalers (autoscaling/v1, stored as v2).
type HorizontalPodAutoscalerV1 struct{}

// Default sets upstream's defaults.
func (HorizontalPodAutoscalerV1) Default(obj runtime.Object) {
	defaults.HorizontalPodAutoscalerV1(obj.(*autoscalingv1.HorizontalPodAutoscaler))
}

// Validate returns upstream's errors for a new object.
func (HorizontalPodAutoscalerV1) Validate(obj runtime.Object) field.ErrorList {
	return validation.HorizontalPodAutoscalerV1(obj.(*autoscalingv1.HorizontalPodAutoscaler))
}

// ValidateUpdate returns upstream's errors for an update.
func (HorizontalPodAutoscalerV1) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.HorizontalPodAutoscalerV1Update(obj.(*autoscalingv1.HorizontalPodAutoscaler), old.(*autoscalingv1.HorizontalPodAutoscaler))
}

// ConvertToTable prints upstream's columns.
func (HorizontalPodAutoscalerV1) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.HPAAnyVersionPrinter().Convert(objs, now, include, false)
}
