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

// DeviceClass is the strategy of deviceclasses.
type DeviceClass struct{}

// Validate returns upstream's errors for a new object.
func (DeviceClass) Validate(obj runtime.Object) field.ErrorList {
	return validation.DeviceClass(obj.(*resourcev1.DeviceClass))
}

// ValidateUpdate returns upstream's errors for an update.
func (DeviceClass) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.DeviceClassUpdate(obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass))
}

// ConvertToTable prints upstream's columns.
func (DeviceClass) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.DeviceClassPrinter().Convert(objs, now, include, false)
}
