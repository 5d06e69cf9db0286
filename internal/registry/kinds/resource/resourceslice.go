package resource

import (
	"fmt"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ResourceSlice is the strategy of resourceslices.
type ResourceSlice struct{}

// Validate returns upstream's errors for a new object.
func (ResourceSlice) Validate(obj runtime.Object) field.ErrorList {
	return validation.ResourceSlice(obj.(*resourcev1.ResourceSlice))
}

// ValidateUpdate returns upstream's errors for an update.
func (ResourceSlice) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ResourceSliceUpdate(obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice))
}

// ConvertToTable prints upstream's columns.
func (ResourceSlice) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ResourceSlicePrinter().Convert(objs, now, include, false)
}

// Fields adds upstream's resource slice field labels.
func (ResourceSlice) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*resourcev1.ResourceSlice)
	set["spec.driver"], set["spec.nodeName"] = o.Spec.Driver, ptr.Deref(o.Spec.NodeName, "")
}

// ConvertFieldLabel is upstream's field label conversion of resource.k8s.io/v1 ResourceSlices.
func (ResourceSlice) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "spec.nodeName", "spec.driver", "spec.pool.name":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported for %s: %s", resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"), label)
}
