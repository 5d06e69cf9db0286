package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Evaluator knows how objects of one group-resource consume quota.
// Implementations live in internal/quota/evaluator, one file per kind.
type Evaluator interface {
	// Handles reports whether writes to subresource ("" for the object itself) carry an
	// object of the evaluator's kind whose usage may change. Requests it does not handle
	// are admitted without touching any quota.
	Handles(subresource string) bool
	// MatchingResources returns the names among input that this evaluator tracks.
	MatchingResources(input []corev1.ResourceName) []corev1.ResourceName
	// Usage returns what one object consumes. It is a pure function of the object: no
	// clock, no lookups, so recomputation from storage reproduces what admission charged.
	Usage(obj runtime.Object) (corev1.ResourceList, error)
}

// ScopeMatcher is implemented by evaluators whose objects can match quota scopes (pods,
// and PVCs for VolumeAttributesClass). An evaluator without it matches no scope at all, so
// a quota with any scope or scope selector never matches its objects.
type ScopeMatcher interface {
	// MatchesScope reports whether obj satisfies one scope selector requirement.
	MatchesScope(selector corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
}

// Constrainer is implemented by evaluators that refuse objects missing required values
// (pods: the legacy "must specify" rule).
type Constrainer interface {
	// Constraints returns an error when obj does not specify something a quota limiting
	// the names in required needs.
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
}

// Registry finds the evaluator for a group-resource.
type Registry interface {
	// Get returns the evaluator for gr, or nil when gr is never quota'd.
	Get(gr schema.GroupResource) Evaluator
	// GroupResourcesFor returns, sorted, the group-resources whose evaluators track at
	// least one of names: what must be listed to compute usage for those names.
	GroupResourcesFor(names []corev1.ResourceName) []schema.GroupResource
}

// MatchingScopes returns the selectors obj matches. Evaluators without ScopeMatcher match
// none. An error names the selector: "error on matching scope <selector>: <err>".
func MatchingScopes(ev Evaluator, obj runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	sm, ok := ev.(ScopeMatcher)
	if !ok {
		return nil, nil
	}
	var matched []corev1.ScopedResourceSelectorRequirement
	for _, sel := range selectors {
		ok, err := sm.MatchesScope(sel, obj)
		if err != nil {
			return nil, fmt.Errorf("error on matching scope %v: %v", sel, err)
		}
		if ok {
			matched = append(matched, sel)
		}
	}
	return matched, nil
}

// Matches reports whether quota rq applies to obj: the evaluator tracks at least one name
// of rq's status.hard, and obj matches every scope selector of rq.
func Matches(rq *corev1.ResourceQuota, ev Evaluator, obj runtime.Object) (bool, error) {
	if len(ev.MatchingResources(ResourceNames(rq.Status.Hard))) == 0 {
		return false, nil
	}
	return matchesAllScopes(ev, ScopeSelectors(rq), obj)
}

// matchesAllScopes reports whether obj matches every selector (true for none).
func matchesAllScopes(ev Evaluator, selectors []corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	if len(selectors) == 0 {
		return true, nil
	}
	sm, ok := ev.(ScopeMatcher)
	if !ok {
		return false, nil
	}
	// Every selector is evaluated, as upstream does, so a selector that cannot be evaluated
	// is reported even after one that does not match.
	all := true
	for _, sel := range selectors {
		ok, err := sm.MatchesScope(sel, obj)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}
