package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission/policy"
	"github.com/quotad/quotad/internal/registry"
)

// paramResources maps an admission policy's paramKind to the resource serving it, from the
// catalogue (custom resources included).
func paramResources(cat *registry.Catalogue) policy.ResourceFor {
	return func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
		res := cat.ForKind(gvk)
		if res == nil {
			return schema.GroupVersionResource{}, false, false
		}
		return res.GVR, res.Namespaced, true
	}
}
