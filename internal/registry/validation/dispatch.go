package validation

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateGroupKinds runs the per-group dispatcher that knows obj's kind
// (kinds validated outside the main switches); false for other kinds. old is
// nil on create. Each dispatcher returns false for kinds it does not know.
func validateGroupKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	if old != nil && reflect.ValueOf(old).IsNil() {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate an update from %T to %T", old, obj))}, true
	}
	for _, f := range []func(obj, old runtime.Object) (field.ErrorList, bool){
		storageKinds, admissionKinds, flowcontrolKinds, certificatesKinds, apiregistrationKinds, storagemigrationKinds,
		resourceKinds, serviceCIDRKinds,
	} {
		if errs, ok := f(obj, old); ok {
			return errs, true
		}
	}
	return nil, false
}

// dispatch calls create(n) when old is nil, else update(n, old) when old is
// of n's type (an internal error otherwise).
func dispatch[T runtime.Object](n T, old runtime.Object, create func(T) field.ErrorList, update func(n, o T) field.ErrorList) (field.ErrorList, bool) {
	if old == nil {
		return create(n), true
	}
	o, ok := old.(T)
	if !ok {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate an update from %T to %T", old, n))}, true
	}
	return update(n, o), true
}
