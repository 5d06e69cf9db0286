package garbagecollector

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unique"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Options tune the collector.
type Options struct {
	// Workers is the number of concurrent work items (default 2).
	Workers int
	// ResyncInterval is how often newly served resources (custom resources) are looked
	// for (default 2s).
	ResyncInterval time.Duration
	// Panics counts recovered panics (may be nil).
	Panics controller.PanicObserver
	// Clock drives the resync ticker and the log throttle (default: the real clock).
	Clock clock.WithTicker
}

// Collector is the garbage collector.
type Collector struct {
	store controller.Client
	log   *slog.Logger
	opts  Options
	loop  *controller.Loop
	q     workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// nodes are the objects seen by the watches, by UID.
	nodes map[types.UID]*node
	// leaves are the objects with no owners, no finalizers and no deletion under way (most
	// objects): all the graph asks of them is that they exist, as some dependent's owner, so
	// they are kept by UID alone, not as nodes.
	leaves map[types.UID]struct{}
	// dependents maps an owner UID to the UIDs of the objects referencing it.
	dependents map[types.UID]map[types.UID]bool
	// watching holds each watched group-resource's watch and how far it has gone.
	watching map[schema.GroupResource]*watched
	// advanced is closed (and replaced) when a watch reaches a later revision.
	advanced chan struct{}
}

// watched is one group-resource's watch.
type watched struct {
	cancel context.CancelFunc
	res    *registry.Resource
	// rev is the revision up to which the graph holds every change of the resource (0:
	// its current objects are not all delivered yet).
	rev int64
	// asked is when a progress notification was last asked for (caughtUp).
	asked time.Time
}

// askEvery is the least time between two progress requests for one resource's watch:
// every owner's orphan or foreground deletion waits for all of them, so deletions in a
// burst share the requests.
const askEvery = 50 * time.Millisecond

// graphWait is how long a work item that needs the graph to reach a revision waits for it
// before failing (it is then retried with backoff): past etcd's own progress notifications
// to an idle watch (every 5 s), should the requests not be answered.
const graphWait = 10 * time.Second

// node is what the graph keeps of one object.
type node struct {
	res        *registry.Resource
	namespace  string
	name       string
	uid        types.UID
	owners     []metav1.OwnerReference
	deleting   bool
	finalizers []string
}

func (n *node) has(finalizer string) bool {
	for _, f := range n.finalizers {
		if f == finalizer {
			return true
		}
	}
	return false
}

// New returns a garbage collector.
func New(store controller.Client, log *slog.Logger, opts Options) *Collector {
	if log == nil {
		log = slog.Default()
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.ResyncInterval <= 0 {
		opts.ResyncInterval = 2 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Collector{
		store: store, log: log.With("controller", "garbagecollector"), opts: opts,
		loop:  controller.NewLoop("garbagecollector", store, log, opts.Panics, opts.Clock),
		nodes: map[types.UID]*node{}, leaves: map[types.UID]struct{}{}, dependents: map[types.UID]map[types.UID]bool{},
		watching: map[schema.GroupResource]*watched{}, advanced: make(chan struct{}),
	}
}

// Work item keys: "dependent/<uid>" checks one object's owners, "owner/<uid>" carries out
// an owner's orphan or foreground deletion.
const (
	itemDependent = "dependent/"
	itemOwner     = "owner/"
)

// Start runs the collector until ctx ends.
func (c *Collector) Start(ctx context.Context) error {
	c.q = controller.NewQueue("garbagecollector")
	c.loop.Guard("sync watches", func() { c.syncWatches(ctx) })
	go func() {
		t := c.opts.Clock.NewTicker(c.opts.ResyncInterval)
		defer t.Stop()
		gen := c.store.Catalogue().Generation()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				if g := c.store.Catalogue().Generation(); g != gen {
					if c.loop.Guard("sync watches", func() { c.syncWatches(ctx) }) {
						gen = g
					}
				}
			}
		}
	}()
	c.loop.Process(ctx, c.q, c.opts.Workers, c.process)
	return nil
}

// syncWatches watches every served group-resource (events excluded) once.
func (c *Collector) syncWatches(ctx context.Context) {
	cat := c.store.Catalogue()
	want := map[schema.GroupResource]*registry.Resource{}
	for _, r := range cat.All() {
		gr := r.GroupResource()
		if gr == (schema.GroupResource{Resource: "events"}) || r.Storage != nil || r.Synthesized || r.AppliedView {
			continue // events; versions stored as another resource; objects never stored (views)
		}
		if _, ok := want[gr]; !ok {
			want[gr] = cat.ForGroupResource(gr)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for gr, w := range c.watching {
		if want[gr] == nil {
			w.cancel()
			delete(c.watching, gr)
		}
	}
	for gr, res := range want {
		if _, ok := c.watching[gr]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w := &watched{cancel: cancel, res: res}
		c.watching[gr] = w
		res := res
		go c.loop.WatchReached(wctx, res, func(obj runtime.Object, deleted bool) {
			c.observe(res, obj, deleted)
		}, func(rev int64) { c.reached(w, rev) })
	}
}

// observe updates the graph with one watch event and enqueues the work it calls for.
func (c *Collector) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	m, err := controller.Meta(obj)
	if err != nil {
		return
	}
	uid := m.GetUID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.nodes[uid]; old != nil {
		for _, o := range old.owners {
			delete(c.dependents[o.UID], uid)
			if len(c.dependents[o.UID]) == 0 {
				delete(c.dependents, o.UID)
			}
		}
	}
	delete(c.leaves, uid)
	if deleted {
		delete(c.nodes, uid)
		// 1. Its dependents now dangle.
		for dep := range c.dependents[uid] {
			c.q.Add(itemDependent + string(dep))
		}
		// 2. An owner deleting in foreground may be waiting for this one.
		for _, o := range m.GetOwnerReferences() {
			if on := c.nodes[o.UID]; on != nil && on.deleting && on.has(metav1.FinalizerDeleteDependents) {
				c.q.Add(itemOwner + string(o.UID))
			}
		}
		return
	}
	if len(m.GetOwnerReferences()) == 0 && len(m.GetFinalizers()) == 0 && m.GetDeletionTimestamp() == nil {
		// A leaf: nothing below concerns it (it has no owners to check, and no deletion
		// to carry out); work items for it find no node and end.
		delete(c.nodes, uid)
		c.leaves[uid] = struct{}{}
		return
	}
	n := &node{
		res: res, namespace: unique.Make(m.GetNamespace()).Value(), name: m.GetName(), uid: uid,
		owners: m.GetOwnerReferences(), deleting: m.GetDeletionTimestamp() != nil,
		finalizers: m.GetFinalizers(),
	}
	c.nodes[uid] = n
	for _, o := range n.owners {
		if c.dependents[o.UID] == nil {
			c.dependents[o.UID] = map[types.UID]bool{}
		}
		c.dependents[o.UID][uid] = true
	}
	// 3. Owners unknown to the graph are checked against storage; owners deleting in
	// foreground delete this one.
	for _, o := range n.owners {
		on := c.nodes[o.UID]
		if _, leaf := c.leaves[o.UID]; leaf {
			continue // a live owner, not deleting
		}
		switch {
		case on == nil:
			c.q.Add(itemDependent + string(uid))
		case on.deleting && on.has(metav1.FinalizerDeleteDependents):
			c.q.Add(itemDependent + string(uid))
			c.q.Add(itemOwner + string(o.UID))
		}
	}
	// 4. An owner being deleted with a policy the collector carries out.
	if n.deleting && (n.has(metav1.FinalizerOrphanDependents) || n.has(metav1.FinalizerDeleteDependents)) {
		c.q.Add(itemOwner + string(uid))
		for dep := range c.dependents[uid] {
			c.q.Add(itemDependent + string(dep))
		}
	}
}

// reached records that the graph holds every change of w's resource up to rev.
func (c *Collector) reached(w *watched, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev > w.rev {
		w.rev = rev
		close(c.advanced)
		c.advanced = make(chan struct{})
	}
}

// caughtUp waits until the graph holds every change of every watched resource up to rev,
// so that it holds every object that existed then: an owner read at rev has all its
// dependents created before it in the graph. (The resources' watches are independent: an
// owner's deletion can reach the graph before a dependent created just before it, and
// orphaning the owner's dependents then would miss that one, which the collector would
// delete once the owner is gone.) It asks the lagging resources' hubs for progress
// notifications while it waits, and fails when ctx ends or after graphWait.
func (c *Collector) caughtUp(ctx context.Context, rev int64) error {
	ctx, cancel := context.WithTimeout(ctx, graphWait)
	defer cancel()
	for {
		var lagging, ask []*watched
		now := c.opts.Clock.Now()
		c.mu.Lock()
		for _, w := range c.watching {
			if w.rev < rev {
				lagging = append(lagging, w)
				if now.Sub(w.asked) >= askEvery {
					w.asked = now
					ask = append(ask, w)
				}
			}
		}
		advanced := c.advanced
		c.mu.Unlock()
		if len(lagging) == 0 {
			return nil
		}
		for _, w := range ask {
			controller.RequestProgress(c.store, w.res)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the dependency graph has not reached revision %d (%d resources behind, %s first): %w", rev, len(lagging), lagging[0].res.GVR.GroupResource(), ctx.Err())
		case <-advanced:
		case <-c.opts.Clock.After(askEvery):
		}
	}
}

func (c *Collector) node(uid types.UID) *node {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[uid]; n != nil {
		cp := *n
		return &cp
	}
	return nil
}

// dependentsOf returns the graph's dependents of uid.
func (c *Collector) dependentsOf(uid types.UID) []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*node
	for dep := range c.dependents[uid] {
		if n := c.nodes[dep]; n != nil {
			cp := *n
			out = append(out, &cp)
		}
	}
	return out
}

func (c *Collector) process(ctx context.Context, key string) (time.Duration, error) {
	switch {
	case strings.HasPrefix(key, itemDependent):
		return 0, c.attemptToDelete(ctx, types.UID(strings.TrimPrefix(key, itemDependent)))
	case strings.HasPrefix(key, itemOwner):
		return 0, c.processOwner(ctx, types.UID(strings.TrimPrefix(key, itemOwner)))
	}
	return 0, nil
}

// live reads a node's object from storage; nil when it is gone or was recreated.
func (c *Collector) live(ctx context.Context, n *node) (metav1.Object, runtime.Object, error) {
	obj, err := c.store.Get(ctx, n.res, n.namespace, n.name)
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := controller.Meta(obj)
	if err != nil {
		return nil, nil, err
	}
	if m.GetUID() != n.uid {
		return nil, nil, nil
	}
	return m, obj, nil
}

// ownerState is how a dependent's owner reference resolves.
type ownerState int

const (
	ownerSolid ownerState = iota
	ownerDangling
	ownerWaiting
)

// resolve finds the served resource of an owner reference's kind (any version of its group).
func (c *Collector) resolve(ref metav1.OwnerReference) *registry.Resource {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil
	}
	cat := c.store.Catalogue()
	if r := cat.ForKind(gv.WithKind(ref.Kind)); r != nil {
		return r
	}
	for _, r := range cat.All() {
		if r.GVR.Group == gv.Group && r.Kind == ref.Kind {
			return r
		}
	}
	return nil
}

// classify reads the owner of ref for a dependent in namespace ns.
func (c *Collector) classify(ctx context.Context, ns string, ref metav1.OwnerReference) (ownerState, error) {
	res := c.resolve(ref)
	if res == nil {
		// Unknown kind: the owner cannot be checked, so it is not collected.
		return ownerSolid, nil
	}
	ons := ""
	if res.Namespaced {
		if ns == "" {
			// A cluster-scoped dependent cannot have a namespaced owner.
			return ownerDangling, nil
		}
		ons = ns
	}
	obj, err := c.store.Get(ctx, res, ons, ref.Name)
	if apierrors.IsNotFound(err) {
		return ownerDangling, nil
	}
	if err != nil {
		return ownerSolid, err
	}
	m, err := controller.Meta(obj)
	if err != nil {
		return ownerSolid, err
	}
	if m.GetUID() != ref.UID {
		return ownerDangling, nil
	}
	if m.GetDeletionTimestamp() != nil && hasFinalizer(m.GetFinalizers(), metav1.FinalizerDeleteDependents) {
		return ownerWaiting, nil
	}
	return ownerSolid, nil
}

// attemptToDelete is upstream's attemptToDeleteItem for one dependent.
func (c *Collector) attemptToDelete(ctx context.Context, uid types.UID) error {
	n := c.node(uid)
	if n == nil {
		return nil
	}
	m, _, err := c.live(ctx, n)
	if err != nil || m == nil {
		return err
	}
	deletingDependents := m.GetDeletionTimestamp() != nil && hasFinalizer(m.GetFinalizers(), metav1.FinalizerDeleteDependents)
	if m.GetDeletionTimestamp() != nil && !deletingDependents {
		return nil
	}
	if deletingDependents {
		return c.processOwner(ctx, uid)
	}
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	// 1. Classify every owner against storage.
	var solid, dangling, waiting []metav1.OwnerReference
	for _, ref := range refs {
		st, err := c.classify(ctx, n.namespace, ref)
		if err != nil {
			return err
		}
		switch st {
		case ownerSolid:
			solid = append(solid, ref)
		case ownerDangling:
			dangling = append(dangling, ref)
		case ownerWaiting:
			waiting = append(waiting, ref)
		}
	}
	switch {
	case len(solid) > 0:
		// 2. A live owner remains: only drop the references to missing or deleting owners.
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		drop := map[types.UID]bool{}
		for _, r := range append(dangling, waiting...) {
			drop[r.UID] = true
		}
		return c.removeOwnerRefs(ctx, n, drop)
	case len(waiting) > 0 && len(c.dependentsOf(uid)) > 0:
		// 3. An owner waits for its dependents and this one has dependents of its own: it
		// is deleted in foreground too. When one of its dependents is already deleting its
		// own dependents, the owners may form a cycle, each waiting for the next: as
		// upstream, its references stop blocking their owners' deletion first.
		for _, d := range c.dependentsOf(uid) {
			if d.deleting && d.has(metav1.FinalizerDeleteDependents) {
				if err := c.unblockOwnerRefs(ctx, n); err != nil {
					return err
				}
				break
			}
		}
		return c.deleteObject(ctx, n, metav1.DeletePropagationForeground)
	default:
		// 4. No live owner: collect it with the policy its own finalizers ask for.
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(m.GetFinalizers(), metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(m.GetFinalizers(), metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return c.deleteObject(ctx, n, policy)
	}
}

func (c *Collector) deleteObject(ctx context.Context, n *node, policy metav1.DeletionPropagation) error {
	uid := n.uid
	_, err := c.store.Delete(ctx, n.res, n.namespace, n.name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy,
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", n.res.GVR.Resource, n.namespace, n.name, err)
	}
	return nil
}

// removeOwnerRefs drops the owner references whose UIDs are in drop.
func (c *Collector) removeOwnerRefs(ctx context.Context, n *node, drop map[types.UID]bool) error {
	_, err := c.store.Update(ctx, n.res, n.namespace, n.name, "", func(o runtime.Object) (runtime.Object, error) {
		m, err := controller.Meta(o)
		if err != nil {
			return nil, err
		}
		if m.GetUID() != n.uid {
			return nil, apierrors.NewNotFound(n.res.GroupResource(), n.name)
		}
		var keep []metav1.OwnerReference
		for _, r := range m.GetOwnerReferences() {
			if !drop[r.UID] {
				keep = append(keep, r)
			}
		}
		m.SetOwnerReferences(keep)
		return o, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// unblockOwnerRefs sets blockOwnerDeletion to false on every owner reference that sets it.
func (c *Collector) unblockOwnerRefs(ctx context.Context, n *node) error {
	_, err := c.store.Update(ctx, n.res, n.namespace, n.name, "", func(o runtime.Object) (runtime.Object, error) {
		m, err := controller.Meta(o)
		if err != nil {
			return nil, err
		}
		if m.GetUID() != n.uid {
			return nil, apierrors.NewNotFound(n.res.GroupResource(), n.name)
		}
		refs := m.GetOwnerReferences()
		for i := range refs {
			if refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
				f := false
				refs[i].BlockOwnerDeletion = &f
			}
		}
		m.SetOwnerReferences(refs)
		return o, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeFinalizer removes one finalizer; with none left the registry deletes the object.
func (c *Collector) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	_, err := c.store.Update(ctx, n.res, n.namespace, n.name, "", func(o runtime.Object) (runtime.Object, error) {
		m, err := controller.Meta(o)
		if err != nil {
			return nil, err
		}
		if m.GetUID() != n.uid {
			return nil, apierrors.NewNotFound(n.res.GroupResource(), n.name)
		}
		var keep []string
		for _, f := range m.GetFinalizers() {
			if f != finalizer {
				keep = append(keep, f)
			}
		}
		m.SetFinalizers(keep)
		return o, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// processOwner carries out an owner's orphan or foreground deletion.
func (c *Collector) processOwner(ctx context.Context, uid types.UID) error {
	n := c.node(uid)
	if n == nil {
		return nil
	}
	m, _, err := c.live(ctx, n)
	if err != nil {
		return err
	}
	if m == nil {
		for _, d := range c.dependentsOf(uid) {
			c.q.Add(itemDependent + string(d.uid))
		}
		return nil
	}
	if m.GetDeletionTimestamp() == nil {
		return nil
	}
	fs := m.GetFinalizers()
	if hasFinalizer(fs, metav1.FinalizerOrphanDependents) || hasFinalizer(fs, metav1.FinalizerDeleteDependents) {
		// Both policies act on every dependent: the graph must hold those that existed
		// when the owner was read.
		rev, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
		if err := c.caughtUp(ctx, rev); err != nil {
			return err
		}
	}
	switch {
	case hasFinalizer(fs, metav1.FinalizerOrphanDependents):
		// Orphan: every dependent loses its reference, then the owner its finalizer.
		for _, d := range c.dependentsOf(uid) {
			if err := c.removeOwnerRefs(ctx, d, map[types.UID]bool{uid: true}); err != nil {
				return err
			}
		}
		return c.removeFinalizer(ctx, n, metav1.FinalizerOrphanDependents)
	case hasFinalizer(fs, metav1.FinalizerDeleteDependents):
		// Foreground: wait until no dependent blocks the owner's deletion.
		blocking := 0
		for _, d := range c.dependentsOf(uid) {
			if !d.deleting {
				c.q.Add(itemDependent + string(d.uid))
			}
			for _, r := range d.owners {
				if r.UID == uid && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
					blocking++
				}
			}
		}
		if blocking > 0 {
			return nil
		}
		return c.removeFinalizer(ctx, n, metav1.FinalizerDeleteDependents)
	}
	return nil
}

func hasFinalizer(fs []string, f string) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}
