package server

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/admission/policy"
	"github.com/quotad/quotad/internal/registry"
)

// cachedReader is the admission.Reader plugins use: namespaces, limit ranges, priority
// classes, service accounts and admission policies with their bindings come from watch-fed
// caches, as upstream's plugins read informers; a Get that misses the cache falls back to
// storage (a namespace created a moment ago), and anything else is read from storage. Quota reads happen inside the storage
// transaction, except the DRA device classes the claim evaluator maps to extended
// resources, read from this cache as upstream's evaluator reads its informer.
type cachedReader struct {
	live   storeReader
	caches map[schema.GroupVersionResource]*objectCache
}

func newCachedReader(ctx context.Context, store *registry.Store, log *slog.Logger) *cachedReader {
	r := &cachedReader{live: storeReader{store}, caches: map[schema.GroupVersionResource]*objectCache{}}
	for _, gvr := range append([]schema.GroupVersionResource{
		corev1.SchemeGroupVersion.WithResource("namespaces"),
		corev1.SchemeGroupVersion.WithResource("limitranges"),
		schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"),
		corev1.SchemeGroupVersion.WithResource("serviceaccounts"),
		deviceClassesGVR, // the claim evaluator's DRA extended resources
	}, policy.Resources()...) { // admission policies and their bindings
		c := &objectCache{byNS: map[string]map[string]runtime.Object{}}
		r.caches[gvr] = c
		go c.run(ctx, store, store.Catalogue().Get(gvr), log)
	}
	return r
}

// observe applies this replica's committed writes to the caches at once.
func (r *cachedReader) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	if c := r.caches[res.GVR]; c != nil {
		c.observe(obj.DeepCopyObject(), deleted)
	}
}

func (r *cachedReader) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if c := r.caches[gvr]; c != nil {
		if obj, ok := c.get(ns, name); ok {
			return obj, nil
		}
	}
	return r.live.Get(ctx, gvr, ns, name)
}

func (r *cachedReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	if c := r.caches[gvr]; c != nil {
		if objs, ok := c.list(ns); ok {
			return objs, nil
		}
	}
	return r.live.List(ctx, gvr, ns)
}

// objectCache holds every object of one resource, fed by a list and a watch, and by this
// replica's own commits at once (so a LimitRange created by a client applies to the very
// next pod that client creates). Entries only move forward in resourceVersion; deletions
// leave a tombstone until the watch delivers them.
type objectCache struct {
	mu         sync.RWMutex
	byNS       map[string]map[string]runtime.Object
	tombstones map[string]int64
	synced     bool
	// changed, when set, is called after every change applied (outside the lock).
	changed func()
	// applied, when set, is told of every object stored or removed (under the lock, in the
	// order applied): the Node authorizer's graph follows the caches through it.
	applied func(obj runtime.Object, deleted bool)
	// shared: the cache holds the watch hub's objects themselves instead of copies (its
	// readers never modify them, and copying a cluster quota's status per transaction cost
	// more than the rest of its event).
	shared bool
	// keep, when set, is what the cache stores of an object once applied has seen it (nil:
	// the object): the Node authorizer's caches keep only names, UIDs and revisions, the graph
	// holding what it needs of each pod.
	keep func(runtime.Object) runtime.Object
	// listing holds the keys installPage has seen of the list being installed.
	listing map[string]bool
	// kind names the objects keep reduces to a keptRev, in what a relist tells applied of
	// one it no longer holds.
	kind string
	// listed is closed once the cache was first listed (made by waitSynced).
	listed chan struct{}
}

func rvOf(m metav1.Object) int64 {
	n, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	return n
}

// observe applies one object change if it is newer than what the cache holds.
func (c *objectCache) observe(obj runtime.Object, deleted bool) {
	c.mu.Lock()
	c.observeLocked(obj, deleted)
	c.mu.Unlock()
	if c.changed != nil {
		c.changed()
	}
}

// install applies a list of every object at revision rev, keeping what the cache learned of
// later revisions (this replica's commits observed while the list was read): entries only
// move forward even across a relist. Objects the list lacks are gone, unless the cache holds
// a later state of them.
func (c *objectCache) install(objs []runtime.Object, rev int64) {
	c.mu.Lock()
	defer func() {
		c.mu.Unlock()
		if c.changed != nil {
			c.changed()
		}
	}()
	listed := c.listing
	c.listing = nil
	if listed == nil {
		listed = map[string]bool{}
	}
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			listed[m.GetNamespace()+"/"+m.GetName()] = true
		}
		c.observeLocked(o, false)
	}
	for ns, byName := range c.byNS {
		for name, o := range byName {
			if r, ok := storedRev(o); ok && !listed[ns+"/"+name] && r <= rev {
				delete(byName, name)
				if c.applied != nil {
					c.applied(c.removed(o, ns, name), true)
				}
			}
		}
	}
	for key, t := range c.tombstones {
		if t <= rev {
			delete(c.tombstones, key)
		}
	}
	if !c.synced && c.listed != nil {
		select {
		case <-c.listed:
		default:
			close(c.listed)
		}
	}
	c.synced = true
}

// installPage applies one page of a list that install(nil, rev) ends: a cache keeping
// only part of each object holds one page of whole objects while it lists, not all of
// them.
func (c *objectCache) installPage(objs []runtime.Object) {
	c.mu.Lock()
	if c.listing == nil {
		c.listing = map[string]bool{}
	}
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			c.listing[m.GetNamespace()+"/"+m.GetName()] = true
		}
		c.observeLocked(o, false)
	}
	c.mu.Unlock()
	if c.changed != nil {
		c.changed()
	}
}

func (c *objectCache) observeLocked(obj runtime.Object, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	ns, name, rev := m.GetNamespace(), m.GetName(), rvOf(m)
	key := ns + "/" + name
	if cur, ok := c.byNS[ns][name]; ok {
		if r, ok := storedRev(cur); ok && r >= rev && rev > 0 {
			return
		}
	}
	if t, ok := c.tombstones[key]; ok {
		if rev <= t {
			if rev == t {
				delete(c.tombstones, key)
			}
			return
		}
		delete(c.tombstones, key)
	}
	if deleted {
		if c.tombstones == nil {
			c.tombstones = map[string]int64{}
		}
		c.tombstones[key] = rev
	}
	c.set(obj, deleted)
}

func (c *objectCache) get(ns, name string) (runtime.Object, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	obj, ok := c.byNS[ns][name]
	return obj, ok
}

func (c *objectCache) list(ns string) ([]runtime.Object, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.synced {
		return nil, false
	}
	out := make([]runtime.Object, 0, len(c.byNS[ns]))
	for _, o := range c.byNS[ns] {
		out = append(out, o)
	}
	return out, true
}

func (c *objectCache) set(obj runtime.Object, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	ns := m.GetNamespace()
	if c.applied != nil {
		c.applied(obj, deleted)
	}
	if deleted {
		delete(c.byNS[ns], m.GetName())
		return
	}
	if c.byNS[ns] == nil {
		c.byNS[ns] = map[string]runtime.Object{}
	}
	if c.keep != nil {
		obj = c.keep(obj)
	}
	c.byNS[ns][m.GetName()] = obj
}

// metaOnly is what the Node authorizer's caches keep of an object: its UID and revision
// (the map holding it names it, the cache its kind), 24 bytes where a Pod struct is 1,240.
// The pods' cache also answers the ServiceAccount token index's pod UIDs (uidIndex).
func metaOnly(obj runtime.Object) runtime.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	return &keptRev{uid: m.GetUID(), rev: rvOf(m)}
}

// keptRev is an object with UID uid at revision rev, as metaOnly keeps it.
type keptRev struct {
	uid types.UID
	rev int64
}

func (k *keptRev) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (k *keptRev) DeepCopyObject() runtime.Object   { c := *k; return &c }

// storedRev is the revision of what a cache holds.
func storedRev(o runtime.Object) (int64, bool) {
	if k, ok := o.(*keptRev); ok {
		return k.rev, true
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return 0, false
	}
	return rvOf(m), true
}

// removed is the object the cache tells applied it removed: what it holds, or for a
// keptRev a PartialObjectMetadata naming the cache's kind, the namespace and name.
func (c *objectCache) removed(o runtime.Object, ns, name string) runtime.Object {
	k, ok := o.(*keptRev)
	if !ok {
		return o
	}
	out := &metav1.PartialObjectMetadata{}
	out.Kind, out.Namespace, out.Name = c.kind, ns, name
	out.ResourceVersion = strconv.FormatInt(k.rev, 10)
	return out
}

// uid returns the UID of the object the cache holds as ns/name (none when it holds none,
// or holds a deletion); with waitSynced, the cache serves uidIndex.
func (c *objectCache) uid(ns, name string) (types.UID, bool) {
	o, ok := c.get(ns, name)
	if !ok {
		return "", false
	}
	if k, ok := o.(*keptRev); ok {
		return k.uid, true
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return "", false
	}
	return m.GetUID(), true
}

// waitSynced waits until the cache was listed once, or ctx ends.
func (c *objectCache) waitSynced(ctx context.Context) error {
	c.mu.Lock()
	if c.listed == nil {
		c.listed = make(chan struct{})
		if c.synced {
			close(c.listed)
		}
	}
	listed, synced := c.listed, c.synced
	c.mu.Unlock()
	if synced {
		return nil
	}
	select {
	case <-listed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run keeps the cache current with listWatch.
func (c *objectCache) run(ctx context.Context, store *registry.Store, res *registry.Resource, log *slog.Logger) {
	var page func([]runtime.Object)
	if c.keep != nil {
		page = c.installPage
	}
	listWatchIn(ctx, store, res, "", log, "admission cache", c.shared, page, c.install, c.observe, func() {
		c.mu.Lock()
		c.synced = false
		c.listing = nil
		c.mu.Unlock()
	})
}

// listWatch lists res, hands the objects to install, then watches from the list's
// revision and hands every change to observe, starting over (after unsynced, with a short
// pause) after any watch error, until ctx ends. what names the consumer in the log line of
// a relist.
func listWatch(ctx context.Context, store *registry.Store, res *registry.Resource, log *slog.Logger, what string,
	install func(objs []runtime.Object, rev int64), observe func(obj runtime.Object, deleted bool), unsynced func()) {
	listWatchShared(ctx, store, res, log, what, false, install, observe, unsynced)
}

// listPage is how many objects a paged list reads at a time.
const listPage = 500

// listWatchShared is listWatch, handing observe the watch hub's objects themselves when
// shared (observe and whoever reads what it keeps must not modify them).
func listWatchShared(ctx context.Context, store *registry.Store, res *registry.Resource, log *slog.Logger, what string, shared bool,
	install func(objs []runtime.Object, rev int64), observe func(obj runtime.Object, deleted bool), unsynced func()) {
	listWatchIn(ctx, store, res, "", log, what, shared, nil, install, observe, unsynced)
}

// listWatchIn is listWatchShared over one namespace ("": all). With page set, the list is
// read a page at a time, each handed to page, and install is then called with no objects.
func listWatchIn(ctx context.Context, store *registry.Store, res *registry.Resource, ns string, log *slog.Logger, what string, shared bool,
	page func(objs []runtime.Object), install func(objs []runtime.Object, rev int64), observe func(obj runtime.Object, deleted bool), unsynced func()) {
	for ctx.Err() == nil {
		var objs []runtime.Object
		var rev int64
		var err error
		if page != nil {
			err = store.ListEach(ctx, res, ns, registry.ListOptions{}, listPage, func(rv string, items []runtime.Object) error {
				rev, err = strconv.ParseInt(rv, 10, 64)
				page(items)
				return err
			})
		} else {
			objs, rev, err = store.ListObjects(ctx, res, ns)
		}
		if err == nil {
			// The changes are observed in this goroutine, as the watch hands them over.
			var run func(func(registry.Event) bool)
			run, err = store.StartWatch(ctx, res, ns, registry.WatchOptions{ResourceVersion: strconv.FormatInt(rev, 10), Shared: shared})
			if err == nil {
				install(objs, rev)
				run(func(ev registry.Event) bool {
					if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
						observe(ev.Object, ev.Type == watch.Deleted)
					}
					return true
				})
			}
		}
		if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
			log.Warn(what+": relisting", "resource", res.GVR.String(), "err", err)
		}
		if unsynced != nil {
			unsynced()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
