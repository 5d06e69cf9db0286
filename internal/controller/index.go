package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/registry"
)

// Index is a watch-fed cache of one resource with what kube-controller-manager's informers
// give its controllers, so that a sync reads the objects it needs from memory instead of a
// namespace's worth from storage:
//
//   - objects by namespace and name, and by the UID of their controller (the owner
//     reference with controller set; "" for orphans), as the informers' controller-UID
//     indexers;
//   - Synced: the current objects have all been delivered once (a controller acting before
//     would miss pods it owns and create more);
//   - the revision it has reached, and WaitFor: a sync that wrote (created a pod, scaled
//     a ReplicaSet) waits until the index holds its writes before it acts again. These are
//     upstream's expectations as revisions: every write's result carries its revision, so
//     the wait is exact, needs no counting of adds and deletes, and holds across restarts
//     (a new index starts from a list at a revision past every earlier write).
//
// Loop.WatchIndex feeds it. When a watch has to start over from the current objects (its
// revision compacted away), the objects that were not listed again are removed and their
// deletions delivered, as an informer's relist does. Kept objects are shared: read-only.
type Index struct {
	// keep returns what the index keeps of an object (a view, or the object), or nil for
	// an object it does not keep (as if deleted).
	keep     func(runtime.Object) runtime.Object
	next     Handler
	onChange func(old, cur runtime.Object, deleted bool)

	mu       sync.RWMutex
	byNS     map[string]*nsIndex
	rev      int64
	synced   bool
	relist   map[nsName]bool // during a start-over: what was held and is not listed again yet
	advanced chan struct{}   // closed, and replaced, whenever rev or synced changes
}

type nsName struct{ ns, name string }

// named is what a cache keys objects by (metav1.Object has it, and so has a PodView).
type named interface {
	GetNamespace() string
	GetName() string
}

// nsIndex is one namespace's objects, by name and by controller UID (then by name: a
// controller reading its own objects on every sync finds them without a lookup by name).
type nsIndex struct {
	objs    map[string]runtime.Object
	byOwner map[types.UID]map[string]runtime.Object
}

// NewIndex returns an empty index that keeps keep(obj) of each object (nil keep: the
// object itself).
func NewIndex(keep func(runtime.Object) runtime.Object) *Index {
	return &Index{keep: keep, byNS: map[string]*nsIndex{}, advanced: make(chan struct{})}
}

// Feed returns the handler that records each event in the index, then calls next (when
// set) with the event's object; the loop feeding an index calls only this one.
func (x *Index) Feed(next Handler) Handler {
	x.next = next
	return func(obj runtime.Object, deleted bool) {
		x.Apply(obj, deleted)
		if next != nil {
			next(obj, deleted)
		}
	}
}

// OnChange sets f to be called for each event, before the handler given to Feed, with
// what the index held of the object before it (nil: nothing) and what it keeps of the
// event's object (for a deletion: what it held, else what it would keep; nil when it
// keeps nothing of it): a handler that compares versions, as an informer's update
// handler, and sees the index's views. A deletion a relist found comes as (old, old,
// true). It returns x.
func (x *Index) OnChange(f func(old, cur runtime.Object, deleted bool)) *Index {
	x.onChange = f
	return x
}

// Apply records one event as the watch feeding the index would, and calls OnChange's
// function, but not the handler given to Feed (for a controller's tests, and a caller
// recording its own view of an event).
func (x *Index) Apply(obj runtime.Object, deleted bool) {
	var kept runtime.Object
	if !deleted {
		kept = x.kept(obj)
	}
	m, ok := obj.(named)
	if !ok {
		var err error
		if m, err = Meta(obj); err != nil {
			return
		}
	}
	ns, name := m.GetNamespace(), m.GetName()
	x.mu.Lock()
	if x.relist != nil {
		delete(x.relist, nsName{ns, name})
	}
	old := x.remove(ns, name)
	if kept != nil {
		x.add(ns, name, kept)
	}
	x.mu.Unlock()
	if x.onChange == nil {
		return
	}
	if deleted {
		if kept = old; kept == nil {
			kept = x.kept(obj)
		}
	}
	x.onChange(old, kept, deleted)
}

// kept is what the index keeps of obj (nil: nothing).
func (x *Index) kept(obj runtime.Object) runtime.Object {
	if x.keep == nil {
		return obj
	}
	return x.keep(obj)
}

// add records kept as ns/name (x.mu held, nothing held of ns/name).
func (x *Index) add(ns, name string, kept runtime.Object) {
	n := x.byNS[ns]
	if n == nil {
		n = &nsIndex{objs: map[string]runtime.Object{}, byOwner: map[types.UID]map[string]runtime.Object{}}
		x.byNS[ns] = n
	}
	n.objs[name] = kept
	uid := controllerUIDOf(kept)
	if n.byOwner[uid] == nil {
		n.byOwner[uid] = map[string]runtime.Object{}
	}
	n.byOwner[uid][name] = kept
}

// remove drops ns/name (x.mu held).
func (x *Index) remove(ns, name string) runtime.Object {
	n := x.byNS[ns]
	if n == nil {
		return nil
	}
	old, ok := n.objs[name]
	if !ok {
		return nil
	}
	delete(n.objs, name)
	uid := controllerUIDOf(old)
	delete(n.byOwner[uid], name)
	if len(n.byOwner[uid]) == 0 {
		delete(n.byOwner, uid)
	}
	if len(n.objs) == 0 {
		delete(x.byNS, ns)
	}
	return old
}

// controllerUIDOf is the UID of obj's controller, "" when it has none.
func controllerUIDOf(obj runtime.Object) types.UID {
	var refs []metav1.OwnerReference
	switch o := obj.(type) {
	case *PodView:
		refs = o.OwnerReferences
	default:
		m, err := Meta(obj)
		if err != nil {
			return ""
		}
		refs = m.GetOwnerReferences()
	}
	if ref := ControllerOf(refs); ref != nil {
		return ref.UID
	}
	return ""
}

// listing is called as a watch starts from the current objects: after a first list, what
// the index holds is what the list must show again. Until the list is in, the index is
// not synced (an informer replaces its store at once: a sync waits rather than read a
// mix of the old objects and the new).
func (x *Index) listing() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.synced = false
	x.relist = map[nsName]bool{}
	for ns, n := range x.byNS {
		for name := range n.objs {
			x.relist[nsName{ns, name}] = true
		}
	}
}

// listed is called when the current objects, as of rev, have all been delivered: what
// was held and not listed again is gone (its deletion delivered to OnChange's function and
// next), then the index is synced at rev, so a waiter sees those deletions handled.
func (x *Index) listed(rev int64) {
	x.mu.Lock()
	var gone []runtime.Object
	for k := range x.relist {
		if old := x.remove(k.ns, k.name); old != nil {
			gone = append(gone, old)
		}
	}
	x.relist = nil
	x.mu.Unlock()
	for _, o := range gone {
		if x.onChange != nil {
			x.onChange(o, o, true)
		}
		if x.next != nil {
			x.next(o, true)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.synced = true
	if rev > x.rev {
		x.rev = rev
	}
	x.signal()
}

// reached is called once every change up to rev has been applied.
func (x *Index) reached(rev int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if rev > x.rev {
		x.rev = rev
		x.signal()
	}
}

// signal wakes the waiters (x.mu held).
func (x *Index) signal() {
	close(x.advanced)
	x.advanced = make(chan struct{})
}

// Synced reports whether the current objects have all been delivered once.
func (x *Index) Synced() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.synced
}

// Revision is the revision up to which the index holds every change.
func (x *Index) Revision() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rev
}

// WaitFor waits until the index is synced and holds every change up to rev (0: until
// it is synced), or ctx ends.
func (x *Index) WaitFor(ctx context.Context, rev int64) error {
	for {
		x.mu.RLock()
		ok, ch := x.synced && x.rev >= rev, x.advanced
		x.mu.RUnlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Get returns the kept object of ns and name, or nil.
func (x *Index) Get(ns, name string) runtime.Object {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if n := x.byNS[ns]; n != nil {
		return n.objs[name]
	}
	return nil
}

// Range calls f with each kept object of ns, in no order, holding the index's read lock
// (f must not call the index).
func (x *Index) Range(ns string, f func(runtime.Object)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if n := x.byNS[ns]; n != nil {
		for _, o := range n.objs {
			f(o)
		}
	}
}

// Each calls f with every kept object of every namespace, in no order, holding the
// index's read lock (f must not call the index): List without its copies and its sort, for
// a pass that reads every object and keeps few.
func (x *Index) Each(f func(runtime.Object)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, n := range x.byNS {
		for _, o := range n.objs {
			f(o)
		}
	}
}

// Controlled returns the kept objects of ns whose controller has uid ("" for the
// orphans), sorted by name.
func (x *Index) Controlled(ns string, uid types.UID) []runtime.Object {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.byNS[ns]
	if n == nil {
		return nil
	}
	return byName(n.byOwner[uid])
}

// EachControlled calls f with each kept object of ns whose controller has uid (uid "":
// those without a controller), in no order, holding the index's read lock (f must not
// call the index): Controlled without its copy and its sort, for a controller reading its
// own objects on every sync.
func (x *Index) EachControlled(ns string, uid types.UID, f func(runtime.Object)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.byNS[ns]
	if n == nil {
		return
	}
	for _, o := range n.byOwner[uid] {
		f(o)
	}
}

// AnyControlled reports whether f is true of any kept object of ns whose controller has
// uid, in no order, holding the index's read lock (f must not call the index): a check
// that neither copies nor sorts them.
func (x *Index) AnyControlled(ns string, uid types.UID, f func(runtime.Object) bool) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.byNS[ns]
	if n == nil {
		return false
	}
	for _, o := range n.byOwner[uid] {
		if f(o) {
			return true
		}
	}
	return false
}

// Len is how many objects the index keeps.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, ns := range x.byNS {
		n += len(ns.objs)
	}
	return n
}

// List returns the kept objects of ns ("" for all namespaces), sorted by namespace and
// name.
func (x *Index) List(ns string) []runtime.Object {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var keys []nsName
	for name, n := range x.byNS {
		if ns != "" && name != ns {
			continue
		}
		for o := range n.objs {
			keys = append(keys, nsName{name, o})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].ns != keys[j].ns {
			return keys[i].ns < keys[j].ns
		}
		return keys[i].name < keys[j].name
	})
	out := make([]runtime.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, x.byNS[k.ns].objs[k.name])
	}
	return out
}

// Revisions tracks, per key (a controller's owner), the revision of the last write a sync
// made for it, so that the next sync of that key waits until the index holds it: upstream's
// ControllerExpectations as revisions (see Index).
type Revisions struct {
	mu sync.Mutex
	m  map[string]int64
}

// Wrote records that a write for key committed at the revision of obj (a write's result;
// nil or without a revision: nothing to wait for).
func (r *Revisions) Wrote(key string, obj runtime.Object) {
	rev := revisionOf(obj)
	if rev == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]int64{}
	}
	if rev > r.m[key] {
		r.m[key] = rev
	}
}

// WriteWait bounds a sync's wait for an index (Revisions.Await): a watch that cannot
// catch up makes the sync fail and be retried, never hang its worker.
const WriteWait = 30 * time.Second

// Await waits, at most WriteWait, until x is synced and holds key's last write, then
// forgets it.
func (r *Revisions) Await(ctx context.Context, x Cache, key string) error {
	r.mu.Lock()
	rev := r.m[key]
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, WriteWait)
	defer cancel()
	if err := x.WaitFor(ctx, rev); err != nil {
		return fmt.Errorf("waiting for the cache to hold earlier writes: %w", err)
	}
	if rev > 0 {
		r.mu.Lock()
		if r.m[key] == rev {
			delete(r.m, key)
		}
		r.mu.Unlock()
	}
	return nil
}

// Forget drops key (its owner is gone).
func (r *Revisions) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, key)
}

// Tracked returns store as one sync of key writes through it: each write of res that
// succeeds records its revision for key (Wrote), so the next sync of key waits for it.
func (r *Revisions) Tracked(store Client, res *registry.Resource, key string) Client {
	return &tracked{Client: store, r: r, res: res, key: key}
}

type tracked struct {
	Client
	r   *Revisions
	res *registry.Resource
	key string
}

func (t *tracked) Create(ctx context.Context, res *registry.Resource, ns string, obj runtime.Object, opts registry.WriteOptions) (*registry.Result, error) {
	out, err := t.Client.Create(ctx, res, ns, obj, opts)
	if err == nil && res != nil && res.GVR == t.res.GVR && out != nil {
		t.r.Wrote(t.key, out.Object)
	}
	return out, err
}

func (t *tracked) Update(ctx context.Context, res *registry.Resource, ns, name, subresource string, fn registry.UpdateFunc, opts registry.WriteOptions) (*registry.Result, error) {
	out, err := t.Client.Update(ctx, res, ns, name, subresource, fn, opts)
	if err == nil && res != nil && res.GVR == t.res.GVR && out != nil {
		t.r.Wrote(t.key, out.Object)
	}
	return out, err
}

func (t *tracked) Delete(ctx context.Context, res *registry.Resource, ns, name string, opts metav1.DeleteOptions, wopts registry.WriteOptions) (*registry.DeleteResult, error) {
	out, err := t.Client.Delete(ctx, res, ns, name, opts, wopts)
	if err == nil && res != nil && res.GVR == t.res.GVR && out != nil {
		t.r.Wrote(t.key, out.Object)
	}
	return out, err
}

// byName returns the objects of objs sorted by name.
func byName(objs map[string]runtime.Object) []runtime.Object {
	sorted := slices.Sorted(maps.Keys(objs))
	out := make([]runtime.Object, 0, len(sorted))
	for _, n := range sorted {
		out = append(out, objs[n])
	}
	return out
}
