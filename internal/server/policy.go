package server

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/policy"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/defaults"
)

// newPolicyPlugins builds the ValidatingAdmissionPolicy and MutatingAdmissionPolicy
// plugins. Mutations merge apply configurations by the served schemas of *fms (set once
// the OpenAPI documents exist) and are defaulted as the registry defaults.
func newPolicyPlugins(reader admission.Reader, cat *registry.Catalogue, fms **fieldManagers) (*policy.Validating, *policy.Mutating, error) {
	v, err := policy.NewValidating(reader, paramResources(cat))
	if err != nil {
		return nil, nil, err
	}
	m, err := policy.NewMutating(reader, paramResources(cat), func() (managedfields.TypeConverter, error) {
		if *fms == nil {
			return nil, errors.New("the served schemas are not ready")
		}
		return (*fms).TypeConverter()
	}, defaults.Apply)
	if err != nil {
		return nil, nil, err
	}
	return v, m, nil
}

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
