package codec

import (
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is what the codec knows of a resource: *registry.Resource is one.
type Kind interface {
	// GVK is the group, version and kind objects are decoded and encoded as.
	GVK() schema.GroupVersionKind
	// GroupResource names the resource in errors.
	GroupResource() schema.GroupResource
	// New returns an empty object: a typed one, or an Unstructured for a custom resource.
	New() runtime.Object
	// GoType is the struct type New's object points to; nil for custom resources.
	GoType() reflect.Type
	// CustomSchema returns a custom resource version's structural schema (nil for built-in
	// kinds and versions without one) and whether its definition preserves unknown fields.
	CustomSchema() (*apiextensionsv1.JSONSchemaProps, bool)
}
