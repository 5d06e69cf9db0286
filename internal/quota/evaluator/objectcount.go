package evaluator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
)

// ObjectCount is the generic evaluator: every object of its group-resource counts 1
// under count/<resource>[.<group>] and, for configmaps, secrets, replicationcontrollers
// and resourcequotas, also under the legacy bare name. It accepts any runtime.Object
// (typed or unstructured) and matches no scope.
type ObjectCount struct {
	names []corev1.ResourceName
}

// NewObjectCount returns the object-count evaluator for gr.
func NewObjectCount(gr schema.GroupResource) *ObjectCount {
	names := []corev1.ResourceName{quota.ObjectCountName(gr)}
	if alias := legacyAlias(gr); alias != "" {
		names = append(names, alias)
	}
	return &ObjectCount{names: names}
}

// legacyAlias returns the bare quota name that also counts objects of gr, or "".
func legacyAlias(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group != "" {
		return ""
	}
	switch name := corev1.ResourceName(gr.Resource); name {
	case corev1.ResourceConfigMaps, corev1.ResourceSecrets, corev1.ResourceReplicationControllers, corev1.ResourceQuotas:
		return name
	}
	return ""
}

// Handles accepts writes to the object itself; subresources never change a count.
func (*ObjectCount) Handles(subresource string) bool {
	return subresource == ""
}

// MatchingResources returns the evaluator's names among input.
func (e *ObjectCount) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, e.names)
}

// Usage returns 1 under each of the evaluator's names.
func (e *ObjectCount) Usage(runtime.Object) (corev1.ResourceList, error) {
	result := corev1.ResourceList{}
	for _, n := range e.names {
		result[n] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return result, nil
}
