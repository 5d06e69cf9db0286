package evaluator

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
)

// Registry maps group-resources to evaluators: the special evaluators for pods, services,
// persistentvolumeclaims and resource.k8s.io resourceclaims, nil for the ignored resources, and an object-count
// evaluator, created on first use, for every other resource. It is safe for concurrent
// use. Callers ask only about namespaced resources.
type Registry struct {
	pods     Pods
	services Services
	pvcs     PersistentVolumeClaims
	claims   ResourceClaims

	mu     sync.Mutex
	counts map[schema.GroupResource]*ObjectCount
}

var _ quota.Registry = (*Registry)(nil)

// NewRegistry returns an empty registry whose claim evaluator knows no device class.
func NewRegistry() *Registry {
	return &Registry{counts: map[schema.GroupResource]*ObjectCount{}}
}

// NewRegistryWithDeviceClasses returns an empty registry whose claim evaluator reads
// classes for the DRA extended resources they back.
func NewRegistryWithDeviceClasses(classes DeviceClasses) *Registry {
	r := NewRegistry()
	r.claims = ResourceClaims{Classes: classes}
	return r
}

// Ignored reports whether gr is never quota'd: core bindings, componentstatuses and
// events, events.events.k8s.io, and the authentication/authorization review resources.
func Ignored(gr schema.GroupResource) bool {
	switch gr.Group {
	case "":
		return gr.Resource == "bindings" || gr.Resource == "componentstatuses" || gr.Resource == "events"
	case "events.k8s.io":
		return gr.Resource == "events"
	case "authentication.k8s.io":
		return gr.Resource == "tokenreviews" || gr.Resource == "selfsubjectreviews"
	case "authorization.k8s.io":
		switch gr.Resource {
		case "subjectaccessreviews", "selfsubjectaccessreviews", "localsubjectaccessreviews", "selfsubjectrulesreviews":
			return true
		}
	}
	return false
}

// Get returns the evaluator for gr, or nil when gr is ignored.
func (r *Registry) Get(gr schema.GroupResource) quota.Evaluator {
	if gr.Resource == "" || Ignored(gr) {
		return nil
	}
	if gr.Group == "" {
		switch gr.Resource {
		case "pods":
			return r.pods
		case "services":
			return r.services
		case "persistentvolumeclaims":
			return r.pvcs
		}
	}
	if gr == resourceClaimsGR {
		return r.claims
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, ok := r.counts[gr]
	if !ok {
		ev = NewObjectCount(gr)
		r.counts[gr] = ev
	}
	return ev
}

// GroupResourcesFor returns, sorted, the group-resources whose evaluators track a name of
// names: pods, services, persistentvolumeclaims and resourceclaims for their names (both
// pods and resourceclaims for DRA extended resources), configmaps, secrets,
// replicationcontrollers and resourcequotas for their legacy names, and the resource of
// every count/<resource>[.<group>] name that is not ignored.
func (r *Registry) GroupResourcesFor(names []corev1.ResourceName) []schema.GroupResource {
	seen := map[schema.GroupResource]bool{}
	for _, name := range names {
		one := []corev1.ResourceName{name}
		// requests.<extended resource> names backed by a device class are tracked by both
		// pods and claims, and their usage is the sum of both.
		pods, claims := len(r.pods.MatchingResources(one)) > 0, len(r.claims.MatchingResources(one)) > 0
		if pods {
			seen[schema.GroupResource{Resource: "pods"}] = true
		}
		if claims {
			seen[resourceClaimsGR] = true
		}
		var gr schema.GroupResource
		switch {
		case pods || claims:
			continue
		case len(r.services.MatchingResources(one)) > 0:
			gr = schema.GroupResource{Resource: "services"}
		case len(r.pvcs.MatchingResources(one)) > 0:
			gr = schema.GroupResource{Resource: "persistentvolumeclaims"}
		case legacyAlias(schema.GroupResource{Resource: string(name)}) != "":
			gr = schema.GroupResource{Resource: string(name)}
		default:
			parsed, ok := quota.ParseObjectCountName(name)
			if !ok || Ignored(parsed) {
				continue
			}
			gr = parsed
		}
		seen[gr] = true
	}
	out := make([]schema.GroupResource, 0, len(seen))
	for gr := range seen {
		out = append(out, gr)
	}
	slices.SortFunc(out, func(a, b schema.GroupResource) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Resource, b.Resource))
	})
	return out
}
