package controller

import (
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodViews makes the views of pods, sharing among them the parts that many pods have
// alike: a workload's pods come from one template, so their labels, owner references,
// tolerations and ported containers are equal, and the views of all of them hold one copy
// (podShape) instead of one each (a bound pod's labels and default tolerations alone are
// about 250 bytes). Equal parts are found by content, and a part stays shared for as long
// as a view holds it. A nil *PodViews makes views that share nothing.
//
// (The controllers watching every pod read one shared index, SharedPods, so one view is
// made of each pod version; nothing is gained by handing out the same view twice.)
type PodViews struct {
	mu     sync.Mutex
	shapes map[string]weak.Pointer[podShape]
	key    []byte   // scratch for the key of a shape, under mu
	names  []string // scratch for sorted label keys, under mu
}

// podShape is what the views of pods alike share: read-only, as the views are.
type podShape struct {
	labels                     map[string]string
	ownerReferences            []metav1.OwnerReference
	tolerations                []corev1.Toleration
	containers, initContainers []corev1.Container
}

// NewPodViews returns views sharing what pods have alike.
func NewPodViews() *PodViews {
	return &PodViews{shapes: map[string]weak.Pointer[podShape]{}}
}

// View returns a view of p (ViewOf), its parts shared with other pods' views.
func (s *PodViews) View(p *corev1.Pod) *PodView { return s.view(p, false) }

// Detailed is View for a pod read in detail (DetailedViewOf).
func (s *PodViews) Detailed(p *corev1.Pod) *PodView { return s.view(p, true) }

func (s *PodViews) view(p *corev1.Pod, detailed bool) *PodView {
	v := ViewOf(p)
	if s != nil {
		s.share(v)
	}
	if detailed {
		v.detail, v.made = v.detailOf(p), nil
	}
	return v
}

// share makes v hold the shape of the views alike, made of v's own parts if there is none.
func (s *PodViews) share(v *PodView) {
	if len(v.Labels) == 0 && len(v.OwnerReferences) == 0 && len(v.Tolerations) == 0 &&
		len(v.Containers) == 0 && len(v.InitContainers) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key, s.names = shapeKey(s.key[:0], s.names[:0], v)
	if w, ok := s.shapes[string(s.key)]; ok {
		if sh := w.Value(); sh != nil {
			v.shape = sh
			v.Labels, v.OwnerReferences, v.Tolerations = sh.labels, sh.ownerReferences, sh.tolerations
			v.Containers, v.InitContainers = sh.containers, sh.initContainers
			return
		}
	}
	sh := &podShape{labels: v.Labels, ownerReferences: v.OwnerReferences, tolerations: v.Tolerations,
		containers: v.Containers, initContainers: v.InitContainers}
	v.shape = sh
	k := string(s.key)
	s.shapes[k] = weak.Make(sh)
	runtime.AddCleanup(sh, s.forget, k)
}

// forget drops k once its shape is gone (unless a newer shape took its place).
func (s *PodViews) forget(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.shapes[k]; ok && w.Value() == nil {
		delete(s.shapes, k)
	}
}

// Len is how many shapes are held (for tests).
func (s *PodViews) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shapes)
}

// shapeKey appends to key what tells v's shared parts from any others: each part's
// length, then each element's fields, strings length-prefixed and optional ones marked
// present or absent, so that two keys are equal only when the parts are (nil and empty
// alike: a view reads both the same). names is scratch for the labels' sorted keys.
// TestShapeKey fails when one of the API types encoded gains a field.
func shapeKey(key []byte, names []string, v *PodView) ([]byte, []string) {
	str := func(x string) {
		key = binary.AppendUvarint(key, uint64(len(x)))
		key = append(key, x...)
	}
	num := func(n int64) { key = binary.AppendVarint(key, n) }
	flag := func(b *bool) {
		switch {
		case b == nil:
			key = append(key, 0)
		case *b:
			key = append(key, 1)
		default:
			key = append(key, 2)
		}
	}
	for k := range v.Labels {
		names = append(names, k)
	}
	slices.Sort(names)
	num(int64(len(names)))
	for _, k := range names {
		str(k)
		str(v.Labels[k])
	}
	num(int64(len(v.OwnerReferences)))
	for _, r := range v.OwnerReferences {
		str(r.APIVersion)
		str(r.Kind)
		str(r.Name)
		str(string(r.UID))
		flag(r.Controller)
		flag(r.BlockOwnerDeletion)
	}
	num(int64(len(v.Tolerations)))
	for _, t := range v.Tolerations {
		str(t.Key)
		str(string(t.Operator))
		str(t.Value)
		str(string(t.Effect))
		if t.TolerationSeconds == nil {
			key = append(key, 0)
		} else {
			key = append(key, 1)
			num(*t.TolerationSeconds)
		}
	}
	for _, cs := range [][]corev1.Container{v.Containers, v.InitContainers} {
		num(int64(len(cs)))
		for _, c := range cs {
			str(c.Name)
			if c.RestartPolicy == nil {
				key = append(key, 0)
			} else {
				key = append(key, 1)
				str(string(*c.RestartPolicy))
			}
			num(int64(len(c.Ports)))
			for _, p := range c.Ports {
				str(p.Name)
				num(int64(p.HostPort))
				num(int64(p.ContainerPort))
				str(string(p.Protocol))
				str(p.HostIP)
			}
		}
	}
	clear(names) // no pod's strings kept alive by the scratch
	return key, names[:0]
}
