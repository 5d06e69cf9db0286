package controller

import (
	"runtime"
	"sync"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodViews makes the pods the controllers watching every pod keep in their caches (node
// lifecycle, taint eviction, Endpoints, EndpointSlices): a copy holding only the fields
// they read, shared by all of them. A watched pod is the whole object (its volumes,
// containers' commands, environment, managed fields: several KB); a view is a fraction
// of it, and the one view of a pod's version is shared for as long as any cache holds it,
// so a large cluster's pods cost one view each, not one whole pod per controller.
//
// Views are read-only. A nil *PodViews makes views without sharing them.
type PodViews struct {
	mu    sync.Mutex
	views map[viewKey]weak.Pointer[corev1.Pod]
}

type viewKey struct {
	uid types.UID
	rv  string
}

// NewPodViews returns an empty set of shared views.
func NewPodViews() *PodViews {
	return &PodViews{views: map[viewKey]weak.Pointer[corev1.Pod]{}}
}

// View returns the view of p: the one already made of p's UID and resourceVersion while
// any holder keeps it, else a new one.
func (v *PodViews) View(p *corev1.Pod) *corev1.Pod {
	if v == nil || p.ResourceVersion == "" || p.UID == "" {
		return PodView(p)
	}
	k := viewKey{p.UID, p.ResourceVersion}
	v.mu.Lock()
	defer v.mu.Unlock()
	if w, ok := v.views[k]; ok {
		if view := w.Value(); view != nil {
			return view
		}
	}
	view := PodView(p)
	v.views[k] = weak.Make(view)
	runtime.AddCleanup(view, v.forget, k)
	return view
}

// forget drops k once its view is gone (unless a newer view took its place).
func (v *PodViews) forget(k viewKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if w, ok := v.views[k]; ok && w.Value() == nil {
		delete(v.views, k)
	}
}

// Len is how many views are held (for tests).
func (v *PodViews) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.views)
}

// PodView is the part of p the pod-watching controllers read: name, namespace, UID,
// resourceVersion, generation, labels, creation and deletion timestamps; the node, hostname, subdomain,
// tolerations and the containers' (and restartable init containers') names and ports;
// the phase, reason, pod IPs and Ready condition. Maps and slices are p's own (read-only).
func PodView(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{}
	out.Name, out.Namespace, out.UID, out.ResourceVersion = p.Name, p.Namespace, p.UID, p.ResourceVersion
	out.Generation, out.Labels, out.DeletionTimestamp = p.Generation, p.Labels, p.DeletionTimestamp
	out.CreationTimestamp = p.CreationTimestamp
	out.Spec.NodeName, out.Spec.Hostname, out.Spec.Subdomain = p.Spec.NodeName, p.Spec.Hostname, p.Spec.Subdomain
	out.Spec.Tolerations = p.Spec.Tolerations
	out.Spec.Containers = portsOnly(p.Spec.Containers, false)
	out.Spec.InitContainers = portsOnly(p.Spec.InitContainers, true)
	out.Status.Phase, out.Status.Reason, out.Status.PodIP, out.Status.PodIPs = p.Status.Phase, p.Status.Reason, p.Status.PodIP, p.Status.PodIPs
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Status.Conditions = []corev1.PodCondition{c}
			break
		}
	}
	return out
}

// portsOnly keeps each container's name, ports and restart policy (init containers: only
// the restartable ones, whose ports a Service may name); nil when none has ports.
func portsOnly(cs []corev1.Container, init bool) []corev1.Container {
	var out []corev1.Container
	for _, c := range cs {
		if len(c.Ports) == 0 {
			continue
		}
		if init && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
			continue
		}
		out = append(out, corev1.Container{Name: c.Name, Ports: c.Ports, RestartPolicy: c.RestartPolicy})
	}
	return out
}
