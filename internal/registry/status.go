package registry

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// setStatusFrom copies src's status into dst (src nil: zero status).
func setStatusFrom(dst, src runtime.Object) { copyField(dst, src, "Status", "status") }

// setSpecFrom copies everything but metadata and status from src into dst.
func setSpecFrom(dst, src runtime.Object) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		su := src.(*unstructured.Unstructured)
		for k := range du.Object {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				delete(du.Object, k)
			}
		}
		for k, v := range su.Object {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				du.Object[k] = runtime.DeepCopyJSONValue(v)
			}
		}
		return
	}
	dv := reflect.ValueOf(dst).Elem()
	sv := reflect.ValueOf(src).Elem()
	t := dv.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		dv.Field(i).Set(deepCopyValue(sv.Field(i)))
	}
}

func copyField(dst, src runtime.Object, goName, jsonName string) {
	if du, ok := dst.(*unstructured.Unstructured); ok {
		if src == nil {
			delete(du.Object, jsonName)
			return
		}
		su := src.(*unstructured.Unstructured)
		if v, ok := su.Object[jsonName]; ok {
			du.Object[jsonName] = runtime.DeepCopyJSONValue(v)
		} else {
			delete(du.Object, jsonName)
		}
		return
	}
	f := reflect.ValueOf(dst).Elem().FieldByName(goName)
	if !f.IsValid() {
		return
	}
	if src == nil {
		f.Set(reflect.Zero(f.Type()))
		return
	}
	f.Set(deepCopyValue(reflect.ValueOf(src).Elem().FieldByName(goName)))
}

// deepCopyValue deep-copies a struct field value through its DeepCopy method when it has one.
func deepCopyValue(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		if m := v.Addr().MethodByName("DeepCopy"); m.IsValid() {
			out := m.Call(nil)[0]
			if out.Kind() == reflect.Ptr && !out.IsNil() {
				return out.Elem()
			}
		}
	}
	if m := v.MethodByName("DeepCopy"); m.IsValid() && (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) {
		return m.Call(nil)[0]
	}
	return v
}
