package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

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

// typeCheckPolicies keeps status.typeChecking (and status.observedGeneration) of every
// ValidatingAdmissionPolicy describing its generation, as upstream's type-checking
// controller: one warning for each expression that does not compile.
func typeCheckPolicies(ctx context.Context, store *registry.Store, v *policy.Validating, log *slog.Logger) {
	res := store.Catalogue().Get(admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"))
	check := func(obj runtime.Object) {
		vap, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if !ok || (vap.Status.TypeChecking != nil && vap.Status.ObservedGeneration == vap.Generation) || vap.DeletionTimestamp != nil {
			return
		}
		_, err := store.Update(ctx, res, "", vap.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
			c, ok := cur.(*admissionregistrationv1.ValidatingAdmissionPolicy)
			if !ok {
				return nil, fmt.Errorf("unexpected object %T", cur)
			}
			c = c.DeepCopy()
			var kinds []schema.GroupVersionKind
			for _, gvr := range policy.KindsToCheck(c) {
				if r := store.Catalogue().Get(gvr); r != nil {
					kinds = append(kinds, r.GVK())
				}
			}
			c.Status.ObservedGeneration = c.Generation
			c.Status.TypeChecking = v.TypeCheck(c, kinds)
			return c, nil
		}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			log.Warn("admission policy type checking: writing status", "policy", vap.Name, "err", err)
		}
	}
	listWatch(ctx, store, res, log, "admission policy type checking",
		func(objs []runtime.Object, _ int64) {
			for _, o := range objs {
				check(o)
			}
		},
		func(obj runtime.Object, deleted bool) {
			if !deleted {
				check(obj)
			}
		}, nil)
}
