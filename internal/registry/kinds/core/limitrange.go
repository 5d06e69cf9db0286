package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// LimitRange is the strategy of limitranges.
type LimitRange struct{}

// Default sets upstream's defaults.
func (LimitRange) Default(obj runtime.Object) { defaults.LimitRange(obj.(*corev1.LimitRange)) }

// Validate returns upstream's errors for a new object.
func (LimitRange) Validate(obj runtime.Object) field.ErrorList {
	return validation.LimitRange(obj.(*corev1.LimitRange))
}

// ValidateUpdate returns upstream's errors for an update.
func (LimitRange) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.LimitRangeUpdate(obj.(*corev1.LimitRange), old.(*corev1.LimitRange))
}

// ConvertToTable prints upstream's default columns (no printer upstream).
func (LimitRange) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.DefaultPrinter(corev1.SchemeGroupVersion.WithKind("LimitRange")).Convert(objs, now, include, false)
}
