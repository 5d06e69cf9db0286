package quotafit

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/fit"
)

// Source reads what a review needs besides the object.
type Source interface {
	// Quotas returns the quotas a write in namespace ns is checked against, as admission
	// judges them (fit.Input.Quotas).
	Quotas(ctx context.Context, ns string) ([]fit.Quota, error)
	// Pod returns pod as its controller's create in ns would store it before quota:
	// defaults and mutating admission applied (LimitRanger's defaults among them).
	Pod(ctx context.Context, ns string, pod *corev1.Pod) (*corev1.Pod, error)
}

// Plugin answers reviews and warns about workloads.
type Plugin struct {
	// Registry is the quota evaluators; Limited the ResourceQuota admission
	// configuration's limitedResources: admission's own.
	Registry quota.Registry
	Limited  []quota.LimitedResource
	Source   Source
}

var podsGR = schema.GroupResource{Resource: "pods"}

// Review answers a write of obj (defaults and mutating admission applied) of resource gr
// in namespace ns: a create, or an update of old when old is not nil. replicas, when set,
// replaces the object's own replica count.
func (p *Plugin) Review(ctx context.Context, ns string, gr schema.GroupResource, obj, old runtime.Object, replicas *int32) (fit.Result, error) {
	// 1. The quotas.
	quotas, err := p.Source.Quotas(ctx, ns)
	if err != nil {
		return fit.Result{}, err
	}
	in := fit.Input{Quotas: quotas, Registry: p.Registry, Limited: p.Limited, Resource: gr, Object: obj, OldObject: old}
	if m, err := meta.Accessor(obj); err == nil {
		in.Name = m.GetName()
	}
	// 2. The pods the object makes and how many it adds.
	if pod, ok := obj.(*corev1.Pod); ok && gr == podsGR {
		in.Pod = pod
		in.Replicas = fit.Added(obj, old, replicas)
	} else if t, _, ok := fit.PodsOf(obj); ok {
		in.Replicas = fit.Added(obj, old, replicas)
		if len(quotas) == 0 && len(p.Limited) == 0 {
			return fit.Review(in), nil // nothing can refuse a pod: no need to build one
		}
		prefix := in.Name
		if prefix == "" {
			prefix = "pod"
		}
		if in.Pod, err = p.Source.Pod(ctx, ns, fit.TemplatePod(t, ns, prefix+"-")); err != nil {
			return fit.Result{}, err
		}
		in.Claims = fit.TemplateClaims(obj, ns)
	}
	// 3. The answer.
	return fit.Review(in), nil
}

// Validate warns the client of a create or update of a workload whose added replicas
// cannot all fit its namespace's quotas (the replica warnings of fit.Review). It never
// refuses: an error reading the quotas only means no warning.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	// 1. Only writes of workloads that add replicas, for a client that reads warnings.
	if a.Subresource != "" || a.Namespace == "" || !fit.Workload(a.Object) {
		return nil
	}
	if a.Operation != admission.Create && a.Operation != admission.Update {
		return nil
	}
	if !admission.WarningsWanted(ctx) || fit.Added(a.Object, a.OldObject, nil) == 0 {
		return nil
	}
	// 2. The review of the write, its replica warnings given.
	r, err := p.Review(ctx, a.Namespace, a.Resource.GroupResource(), a.Object, a.OldObject, nil)
	if err != nil || !r.Status.Allowed {
		return nil // no warning beside the quota's own refusal
	}
	for _, w := range r.ReplicaWarnings {
		admission.Warn(ctx, w)
	}
	return nil
}
