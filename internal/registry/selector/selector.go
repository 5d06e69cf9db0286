package selector

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Selector is a parsed label and field selector. One made by New is compiled:
// matching an object costs about as much as the object's labels and fields, whatever the
// selector's size (see compile.go); one made as a literal matches as apimachinery's
// selectors do, requirement by requirement.
type Selector struct {
	Label labels.Selector
	Field fields.Selector

	labels *labelMatcher
	fields *fieldMatcher
}

// Fielder gives an object's field labels: a field selector matches the set it returns.
// registry.Resource is one (its Strategy's FieldLabeler, or metadata.name and
// metadata.namespace).
type Fielder interface {
	Fields(obj runtime.Object) fields.Set
}

// Matches reports whether obj, whose field labels res gives, satisfies both selectors
// (nil selectors match everything).
func (s Selector) Matches(res Fielder, obj runtime.Object) bool {
	if s.Label != nil && !s.Label.Empty() {
		m, err := meta.Accessor(obj)
		if err != nil || !s.MatchesLabels(m.GetLabels()) {
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

// MatchesLabels reports whether an object with these labels satisfies the label selector
// (a nil one matches everything); the field selector is not evaluated.
func (s Selector) MatchesLabels(set map[string]string) bool {
	if s.Label == nil || s.Label.Empty() {
		return true
	}
	if s.labels != nil {
		return s.labels.matches(set)
	}
	return s.Label.Matches(labels.Set(set))
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool {
	return (s.Label == nil || s.Label.Empty()) && (s.Field == nil || s.Field.Empty())
}
