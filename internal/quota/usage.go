package quota

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrResourceNotServed is returned (possibly wrapped) by a CalculateUsage list function
// for a group-resource the server does not serve, e.g. count/foos.example.com before
// its CustomResourceDefinition exists. Names tracked only through such a resource are
// left out of the result, as upstream leaves names without an evaluator untracked.
var ErrResourceNotServed = errors.New("resource is not served")

// ListFunc lists every object of one group-resource in the quota's namespace.
type ListFunc func(gr schema.GroupResource) ([]runtime.Object, error)

// GroupResourcesToList returns, sorted, the group-resources whose objects must be listed
// to compute the usage of rq (the ones tracking a name of rq.status.hard, including
// count/<resource>[.<group>] names).
func GroupResourcesToList(rq *corev1.ResourceQuota, reg Registry) []schema.GroupResource {
	return reg.GroupResourcesFor(ResourceNames(rq.Status.Hard))
}

// CalculateUsage recomputes rq's usage from the objects of its namespace: for every name
// of rq.status.hard that an evaluator tracks, the summed usage of the objects matching
// all of rq's scopes (zero when none exist). Names no evaluator tracks (unknown qualified
// names) are absent. Callers creating or editing a quota set status.hard = spec.hard
// first; the list must include the quota itself when it is being created (it counts
// toward resourcequotas). Objects whose scope matching fails are not counted, as
// CheckRequest never charges them.
func CalculateUsage(rq *corev1.ResourceQuota, reg Registry, list ListFunc) (corev1.ResourceList, error) {
	hard := ResourceNames(rq.Status.Hard)
	selectors := ScopeSelectors(rq)
	result := corev1.ResourceList{}
	for _, gr := range reg.GroupResourcesFor(hard) {
		// 1. The names this evaluator tracks start at zero.
		ev := reg.Get(gr)
		if ev == nil {
			continue
		}
		matched := ev.MatchingResources(hard)
		if len(matched) == 0 {
			continue
		}
		objs, err := list(gr)
		if errors.Is(err, ErrResourceNotServed) {
			continue
		}
		if err != nil {
			return nil, err
		}
		usage := corev1.ResourceList{}
		for _, name := range matched {
			usage[name] = resource.Quantity{Format: resource.DecimalSI}
		}
		// 2. Sum the usage of every object in scope.
		for _, obj := range objs {
			ok, err := matchesAllScopes(ev, selectors, obj)
			if err != nil || !ok {
				continue
			}
			u, err := ev.Usage(obj)
			if err != nil {
				return nil, err
			}
			usage = Add(usage, Mask(u, matched))
		}
		// 3. Evaluators track disjoint names, so merging is a union.
		result = Add(result, usage)
	}
	return result, nil
}
