package controller

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Cache is what a controller reads of a watch-fed cache: an Index, or a PodSub's share of
// the shared index of pods.
type Cache interface {
	Get(ns, name string) runtime.Object
	Range(ns string, f func(runtime.Object))
	Controlled(ns string, uid types.UID) []runtime.Object
	EachControlled(ns string, uid types.UID, f func(runtime.Object))
	AnyControlled(ns string, uid types.UID, f func(runtime.Object) bool) bool
	List(ns string) []runtime.Object
	WaitFor(ctx context.Context, rev int64) error
	Synced() bool
	Revision() int64
}

// PodFilter is which pods a subscriber of SharedPods keeps: those any of its conditions
// admits. Each condition, once true of a pod, stays true of its later versions (a pod's
// node, controller, deletion and terminal phase are never undone) but Labelled, whose
// subscriber takes a pod leaving as one it no longer keeps.
type PodFilter struct {
	// Bound: bound to a node.
	Bound bool
	// Labelled: with labels.
	Labelled bool
	// Finishing: being deleted, or in a phase other than Pending, Running and Unknown
	// (upstream's isPodTerminated: an empty phase included).
	Finishing bool
	// ControlledBy: with a controller of one of these kinds.
	ControlledBy []schema.GroupVersionKind
	// LabelledOrphans: without a controller, with labels (what a selector may adopt).
	LabelledOrphans bool
	// Detailed: the subscriber reads the pods ControlledBy admits in more detail than a
	// view holds (annotations, finalizers, affinity, every condition and container status:
	// the Job and DaemonSet controllers), so their views carry it (PodView.Pod).
	Detailed bool
}

// keeps reports whether f admits a pod of these fields.
func (f *PodFilter) keeps(node string, lbls map[string]string, refs []metav1.OwnerReference, deleting bool, phase corev1.PodPhase) bool {
	if (f.Bound && node != "") || (f.Labelled && len(lbls) > 0) {
		return true
	}
	if f.Finishing && (deleting || TerminatedPhase(phase)) {
		return true
	}
	if len(f.ControlledBy) == 0 && !f.LabelledOrphans {
		return false
	}
	ref := ControllerOf(refs)
	if ref == nil {
		return f.LabelledOrphans && len(lbls) > 0
	}
	for _, k := range f.ControlledBy {
		if ref.Kind == k.Kind && ref.APIVersion == k.GroupVersion().String() {
			return true
		}
	}
	return false
}

// details reports whether f reads a pod of these owner references in detail (Detailed).
func (f *PodFilter) details(refs []metav1.OwnerReference) bool {
	if !f.Detailed {
		return false
	}
	if ref := ControllerOf(refs); ref != nil {
		for _, k := range f.ControlledBy {
			if ref.Kind == k.Kind && ref.APIVersion == k.GroupVersion().String() {
				return true
			}
		}
	}
	return false
}

// TerminatedPhase reports a phase other than Pending, Running and Unknown, an empty one
// included (upstream's isPodTerminated).
func TerminatedPhase(phase corev1.PodPhase) bool {
	switch phase {
	case corev1.PodPending, corev1.PodRunning, corev1.PodUnknown:
		return false
	}
	return true
}

// keepsPod and keepsView read keeps of a pod and of its view.
func (f *PodFilter) keepsPod(p *corev1.Pod) bool {
	return f.keeps(p.Spec.NodeName, p.Labels, p.OwnerReferences, p.DeletionTimestamp != nil, p.Status.Phase)
}

func (f *PodFilter) keepsView(v *PodView) bool {
	return f.keeps(v.NodeName, v.Labels, v.OwnerReferences, v.DeletionTimestamp != nil, v.Phase)
}

// ControllerOf is the owner reference among refs with controller set (nil: none), not
// copied.
func ControllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if c := refs[i].Controller; c != nil && *c {
			return &refs[i]
		}
	}
	return nil
}

// SharedPods is one watch of pods feeding one index of their views, shared by the
// controllers that watch every pod, as kube-controller-manager's controllers share one pod
// informer: each controller subscribes (Sub) with the pods it keeps and its handlers, and
// reads the index through its subscription, which shows it only those pods. One watcher
// wakes for a batch of pod events and one index records each, whatever the number of
// controllers; the index keeps a view of a pod only when some subscriber keeps it.
//
// Every subscription is made before Run (the controllers' constructors), so that the
// index keeps what every subscriber keeps from its first list; Run starts the watch once
// every subscription has its handlers (the controllers' Start), so none misses an event.
type SharedPods struct {
	views *PodViews
	x     *Index

	mu      sync.Mutex
	subs    []*PodSub
	pending int           // subscriptions without their handlers yet
	ready   chan struct{} // closed when pending reaches 0 after Run was called
	running bool
}

// NewSharedPods returns a shared index of pods whose views are shared through views (nil:
// views of its own).
func NewSharedPods(views *PodViews) *SharedPods {
	s := &SharedPods{views: views, ready: make(chan struct{})}
	s.x = NewIndex(func(o runtime.Object) runtime.Object {
		p, ok := o.(*corev1.Pod)
		if !ok {
			return nil
		}
		kept, detailed := false, false
		for _, sub := range s.subs {
			if sub.filter.keepsPod(p) {
				kept = true
				detailed = detailed || sub.filter.details(p.OwnerReferences)
			}
		}
		switch {
		case detailed:
			return views.Detailed(p)
		case kept:
			return views.View(p)
		}
		return nil
	})
	s.x.OnChange(s.changed)
	return s
}

// Views is the set of views s shares (nil for a nil s).
func (s *SharedPods) Views() *PodViews {
	if s == nil {
		return nil
	}
	return s.views
}

// Len is how many pods' views the shared index keeps (those some subscriber keeps).
func (s *SharedPods) Len() int { return s.x.Len() }

// Sub subscribes a controller keeping the pods f admits; it must be called before Run.
// On a nil s it returns a subscription to an index of its own, whose Start runs the
// watch (a controller made alone, as in its tests).
func (s *SharedPods) Sub(f PodFilter) *PodSub {
	own := s == nil
	if own {
		s = NewSharedPods(nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		panic("controller: a pod subscription made after the shared pods started")
	}
	sub := &PodSub{s: s, filter: f, own: own}
	s.subs = append(s.subs, sub)
	s.pending++
	return sub
}

// Run watches pods into the index until ctx ends, once every subscription has its
// handlers (or ctx ends first).
func (s *SharedPods) Run(ctx context.Context, loop *Loop) {
	s.mu.Lock()
	s.running = true
	if s.pending == 0 {
		close(s.ready)
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return
	case <-s.ready:
	}
	loop.WatchIndex(ctx, loop.store.Catalogue().Get(podsGVR), s.x, s.next)
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// started records that sub has its handlers.
func (s *SharedPods) started(sub *PodSub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub.attached {
		return
	}
	sub.attached = true
	s.pending--
	if s.pending == 0 && s.running {
		close(s.ready)
	}
}

// changed hands one change of the index to each subscriber's OnChange function, with
// what it keeps of the views before and after (nil: it does not keep them).
func (s *SharedPods) changed(old, cur runtime.Object, deleted bool) {
	for _, sub := range s.subs {
		if sub.onChange == nil {
			continue
		}
		o, c := sub.kept(old), sub.kept(cur)
		if o == nil && c == nil {
			continue // a pod it neither kept nor keeps
		}
		sub.guard(func() { sub.onChange(o, c, deleted) })
	}
}

// next hands a watch event's object to each subscriber's handler.
func (s *SharedPods) next(obj runtime.Object, deleted bool) {
	for _, sub := range s.subs {
		if sub.handler != nil {
			sub.guard(func() { sub.handler(obj, deleted) })
		}
	}
}

// PodSub is one controller's subscription to SharedPods: a Cache of the pods it keeps
// (views, read-only), the handlers it gave, and the loop whose panics they count as its.
type PodSub struct {
	s        *SharedPods
	filter   PodFilter
	own      bool // the index is the subscription's own: Start runs its watch
	onChange func(old, cur runtime.Object, deleted bool)
	handler  Handler
	loop     *Loop
	attached bool // under s.mu
}

// OnChange sets f to be called for each change of a pod this subscription keeps before or
// after it, as Index.OnChange (old and cur: the views it kept before and keeps now, nil
// when it does not). It must be called before Start, and returns p.
func (p *PodSub) OnChange(f func(old, cur runtime.Object, deleted bool)) *PodSub {
	p.onChange = f
	return p
}

// Start gives the subscription its handler for every pod event (nil: none) and the loop
// its panics are counted by; a subscription to an index of its own starts its watch.
func (p *PodSub) Start(ctx context.Context, loop *Loop, next Handler) {
	p.loop, p.handler = loop, next
	p.s.started(p)
	if p.own {
		go p.s.Run(ctx, loop)
	}
}

// guard runs f, recovering a panic as the subscriber's loop does (nil loop: not
// recovered, as before Start).
func (p *PodSub) guard(f func()) {
	if p.loop == nil {
		f()
		return
	}
	defer func() {
		if r := recover(); r != nil {
			p.loop.recovered(r, "resource", podsGVR.String())
		}
	}()
	f()
}

// kept is o when the subscription keeps it, else nil.
func (p *PodSub) kept(o runtime.Object) runtime.Object {
	if v, ok := o.(*PodView); ok && p.filter.keepsView(v) {
		return v
	}
	return nil
}

// Apply records one event in the shared index as the watch would (every subscriber's
// OnChange function sees it; no handler given to Start is called): for tests.
func (p *PodSub) Apply(obj runtime.Object, deleted bool) { p.s.x.Apply(obj, deleted) }

// Get returns the view of ns/name when the subscription keeps it, else nil.
func (p *PodSub) Get(ns, name string) runtime.Object { return p.kept(p.s.x.Get(ns, name)) }

// Range calls f with each kept view of ns, as Index.Range.
func (p *PodSub) Range(ns string, f func(runtime.Object)) {
	p.s.x.Range(ns, func(o runtime.Object) {
		if p.kept(o) != nil {
			f(o)
		}
	})
}

// Each calls f with every kept view of every namespace, as Index.Each.
func (p *PodSub) Each(f func(runtime.Object)) {
	p.s.x.Each(func(o runtime.Object) {
		if p.kept(o) != nil {
			f(o)
		}
	})
}

// Controlled returns the kept views of ns whose controller has uid, as Index.Controlled.
func (p *PodSub) Controlled(ns string, uid types.UID) []runtime.Object {
	return p.only(p.s.x.Controlled(ns, uid))
}

// EachControlled calls f with each kept view of ns whose controller has uid, as
// Index.EachControlled.
func (p *PodSub) EachControlled(ns string, uid types.UID, f func(runtime.Object)) {
	p.s.x.EachControlled(ns, uid, func(o runtime.Object) {
		if p.kept(o) != nil {
			f(o)
		}
	})
}

// AnyControlled is Index.AnyControlled over the kept views.
func (p *PodSub) AnyControlled(ns string, uid types.UID, f func(runtime.Object) bool) bool {
	return p.s.x.AnyControlled(ns, uid, func(o runtime.Object) bool { return p.kept(o) != nil && f(o) })
}

// List returns the kept views of ns ("": all), as Index.List.
func (p *PodSub) List(ns string) []runtime.Object { return p.only(p.s.x.List(ns)) }

// only keeps the kept views of objs, in place.
func (p *PodSub) only(objs []runtime.Object) []runtime.Object {
	out := objs[:0]
	for _, o := range objs {
		if p.kept(o) != nil {
			out = append(out, o)
		}
	}
	return out
}

// WaitFor, Synced and Revision are the shared index's.
func (p *PodSub) WaitFor(ctx context.Context, rev int64) error { return p.s.x.WaitFor(ctx, rev) }

// Synced reports whether the shared index has had the current pods delivered once.
func (p *PodSub) Synced() bool { return p.s.x.Synced() }

// Revision is the revision up to which the shared index holds every change.
func (p *PodSub) Revision() int64 { return p.s.x.Revision() }

var (
	_ Cache = (*Index)(nil)
	_ Cache = (*PodSub)(nil)
)
