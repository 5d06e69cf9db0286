package codec

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// defaultCustom applies the defaults of a custom resource's structural schema, as
// kube-apiserver applies them to requests and to objects read from storage: a property
// with a default that is absent, or null and not nullable, gets a copy of the default; then
// every present value is defaulted by its own schema (so a defaulted object gets its nested
// defaults too). A version without a schema (s nil) defaults nothing.
func defaultCustom(s *apiextensionsv1.JSONSchemaProps, u *unstructured.Unstructured) {
	if s == nil {
		return
	}
	defaultValue(u.Object, s)
}

func defaultValue(x interface{}, s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]interface{}:
		for k := range s.Properties {
			prop := s.Properties[k]
			if prop.Default == nil || len(prop.Default.Raw) == 0 {
				continue
			}
			if cur, found := x[k]; found && (cur != nil || prop.Nullable) {
				continue
			}
			var d interface{}
			if err := kjson.UnmarshalCaseSensitivePreserveInts(prop.Default.Raw, &d); err != nil {
				continue // CRD validation refuses such defaults; never fail a read on one
			}
			x[k] = d
		}
		for k, v := range x {
			if prop, found := s.Properties[k]; found {
				defaultValue(v, &prop)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				defaultValue(v, s.AdditionalProperties.Schema)
			}
		}
	case []interface{}:
		if s.Items == nil || s.Items.Schema == nil {
			return
		}
		for _, v := range x {
			defaultValue(v, s.Items.Schema)
		}
	}
}

// DefaultCustom defaults a custom resource of res decoded from storage (objects stored
// before a default was added get it on read), as Decode defaults the ones of requests.
// Objects of built-in kinds are left as they are.
func DefaultCustom(res Kind, obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s, _ := res.CustomSchema()
		defaultCustom(s, u)
	}
}
