package controller

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// As returns obj as a T, or an error naming both types when it is something else: a
// controller handed an object of an unexpected kind (a custom resource's unstructured
// object where a typed one was expected, say) fails that one key instead of panicking.
func As[T runtime.Object](obj runtime.Object) (T, error) {
	t, ok := obj.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("unexpected object %T, want %T", obj, zero)
	}
	return t, nil
}

// On adapts a handler of one object type to a Handler: objects of any other type are
// skipped, but a PodView is handed to a pod handler as the pod it holds.
func On[T runtime.Object](h func(obj T, deleted bool)) Handler {
	return func(obj runtime.Object, deleted bool) {
		if t, ok := obj.(T); ok {
			h(t, deleted)
			return
		}
		// An Index delivers the deletions a relist found as what it kept: a pod's view is
		// handed to a pod handler as the pod it holds.
		if v, ok := obj.(*PodView); ok {
			if t, ok := any(v.Pod()).(T); ok {
				h(t, deleted)
			}
		}
	}
}

// Meta returns the object metadata of any object, typed or unstructured.
func Meta(obj runtime.Object) (metav1.Object, error) {
	if obj == nil {
		return nil, errors.New("no object")
	}
	return meta.Accessor(obj)
}

// objectName names an object for a log line ("namespace/name" or "name"), or its type.
func objectName(obj runtime.Object) string {
	m, err := Meta(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// expectedError marks a failure that is already reported where users look (an Event, a
// condition), such as a quota refusal: it is retried like any failure but logged at Debug.
type expectedError struct{ err error }

func (e *expectedError) Error() string { return e.err.Error() }
func (e *expectedError) Unwrap() error { return e.err }

// Expected marks err as an expected failure (nil stays nil).
func Expected(err error) error {
	if err == nil {
		return nil
	}
	return &expectedError{err: err}
}

// IsExpected reports whether err, or an error it wraps, was marked by Expected.
func IsExpected(err error) bool {
	var e *expectedError
	return errors.As(err, &e)
}
