package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/policy"
	"github.com/quotad/quotad/internal/registry"
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
	}, cat.Default)
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
// controller: one warning for each expression that does not type check against the
// published schemas of the kinds the policy selects.
func typeCheckPolicies(ctx context.Context, store *registry.Store, v *policy.Validating, docs *openAPIDocs, log *slog.Logger) {
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
			var gvks []schema.GroupVersionKind
			for _, gvr := range policy.KindsToCheck(c) {
				if r := store.Catalogue().Get(gvr); r != nil {
					gvks = append(gvks, r.GVK())
				}
			}
			kinds, err := kindSchemas(docs, gvks)
			if err != nil {
				return nil, err
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

// kindSchemas returns the published OpenAPI v2 schema of each kind (nil for a kind without
// one), with the document's definitions.
func kindSchemas(docs *openAPIDocs, gvks []schema.GroupVersionKind) ([]policy.KindSchema, error) {
	if len(gvks) == 0 {
		return nil, nil
	}
	v2, err := docs.currentV2()
	if err != nil {
		return nil, err
	}
	var doc struct {
		Definitions map[string]*spec.Schema `json:"definitions"`
	}
	if err := json.Unmarshal(v2.JSON, &doc); err != nil {
		return nil, err
	}
	byGVK := map[schema.GroupVersionKind]*spec.Schema{}
	for _, d := range doc.Definitions {
		var tags []schema.GroupVersionKind
		if raw, ok := d.Extensions["x-kubernetes-group-version-kind"]; ok {
			if b, err := json.Marshal(raw); err == nil {
				_ = json.Unmarshal(b, &tags)
			}
		}
		for _, t := range tags {
			byGVK[t] = d
		}
	}
	out := make([]policy.KindSchema, 0, len(gvks))
	for _, gvk := range gvks {
		out = append(out, policy.KindSchema{GVK: gvk, Schema: byGVK[gvk], Definitions: doc.Definitions})
	}
	return out, nil
}
