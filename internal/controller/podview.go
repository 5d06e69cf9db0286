package controller

import (
	"slices"
	"sync"
	"unique"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// PodView is the part of a pod that the controllers watching every pod read (node
// lifecycle, taint eviction, Endpoints, EndpointSlices, pod GC, the workload controllers),
// what their caches keep instead of the pod: a watched pod is the whole object (volumes,
// commands, environment, managed fields: several KB), a view about 400 bytes plus the
// maps and slices it shares with the pod it was made of. Views are read-only; Pod makes a
// pod of one.
type PodView struct {
	Namespace, Name, ResourceVersion string
	UID                              types.UID
	Generation                       int64
	Labels                           map[string]string
	OwnerReferences                  []metav1.OwnerReference
	CreationTimestamp                metav1.Time
	DeletionTimestamp                *metav1.Time
	NodeName                         string
	Tolerations                      []corev1.Toleration
	// Containers and InitContainers keep the names, ports and restart policies of the
	// containers with ports (init containers: the restartable ones, whose ports a Service
	// may name).
	Containers, InitContainers []corev1.Container
	Phase                      corev1.PodPhase
	Reason, PodIP              string
	// rare holds what few pods have, for Pod (nil: none of it).
	rare *podRare
	// Ready is the status of the Ready condition ("" when the pod has none), ReadySince its
	// last transition.
	Ready      corev1.ConditionStatus
	ReadySince metav1.Time
	// Restarts is the most restarts of any container (what ranks pods for deletion).
	Restarts int32
	// made is the pod Pod last made of the view, while anything holds it (nil: every
	// call makes one).
	made *madePod
	// detail is the pod Pod returns for a pod read in detail (PodFilter.Detailed): what
	// the view holds, with the pod's whole metadata but its managed fields, its affinity,
	// and every condition and container status (nil: a view without detail).
	detail *corev1.Pod
	// shape holds the parts the view shares with the views of pods alike (PodViews), for
	// as long as the view is held.
	shape *podShape
}

// podRare is the part of a view that few pods have: a hostname or subdomain (a
// StatefulSet's pods), pod IPs other than the one podIP names (dual-stack). Held apart, it
// leaves the view of most pods 64 bytes smaller (352 bytes, where a view is kept for every
// pod a controller keeps).
type podRare struct {
	hostname, subdomain string
	// podIPs is nil for the pod IPs that hold podIP alone (or nothing, without one).
	podIPs []corev1.PodIP
}

// rareOf returns the rare part of p's view (nil: none).
func rareOf(p *corev1.Pod) *podRare {
	ips := p.Status.PodIPs
	if len(ips) == 1 && ips[0].IP == p.Status.PodIP || len(ips) == 0 && p.Status.PodIP == "" {
		ips = nil
	} else if ips == nil {
		ips = []corev1.PodIP{} // a pod IP with no pod IPs: none made up
	}
	if p.Spec.Hostname == "" && p.Spec.Subdomain == "" && ips == nil {
		return nil
	}
	return &podRare{hostname: p.Spec.Hostname, subdomain: p.Spec.Subdomain, podIPs: ips}
}

// madePod is the pod last made of a view, held weakly: a workload controller syncs its
// owner on every change of any of its pods and reads all of them each time (a ReplicaSet
// of 1,000 pods being scheduled: about 100 syncs a second, each making 1,000 pods of
// 1.3 KB, nearly all the server's allocation), but the pods made stay only while they are
// in use, so the views stay small.
type madePod struct {
	mu  sync.Mutex
	pod weak.Pointer[corev1.Pod]
}

// GetObjectKind implements runtime.Object (a view has no kind of its own).
func (v *PodView) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object: a shallow copy, the view being read-only.
func (v *PodView) DeepCopyObject() kruntime.Object { c := *v; return &c }

// GetNamespace and GetName name the view's pod (for Index).
func (v *PodView) GetNamespace() string { return v.Namespace }

// GetName is the pod's name.
func (v *PodView) GetName() string { return v.Name }

// GetUID, GetLabels, GetOwnerReferences and GetDeletionTimestamp read the view as
// metav1.Object reads a pod (the maps and slices are the view's: read-only).
func (v *PodView) GetUID() types.UID { return v.UID }

// GetLabels is the pod's labels.
func (v *PodView) GetLabels() map[string]string { return v.Labels }

// GetOwnerReferences is the pod's owner references.
func (v *PodView) GetOwnerReferences() []metav1.OwnerReference { return v.OwnerReferences }

// GetDeletionTimestamp is when the pod's deletion was asked (nil: it was not).
func (v *PodView) GetDeletionTimestamp() *metav1.Time { return v.DeletionTimestamp }

// Pod returns a pod holding what the view holds, read-only: its maps and slices are the
// view's, and the pod itself is shared by the callers until it is collected.
func (v *PodView) Pod() *corev1.Pod {
	if v.detail != nil {
		return v.detail
	}
	m := v.made
	if m == nil {
		return v.makePod()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.pod.Value(); p != nil {
		return p
	}
	p := v.makePod()
	m.pod = weak.Make(p)
	return p
}

// makePod makes a pod of the view.
func (v *PodView) makePod() *corev1.Pod {
	p := &corev1.Pod{}
	p.Namespace, p.Name, p.UID, p.ResourceVersion = v.Namespace, v.Name, v.UID, v.ResourceVersion
	p.Generation, p.Labels, p.CreationTimestamp, p.DeletionTimestamp = v.Generation, v.Labels, v.CreationTimestamp, v.DeletionTimestamp
	p.OwnerReferences = v.OwnerReferences
	p.Spec.NodeName = v.NodeName
	p.Spec.Tolerations, p.Spec.Containers, p.Spec.InitContainers = v.Tolerations, v.Containers, v.InitContainers
	p.Status.Phase, p.Status.Reason, p.Status.PodIP = v.Phase, v.Reason, v.PodIP
	switch r := v.rare; {
	case r == nil && v.PodIP != "":
		p.Status.PodIPs = []corev1.PodIP{{IP: v.PodIP}}
	case r != nil:
		p.Spec.Hostname, p.Spec.Subdomain = r.hostname, r.subdomain
		if len(r.podIPs) > 0 {
			p.Status.PodIPs = r.podIPs
		} else if r.podIPs == nil && v.PodIP != "" {
			p.Status.PodIPs = []corev1.PodIP{{IP: v.PodIP}}
		}
	}
	if v.Ready != "" {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: v.Ready, LastTransitionTime: v.ReadySince}}
	}
	if v.Restarts > 0 {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: v.Restarts}}
	}
	return p
}

// ViewOf returns the view of p (PodView).
func ViewOf(p *corev1.Pod) *PodView {
	// The namespace and node are interned: held by every view, they would otherwise be a
	// string per pod (each pod decoded has its own).
	v := &PodView{
		Namespace: intern(p.Namespace), Name: p.Name, ResourceVersion: p.ResourceVersion, UID: p.UID,
		Generation: p.Generation, Labels: p.Labels, OwnerReferences: p.OwnerReferences, CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
		NodeName: intern(p.Spec.NodeName), Tolerations: p.Spec.Tolerations,
		Containers: portsOnly(p.Spec.Containers, false), InitContainers: portsOnly(p.Spec.InitContainers, true),
		Phase: p.Status.Phase, Reason: p.Status.Reason, PodIP: p.Status.PodIP, rare: rareOf(p),
		made: &madePod{},
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			v.Ready, v.ReadySince = c.Status, c.LastTransitionTime
			break
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		v.Restarts = max(v.Restarts, c.RestartCount)
	}
	return v
}

// intern returns the process's shared copy of s (unique.Make; "" as is). The runtime
// forgets a copy once nothing holds its handle, so views made far apart may hold two, but
// the views of a burst of pods hold one.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// DetailedViewOf returns the view of p with its detail (PodView.detail): the maps and
// slices of p's metadata, affinity and status it keeps are p's, shared.
func DetailedViewOf(p *corev1.Pod) *PodView {
	v := ViewOf(p)
	v.detail, v.made = v.detailOf(p), nil
	return v
}

// detailOf is the pod a detailed view of p returns: the view's pod with p's metadata (its
// labels and owner references the view's), affinity, conditions and container statuses.
func (v *PodView) detailOf(p *corev1.Pod) *corev1.Pod {
	d := v.makePod()
	d.ObjectMeta = p.ObjectMeta
	d.ManagedFields = nil
	d.Labels, d.OwnerReferences = v.Labels, v.OwnerReferences
	d.Spec.Affinity = p.Spec.Affinity
	d.Status.Conditions, d.Status.ContainerStatuses = p.Status.Conditions, p.Status.ContainerStatuses
	return d
}

// Detailed reports whether the view carries its pod's detail (DetailedViewOf).
func (v *PodView) Detailed() bool { return v.detail != nil }

// CachedPod is the pod a cache holds as a view (or as a pod), nil when it holds none.
func CachedPod(o kruntime.Object) *corev1.Pod {
	switch p := o.(type) {
	case *PodView:
		return p.Pod()
	case *corev1.Pod:
		return p
	}
	return nil
}

// CachedView is the view of the pod a cache holds (a view of its own when the cache holds
// the pod), nil when it holds none: what a controller reads that needs no more than a view.
func CachedView(o kruntime.Object) *PodView {
	switch p := o.(type) {
	case *PodView:
		return p
	case *corev1.Pod:
		return ViewOf(p)
	}
	return nil
}

// portsOnly keeps each container's name, ports and restart policy (init containers: only
// the restartable ones); nil when none has ports.
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

// Index returns an empty Index keeping the view of each pod (the views shared through s;
// nil s: views of its own).
func (s *PodViews) Index() *Index { return s.IndexOf(nil) }

// IndexOf is Index keeping only the pods for which keep (nil: every pod) returns true: a
// controller that decides nothing about the other pods keeps no view of them, and a pod
// no controller keeps has no view at all. keep must hold for a pod's later versions once
// it held for one (a pod's node, deletion and terminal phase are never undone), or its
// controller must take a pod leaving the index as one it no longer keeps.
func (s *PodViews) IndexOf(keep func(*corev1.Pod) bool) *Index {
	return NewIndex(func(o kruntime.Object) kruntime.Object {
		if p, ok := o.(*corev1.Pod); ok && (keep == nil || keep(p)) {
			return s.View(p)
		}
		return nil
	})
}

// Bound reports whether a pod is bound to a node: what node lifecycle and taint eviction
// keep of pods.
func Bound(p *corev1.Pod) bool { return p.Spec.NodeName != "" }

// PodsByNode indexes the keys ("namespace/name") of pods by the node they are bound to,
// fed with the changes of an Index of pods' views (its OnChange): what node lifecycle and
// taint eviction look up a node's pods by. It holds each pod by the namespace and name
// strings of its view, not by a key made for it (a string per pod held).
type PodsByNode struct {
	mu sync.Mutex
	m  map[string]map[nsName]struct{}
}

// Changed records one change as an Index's OnChange gives it (old, cur: the views held
// before and now) and returns the pod's key and the nodes it was and is bound to ("": none,
// or gone).
func (b *PodsByNode) Changed(old, cur kruntime.Object, deleted bool) (key, was, now string) {
	if v, ok := old.(*PodView); ok {
		was = v.NodeName
	}
	v, ok := cur.(*PodView)
	if !ok {
		return "", was, ""
	}
	key = v.Namespace + "/" + v.Name
	if !deleted {
		now = v.NodeName
	}
	if was == now {
		return key, was, now
	}
	k := nsName{v.Namespace, v.Name}
	b.mu.Lock()
	defer b.mu.Unlock()
	if was != "" {
		delete(b.m[was], k)
		if len(b.m[was]) == 0 {
			delete(b.m, was)
		}
	}
	if now != "" {
		if b.m == nil {
			b.m = map[string]map[nsName]struct{}{}
		}
		if b.m[now] == nil {
			b.m[now] = map[nsName]struct{}{}
		}
		b.m[now][k] = struct{}{}
	}
	return key, was, now
}

// Keys returns the keys of the pods bound to node, sorted.
func (b *PodsByNode) Keys(node string) []string {
	b.mu.Lock()
	keys := make([]string, 0, len(b.m[node]))
	for k := range b.m[node] {
		keys = append(keys, k.ns+"/"+k.name)
	}
	b.mu.Unlock()
	slices.Sort(keys)
	return keys
}
