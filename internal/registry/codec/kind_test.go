package codec

import (
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtin is a built-in kind as registry.Resource describes it to the codec: its objects'
// struct type, no custom schema.
type builtin struct {
	gvr  schema.GroupVersionResource
	kind string
	typ  reflect.Type
}

// builtinKind describes the built-in kind of obj (a struct value) served as gvr.
func builtinKind(gvr schema.GroupVersionResource, kind string, obj interface{}) builtin {
	return builtin{gvr: gvr, kind: kind, typ: reflect.TypeOf(obj)}
}

func (b builtin) GVK() schema.GroupVersionKind        { return b.gvr.GroupVersion().WithKind(b.kind) }
func (b builtin) GroupResource() schema.GroupResource { return b.gvr.GroupResource() }
func (b builtin) New() runtime.Object                 { return reflect.New(b.typ).Interface().(runtime.Object) }
func (b builtin) GoType() reflect.Type                { return b.typ }
func (b builtin) CustomSchema() (*apiextensionsv1.JSONSchemaProps, bool) {
	return nil, false
}
