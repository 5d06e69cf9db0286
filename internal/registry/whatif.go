package registry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/storage"
)

// What-if reads for QuotaReview and the workload warnings: nothing here writes.

// ReviewQuotas returns the quotas a write in namespace ns is checked against, read at one
// revision and as admission judges them: the namespace's ResourceQuotas in name order
// (a quota whose status.hard a /status write set apart is judged on spec.hard), then the
// views of the cluster quotas selecting the namespace in name order, each carrying its
// cluster quota's annotations. The objects are copies the caller may keep.
func (s *Store) ReviewQuotas(ctx context.Context, ns string) ([]fit.Quota, error) {
	// 1. One revision for everything read.
	rev, err := s.cfg.Storage.Revision(ctx)
	if err != nil {
		return nil, internalError(err)
	}
	// 2. The namespace's ResourceQuotas (keys list in name order).
	qres := s.cfg.Catalogue.Get(quotaGVR)
	lr, err := s.cfg.Storage.List(ctx, qres.KeyPrefix(ns), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, internalError(err)
	}
	var rqs []corev1.ResourceQuota
	for _, kv := range lr.KVs {
		obj, err := decodeKV(qres, kv)
		if err != nil {
			return nil, internalError(err)
		}
		rqs = append(rqs, *obj.(*corev1.ResourceQuota))
	}
	out := make([]fit.Quota, 0, len(rqs))
	for _, q := range commit.DecisionQuotas(rqs) {
		out = append(out, fit.Quota{Quota: q})
	}
	// 3. The cluster quotas selecting it, as their views.
	n, err := s.commits.NamespaceAt(ctx, ns, rev)
	if err != nil {
		return nil, internalError(err)
	}
	if n == nil {
		return out, nil
	}
	cres := s.cfg.Catalogue.Get(crqGVR)
	if cres == nil {
		return out, nil
	}
	cl, err := s.cfg.Storage.List(ctx, cres.KeyPrefix(""), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, internalError(err)
	}
	for _, kv := range cl.KVs {
		obj, err := decodeKV(cres, kv)
		if err != nil {
			return nil, internalError(err)
		}
		c := obj.(*clusterquota.ClusterResourceQuota)
		if !clusterquota.Selects(c.Spec.Selector, n.Labels, n.Annotations) {
			continue
		}
		v := clusterquota.View(c, ns)
		v.Annotations = c.Annotations
		out = append(out, fit.Quota{Quota: v, Cluster: true})
	}
	return out, nil
}

// WhatIf prepares obj (of res, in namespace ns) as a dry-run write of it would be
// prepared before quota: a create, or an update when an object of its name is stored
// (then returned as old). The kind's defaults and the mutating admission plugins are
// applied (LimitRanger's defaults among them), as the requesting user of ctx; with
// validate, the kind's validation too (upstream's 422). obj is changed in place.
//
// Without validate (a workload's template pod, which no client sent) an error of mutating
// admission is ignored: the pod keeps what the plugins before it applied.
func (s *Store) WhatIf(ctx context.Context, res *Resource, ns string, obj runtime.Object, validate bool) (newObj, old runtime.Object, err error) {
	m := objectMeta(obj)
	if res.Namespaced {
		m.SetNamespace(ns)
	}
	// 1. The stored object, when there is one: the write is then an update.
	if name := m.GetName(); name != "" {
		cur, err := s.Get(ctx, res, ns, name)
		switch {
		case err == nil:
			old = cur
		case !apierrors.IsNotFound(err):
			return nil, nil, err
		}
	}
	// 2. Defaults, then mutating admission (a dry run: nothing is stored or charged).
	s.defaultObject(res, obj)
	op := admission.Create
	if old != nil {
		op = admission.Update
		m.SetResourceVersion(objectMeta(old).GetResourceVersion())
		m.SetUID(objectMeta(old).GetUID())
		m.SetCreationTimestamp(objectMeta(old).GetCreationTimestamp())
		m.SetGeneration(objectMeta(old).GetGeneration())
	} else {
		m.SetResourceVersion("")
	}
	attrs := &admission.Attributes{
		Operation: op, Resource: res.GVR, Kind: res.GVK(), Namespace: ns, Name: m.GetName(),
		Object: obj, OldObject: old, DryRun: true, User: requestUser(ctx),
	}
	if s.cfg.Admission != nil {
		if err := s.cfg.Admission.Admit(ctx, attrs); err != nil && validate {
			return nil, nil, err
		}
	}
	// 3. Validation, as the write's.
	if validate {
		name := m.GetName()
		if name == "" && m.GetGenerateName() == "" {
			return nil, nil, invalid(res, name, field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
		}
		check := obj
		if name == "" { // the name the create would generate
			check = obj.DeepCopyObject()
			objectMeta(check).SetName(m.GetGenerateName() + "x")
		}
		if errs := s.validate(res, check, old); len(errs) > 0 {
			return nil, nil, invalid(res, name, errs)
		}
	}
	return obj, old, nil
}
