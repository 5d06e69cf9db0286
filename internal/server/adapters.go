package server

import (
	"time"

	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/quotaenforce"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// storeReader is the admission.Reader over the registry store.
type storeReader struct{ store *registry.Store }

func (r storeReader) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	res := r.store.Catalogue().Get(gvr)
	if res == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return r.store.Get(ctx, res, ns, name)
}

func (r storeReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	res := r.store.Catalogue().Get(gvr)
	if res == nil {
		return nil, nil
	}
	objs, _, err := r.store.ListObjects(ctx, res, ns)
	return objs, err
}

// lazyReader lets plugins be built before the store and its caches exist.
type lazyReader struct{ r **cachedReader }

func (r lazyReader) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	return (*r.r).Get(ctx, gvr, ns, name)
}

func (r lazyReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	return (*r.r).List(ctx, gvr, ns)
}

// quotaAccounting adapts the quota core to registry.Quota.
type quotaAccounting struct {
	plugin *quotaenforce.Plugin
	reg    quota.Registry
}

func (q quotaAccounting) Limits() bool { return q.plugin.Limits() }

func (q quotaAccounting) Prepare(a *admission.Attributes) (registry.QuotaDecision, error) {
	p, err := q.plugin.Prepare(a)
	if err != nil || p == nil {
		return nil, err
	}
	return p, nil
}

func (q quotaAccounting) Usage(rq *corev1.ResourceQuota, list func(schema.GroupResource) ([]runtime.Object, error)) (corev1.ResourceList, error) {
	return quota.CalculateUsage(rq, q.reg, list)
}

// hooks returns the registry hooks: upstream defaults and validation per kind. Custom
// resources are validated against the CRD version the catalogue serves their kind at.
func hooks(cat *registry.Catalogue) registry.Hooks {
	custom := validation.NewCustom()
	customResource := func(obj runtime.Object) (*unstructured.Unstructured, *registry.Resource) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u == nil {
			return nil, nil
		}
		res := cat.ForKind(u.GroupVersionKind())
		if res == nil || res.CRD == nil {
			return nil, nil
		}
		return u, res
	}
	return registry.Hooks{
		Default: func(obj runtime.Object) {
			if _, res := customResource(obj); res != nil {
				return // custom resources are pruned when decoded (registry.DecodeBody)
			}
			defaults.Apply(obj)
		},
		PrepareForCreate: func(obj runtime.Object) {
			switch o := obj.(type) {
			case *batchv1.Job:
				defaults.JobSelector(o)
			case *corev1.Service:
				defaults.NormalizeServiceClusterIPs(o, nil)
			case *appsv1.DaemonSet:
				defaults.DaemonSetTemplateGeneration(o, nil)
			}
		},
		PrepareForUpdate: func(newObj, oldObj runtime.Object) {
			if svc, ok := newObj.(*corev1.Service); ok {
				defaults.NormalizeServiceClusterIPs(svc, oldObj.(*corev1.Service))
			}
			if ds, ok := newObj.(*appsv1.DaemonSet); ok {
				if old, ok := oldObj.(*appsv1.DaemonSet); ok {
					defaults.DaemonSetTemplateGeneration(ds, old)
				}
			}
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			if rq, ok := obj.(*corev1.ResourceQuota); ok {
				return quota.ValidateResourceQuota(rq)
			}
			if crq, ok := obj.(*clusterquota.ClusterResourceQuota); ok {
				return clusterquota.Validate(crq)
			}
			if u, res := customResource(obj); res != nil {
				return custom.Validate(res.CRD, res.GVR.Version, u)
			}
			return validation.Validate(obj)
		},
		ValidateSubresource: validation.ValidateSubresourceUpdate,
		ValidateUpdate: func(newObj, oldObj runtime.Object) field.ErrorList {
			if rq, ok := newObj.(*corev1.ResourceQuota); ok {
				return quota.ValidateResourceQuotaUpdate(rq, oldObj.(*corev1.ResourceQuota))
			}
			if crq, ok := newObj.(*clusterquota.ClusterResourceQuota); ok {
				if old, ok := oldObj.(*clusterquota.ClusterResourceQuota); ok {
					return clusterquota.ValidateUpdate(crq, old)
				}
			}
			if u, res := customResource(newObj); res != nil {
				old, _ := oldObj.(*unstructured.Unstructured)
				// The hook is not told the subresource. A main-resource write keeps the stored
				// status when the version has a status subresource, so a changed status means
				// a write through /status.
				if res.Status && old != nil && !equality.Semantic.DeepEqual(u.Object["status"], old.Object["status"]) {
					return custom.ValidateStatusUpdate(res.CRD, res.GVR.Version, u, old)
				}
				return custom.ValidateUpdate(res.CRD, res.GVR.Version, u, old)
			}
			return validation.ValidateUpdate(newObj, oldObj)
		},
		Warnings: func(obj runtime.Object) []string {
			if rq, ok := obj.(*corev1.ResourceQuota); ok {
				return append(quota.ResourceQuotaWarnings(rq), quota.WarnAtWarnings(rq.Annotations, rq.Spec.Hard)...)
			}
			if crq, ok := obj.(*clusterquota.ClusterResourceQuota); ok {
				return quota.WarnAtWarnings(crq.Annotations, crq.Spec.Quota.Hard)
			}
			if ing, ok := obj.(*networkingv1.Ingress); ok {
				return validation.IngressWarnings(ing)
			}
			return nil
		},
	}
}

// tableConverter renders Tables for built-in kinds and custom resources.
func tableConverter(res *registry.Resource, objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	if res.CRD != nil {
		us := make([]*unstructured.Unstructured, 0, len(objs))
		for _, o := range objs {
			us = append(us, o.(*unstructured.Unstructured))
		}
		var cols []apiextensionsv1.CustomResourceColumnDefinition
		if v := res.CRDVersion(); v != nil {
			cols = v.AdditionalPrinterColumns
		}
		if len(cols) == 0 {
			cols = table.DefaultCustomColumns()
		}
		return table.ConvertCustom(us, cols, now, include, false)
	}
	return table.ConvertKind(res.GVK().GroupKind(), objs, now, include, false)
}
