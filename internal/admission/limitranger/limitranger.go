package limitranger

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

// Annotation is the pod annotation naming the defaults the plugin set.
const Annotation = "kubernetes.io/limit-ranger"

var (
	podResource   = schema.GroupResource{Resource: "pods"}
	pvcResource   = schema.GroupResource{Resource: "persistentvolumeclaims"}
	limitRangeGVR = corev1.SchemeGroupVersion.WithResource("limitranges")
)

// Plugin is the LimitRanger admission plugin.
type Plugin struct {
	r admission.Reader
}

var (
	_ admission.Handler   = (*Plugin)(nil)
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading LimitRanges through r.
func New(r admission.Reader) *Plugin {
	return &Plugin{r: r}
}

// Name returns "LimitRanger".
func (p *Plugin) Name() string { return admission.LimitRanger }

// Handles reports true for CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit applies every LimitRange's Container defaults to a pod's containers.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *corev1.LimitRange) error {
		if pod, ok := a.Object.(*corev1.Pod); ok {
			applyDefaults(lr, pod)
		}
		return nil
	})
}

// Validate checks a pod or PVC against every LimitRange of its namespace.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *corev1.LimitRange) error {
		switch obj := a.Object.(type) {
		case *corev1.Pod:
			return validatePod(lr, obj)
		case *corev1.PersistentVolumeClaim:
			return validatePVC(lr, obj)
		}
		return nil
	})
}

// run applies fn to each LimitRange of the request's namespace, when the request is one
// the plugin looks at, and turns fn's error into a 403.
func (p *Plugin) run(ctx context.Context, a *admission.Attributes, fn func(*corev1.LimitRange) error) error {
	// 1. Only pods and PVCs, and of pods only creates and resizes.
	if !supports(a) {
		return nil
	}
	switch a.Object.(type) {
	case *corev1.Pod, *corev1.PersistentVolumeClaim:
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("resource %s: unexpected object type %T", a.Resource.Resource, a.Object))
	}
	// 2. An object being deleted is left alone.
	if a.OldObject != nil {
		old, err := meta.Accessor(a.OldObject)
		if err != nil {
			return admission.NewForbidden(a, err)
		}
		if old.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	// 3. Apply every LimitRange in the namespace.
	objs, err := p.r.List(ctx, limitRangeGVR, a.Namespace)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	for _, obj := range objs {
		lr, ok := obj.(*corev1.LimitRange)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("limitranges: unexpected object type %T", obj))
		}
		if err := fn(lr); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// supports reports whether the plugin looks at a request at all.
func supports(a *admission.Attributes) bool {
	gr := a.Resource.GroupResource()
	switch {
	case a.Subresource == "resize":
		return gr == podResource && a.Operation == admission.Update
	case a.Subresource != "":
		return false
	case gr == podResource:
		// Containers cannot be added or removed and their resources change only through
		// resize, so a plain pod update has nothing to check.
		return a.Operation == admission.Create
	default:
		return gr == pvcResource
	}
}
