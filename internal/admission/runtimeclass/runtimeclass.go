package runtimeclass

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

var (
	podResource     = schema.GroupResource{Resource: "pods"}
	runtimeClassGVR = nodev1.SchemeGroupVersion.WithResource("runtimeclasses")
)

// Plugin is the RuntimeClass admission plugin.
type Plugin struct {
	r admission.Reader
}

var (
	_ admission.Handler   = (*Plugin)(nil)
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading RuntimeClasses through r.
func New(r admission.Reader) *Plugin { return &Plugin{r: r} }

// Name returns "RuntimeClass".
func (p *Plugin) Name() string { return admission.RuntimeClass }

// Handles reports true for CREATE only, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit sets a new pod's overhead and merges its scheduling constraints from its class.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if ignore(a) {
		return nil
	}
	pod, rc, err := p.prepare(ctx, a)
	if err != nil || rc == nil {
		return err
	}
	// 1. Overhead: set from the class; a different one the client set is refused.
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	// 2. Scheduling: the class's nodeSelector joins the pod's (a conflicting value is
	// refused), its tolerations are merged with the pod's.
	if s := rc.Scheduling; s != nil {
		sel := pod.Spec.NodeSelector
		if sel == nil {
			sel = copyMap(s.NodeSelector)
		} else {
			for k, v := range s.NodeSelector {
				if pv, ok := sel[k]; ok && pv != v {
					return admission.NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
				}
				sel[k] = v
			}
		}
		pod.Spec.NodeSelector = sel
		pod.Spec.Tolerations = MergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

// Validate refuses a new pod whose overhead is not its class's.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if ignore(a) {
		return nil
	}
	pod, rc, err := p.prepare(ctx, a)
	if err != nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
	} else if pod.Spec.Overhead != nil {
		return admission.NewForbidden(a, errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

func ignore(a *admission.Attributes) bool {
	return a.Subresource != "" || a.Resource.GroupResource() != podResource
}

// prepare returns the pod and its class (nil when the pod names none).
func (p *Plugin) prepare(ctx context.Context, a *admission.Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok || pod == nil {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	obj, err := p.r.Get(ctx, runtimeClassGVR, "", *pod.Spec.RuntimeClassName)
	if apierrors.IsNotFound(err) {
		return pod, nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	if err != nil {
		return pod, nil, err
	}
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return pod, nil, fmt.Errorf("unexpected object type %T", obj)
	}
	return pod, rc, nil
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// MergeTolerations is upstream's tolerations.MergeTolerations: the tolerations of both
// lists, in order, without those another one in the result (or a later one) covers.
func MergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := make([]corev1.Toleration, 0, len(first)+len(second))
	all = append(append(all, first...), second...)
	var merged []corev1.Toleration
next:
	for i := range all {
		t := all[i]
		for _, m := range merged {
			if isSuperset(m, t) {
				continue next // t is redundant
			}
		}
		for _, later := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(&t, &later) && isSuperset(later, t) {
				continue next // a later toleration covers t (equal ones keep the first)
			}
		}
		merged = append(merged, *t.DeepCopy())
	}
	return merged
}

// isSuperset reports whether ss tolerates everything t tolerates.
func isSuperset(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(&t, &ss) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false // an empty key with Exists matches every key
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false // an empty effect matches every effect
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
