package registry

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Selector is a parsed label and field selector. One made by NewSelector is compiled:
// matching an object costs about as much as the object's labels and fields, whatever the
// selector's size (see selector.go); one made as a literal matches as apimachinery's
// selectors do, requirement by requirement.
type Selector struct {
	Label labels.Selector
	Field fields.Selector

	labels *labelMatcher
	fields *fieldMatcher
}

// Matches reports whether obj, of resource res, satisfies both selectors (nil selectors
// match everything).
func (s Selector) Matches(res *Resource, obj runtime.Object) bool {
	if s.Label != nil && !s.Label.Empty() {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		if s.labels != nil {
			if !s.labels.matches(m.GetLabels()) {
				return false
			}
		} else if !s.Label.Matches(labels.Set(m.GetLabels())) {
			return false
		}
	}
	if s.Field != nil && !s.Field.Empty() {
		if s.fields != nil {
			if !s.fields.matches(res.Fields(obj)) {
				return false
			}
		} else if !s.Field.Matches(res.Fields(obj)) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool {
	return (s.Label == nil || s.Label.Empty()) && (s.Field == nil || s.Field.Empty())
}
