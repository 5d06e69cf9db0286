package server

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/quotaenforce"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/kinds/apiextensions"
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

// customStrategy returns the strategy of a custom resource: validated against the CRD
// version the catalogue serves it at, with one validator (and its compiled schemas) for all.
func customStrategy() func(res *registry.Resource) registry.Strategy {
	custom := validation.NewCustom()
	return func(res *registry.Resource) registry.Strategy {
		return apiextensions.CustomResource{Validator: custom, CRD: res.CRD, Version: res.GVR.Version, Status: res.Status}
	}
}
