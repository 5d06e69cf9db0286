package fake

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Action is one write the client accepted or refused.
type Action struct {
	Verb        string // create, update, delete
	Resource    string // the resource's name ("pods")
	Subresource string
	Namespace   string
	Name        string
	// Err is the error the write returned (nil when it was accepted).
	Err error
}

// Change is one committed change, as a watch reports it.
type Change struct {
	Res    *registry.Resource
	Type   watch.EventType
	Object runtime.Object
}

// Client is an in-memory controller.Client. The zero value is not usable: use New.
type Client struct {
	cat   *registry.Catalogue
	clock clock.PassiveClock

	mu sync.Mutex
	// refuse (SetRefuse) is asked before every create, update and delete is committed.
	refuse  func(verb string, res *registry.Resource, obj runtime.Object) error
	cond    *sync.Cond
	rev     int64
	uids    int
	objects map[string]runtime.Object
	actions []Action
	changes []Change
	// epoch ends the watches started before it changed; resuming a watch from a revision
	// before compacted fails as expired (LoseDeletion).
	epoch     int
	compacted int64
}

var _ controller.Client = (*Client)(nil)

// New returns an empty client serving the built-in resources; clk stamps creation and
// deletion timestamps (nil: the real clock).
func New(clk clock.PassiveClock) *Client {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Client{cat: registry.NewCatalogue(), clock: clk, objects: map[string]runtime.Object{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func key(res *registry.Resource, ns, name string) string {
	if !res.Namespaced {
		ns = ""
	}
	gr := res.GroupResource()
	return gr.String() + "/" + ns + "/" + name
}

func prefix(res *registry.Resource, ns string) string {
	gr := res.GroupResource()
	if ns == "" || !res.Namespaced {
		return gr.String() + "/"
	}
	return gr.String() + "/" + ns + "/"
}

// Catalogue implements controller.Client.
func (c *Client) Catalogue() *registry.Catalogue { return c.cat }

// SetRefuse sets (nil: clears) a function asked before every create, update and delete is
// committed (the create's name already generated): a non-nil error refuses the write, as
// admission would. It must not call the client. Writes of other goroutines (an event
// recorder's) may be running: the function is set under the client's lock.
func (c *Client) SetRefuse(refuse func(verb string, res *registry.Resource, obj runtime.Object) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuse = refuse
}

// Add stores objects as they are (a test's starting state), giving each a UID and a
// resourceVersion when it has none; it reports them to watches as ADDED.
func (c *Client) Add(objs ...runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, obj := range objs {
		obj = obj.DeepCopyObject()
		res := c.resourceOf(obj)
		m, _ := meta.Accessor(obj)
		if m.GetUID() == "" {
			c.uids++
			m.SetUID(types.UID(fmt.Sprintf("uid-%d", c.uids)))
		}
		c.rev++
		m.SetResourceVersion(strconv.FormatInt(c.rev, 10))
		c.objects[key(res, m.GetNamespace(), m.GetName())] = obj
		c.changed(res, watch.Added, obj)
	}
}

// Revision is the revision of the last change.
func (c *Client) Revision() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rev
}

// resourceOf finds the served resource of a typed object.
func (c *Client) resourceOf(obj runtime.Object) *registry.Resource {
	for _, r := range c.cat.All() {
		if r.Storage != nil || r.Synthesized || r.AppliedView {
			continue
		}
		if reflect.TypeOf(r.New()) == reflect.TypeOf(obj) {
			return r
		}
	}
	panic(fmt.Sprintf("fake: no resource serves %T", obj))
}

// Object returns a copy of the stored object of res's GVR in ns named name, or nil.
func (c *Client) Object(gvr schema.GroupVersionResource, ns, name string) runtime.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.objects[key(c.cat.Get(gvr), ns, name)]; o != nil {
		return o.DeepCopyObject()
	}
	return nil
}

// Objects returns copies of the stored objects of gvr in ns ("" for all), sorted by name.
func (c *Client) Objects(gvr schema.GroupVersionResource, ns string) []runtime.Object {
	objs, _, _ := c.ListObjects(context.Background(), c.cat.Get(gvr), ns)
	return objs
}

// Actions returns the writes so far and forgets them.
func (c *Client) Actions() []Action {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.actions
	c.actions = nil
	return out
}

// Changes returns the changes committed since the first from (an index into every change
// so far) and the index to pass next time.
func (c *Client) Changes(from int) ([]Change, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Change(nil), c.changes[from:]...), len(c.changes)
}

// Get implements controller.Client.
func (c *Client) Get(ctx context.Context, res *registry.Resource, ns, name string) (runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.objects[key(res, ns, name)]
	if o == nil {
		return nil, apierrors.NewNotFound(res.GroupResource(), name)
	}
	return o.DeepCopyObject(), nil
}

// ListObjects implements controller.Client.
func (c *Client) ListObjects(ctx context.Context, res *registry.Resource, ns string) ([]runtime.Object, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list(res, ns), c.rev, nil
}

// ListEach implements controller.Client: one page of every object matching opts.
func (c *Client) ListEach(ctx context.Context, res *registry.Resource, ns string, opts registry.ListOptions, pageSize int64, page func(rv string, items []runtime.Object) error) error {
	objs, rev, err := c.ListObjects(ctx, res, ns)
	if err != nil {
		return err
	}
	var items []runtime.Object
	for _, o := range objs {
		if opts.Selector.Matches(res, o) {
			items = append(items, o)
		}
	}
	return page(strconv.FormatInt(rev, 10), items)
}

func (c *Client) list(res *registry.Resource, ns string) []runtime.Object {
	p := prefix(res, ns)
	var keys []string
	for k := range c.objects {
		if len(k) > len(p) && k[:len(p)] == p {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]runtime.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, c.objects[k].DeepCopyObject())
	}
	return out
}

// Create implements controller.Client.
func (c *Client) Create(ctx context.Context, res *registry.Resource, ns string, obj runtime.Object, opts registry.WriteOptions) (*registry.Result, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if !res.Namespaced {
		ns = ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m.SetNamespace(ns)
	if m.GetName() == "" && m.GetGenerateName() != "" {
		c.uids++
		m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), c.uids))
	}
	act := Action{Verb: "create", Resource: res.GVR.Resource, Namespace: ns, Name: m.GetName()}
	fail := func(err error) (*registry.Result, error) {
		act.Err = err
		c.actions = append(c.actions, act)
		return nil, err
	}
	if m.GetName() == "" {
		return fail(apierrors.NewBadRequest("name or generateName is required"))
	}
	k := key(res, ns, m.GetName())
	if c.objects[k] != nil {
		return fail(apierrors.NewAlreadyExists(res.GroupResource(), m.GetName()))
	}
	if c.refuse != nil {
		if err := c.refuse("create", res, obj); err != nil {
			return fail(err)
		}
	}
	c.uids++
	m.SetUID(types.UID(fmt.Sprintf("uid-%d", c.uids)))
	m.SetCreationTimestamp(metav1.NewTime(c.clock.Now()))
	m.SetGeneration(1)
	c.rev++
	m.SetResourceVersion(strconv.FormatInt(c.rev, 10))
	if !opts.DryRun {
		c.objects[k] = obj
		c.changed(res, watch.Added, obj)
	}
	c.actions = append(c.actions, act)
	return &registry.Result{Object: obj.DeepCopyObject()}, nil
}

// Update implements controller.Client: fn gets a copy of the stored object; a
// resourceVersion it sets must be the stored one. A status update keeps everything but
// the status; any other keeps the status of a resource with a status subresource. An
// object being deleted whose last finalizer the update removes is deleted.
func (c *Client) Update(ctx context.Context, res *registry.Resource, ns, name, subresource string, fn registry.UpdateFunc, opts registry.WriteOptions) (*registry.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	act := Action{Verb: "update", Resource: res.GVR.Resource, Subresource: subresource, Namespace: ns, Name: name}
	fail := func(err error) (*registry.Result, error) {
		act.Err = err
		c.actions = append(c.actions, act)
		return nil, err
	}
	k := key(res, ns, name)
	cur := c.objects[k]
	if cur == nil {
		return fail(apierrors.NewNotFound(res.GroupResource(), name))
	}
	c.mu.Unlock()
	obj, err := fn(cur.DeepCopyObject())
	c.mu.Lock()
	if err != nil {
		return fail(err)
	}
	if c.objects[k] != cur {
		return fail(apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again")))
	}
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return fail(err)
	}
	cm, _ := meta.Accessor(cur)
	if rv := m.GetResourceVersion(); rv != "" && rv != cm.GetResourceVersion() {
		return fail(apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again")))
	}
	obj, err = c.merge(res, subresource, cur, obj)
	if err != nil {
		return fail(err)
	}
	m, _ = meta.Accessor(obj)
	if c.refuse != nil {
		if err := c.refuse("update", res, obj); err != nil {
			return fail(err)
		}
	}
	c.rev++
	m.SetResourceVersion(strconv.FormatInt(c.rev, 10))
	c.actions = append(c.actions, act)
	if g := cm.GetDeletionGracePeriodSeconds(); m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 && (g == nil || *g == 0) {
		// Finalizers all gone with no grace period left (an object in a graceful
		// deletion waits for its zero-grace delete, as in the registry).
		delete(c.objects, k)
		c.changed(res, watch.Deleted, obj)
		return &registry.Result{Object: obj.DeepCopyObject()}, nil
	}
	c.objects[k] = obj
	c.changed(res, watch.Modified, obj)
	return &registry.Result{Object: obj.DeepCopyObject()}, nil
}

// merge applies the subresource split to an update and bumps the generation of a spec
// change, keeping the stored identity.
func (c *Client) merge(res *registry.Resource, subresource string, cur, obj runtime.Object) (runtime.Object, error) {
	curMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
	if err != nil {
		return nil, err
	}
	newMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	out := newMap
	if subresource == "status" || subresource == "approval" { // a CSR's approval is its status's conditions
		out = runtime.DeepCopyJSON(curMap)
		out["status"] = newMap["status"]
	} else if res.Status {
		if st, ok := curMap["status"]; ok {
			out["status"] = st
		} else {
			delete(out, "status")
		}
	}
	md, _ := out["metadata"].(map[string]interface{})
	cmd, _ := curMap["metadata"].(map[string]interface{})
	if md == nil {
		md = map[string]interface{}{}
		out["metadata"] = md
	}
	for _, f := range []string{"uid", "name", "namespace", "creationTimestamp", "generation"} {
		if v, ok := cmd[f]; ok {
			md[f] = v
		}
	}
	if subresource == "" && !reflect.DeepEqual(withoutMeta(curMap), withoutMeta(out)) {
		g, _ := cmd["generation"].(int64)
		md["generation"] = g + 1
	}
	merged := res.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(out, merged); err != nil {
		return nil, err
	}
	return merged, nil
}

func withoutMeta(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	return out
}

// Delete implements controller.Client with the registry's semantics: UID and
// resourceVersion preconditions; the orphan and foreground policies recorded as
// finalizers (Jobs orphan by default); an object with finalizers only marked deleting.
func (c *Client) Delete(ctx context.Context, res *registry.Resource, ns, name string, opts metav1.DeleteOptions, wopts registry.WriteOptions) (*registry.DeleteResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	act := Action{Verb: "delete", Resource: res.GVR.Resource, Namespace: ns, Name: name}
	fail := func(err error) (*registry.DeleteResult, error) {
		act.Err = err
		c.actions = append(c.actions, act)
		return nil, err
	}
	k := key(res, ns, name)
	cur := c.objects[k]
	if cur == nil {
		return fail(apierrors.NewNotFound(res.GroupResource(), name))
	}
	cm, _ := meta.Accessor(cur)
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != cm.GetUID() {
			return fail(apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, cm.GetUID())))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != cm.GetResourceVersion() {
			return fail(apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, cm.GetResourceVersion())))
		}
	}
	if c.refuse != nil {
		if err := c.refuse("delete", res, cur); err != nil {
			return fail(err)
		}
	}
	policy := metav1.DeletePropagationBackground
	if res.GVR.Group == "batch" && res.GVR.Resource == "jobs" {
		policy = metav1.DeletePropagationOrphan
	}
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	} else if opts.OrphanDependents != nil && *opts.OrphanDependents {
		policy = metav1.DeletePropagationOrphan
	}
	finalizers := without(cm.GetFinalizers(), "")
	switch policy {
	case metav1.DeletePropagationOrphan:
		finalizers = with(without(finalizers, metav1.FinalizerDeleteDependents), metav1.FinalizerOrphanDependents)
	case metav1.DeletePropagationForeground:
		finalizers = with(without(finalizers, metav1.FinalizerOrphanDependents), metav1.FinalizerDeleteDependents)
	}
	obj := cur.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	c.rev++
	m.SetResourceVersion(strconv.FormatInt(c.rev, 10))
	c.actions = append(c.actions, act)
	if len(finalizers) > 0 {
		if m.GetDeletionTimestamp() == nil {
			now := metav1.NewTime(c.clock.Now())
			m.SetDeletionTimestamp(&now)
			zero := int64(0)
			m.SetDeletionGracePeriodSeconds(&zero)
		}
		m.SetFinalizers(finalizers)
		c.objects[k] = obj
		c.changed(res, watch.Modified, obj)
		return &registry.DeleteResult{Object: obj.DeepCopyObject()}, nil
	}
	delete(c.objects, k)
	c.changed(res, watch.Deleted, obj)
	return &registry.DeleteResult{Object: obj.DeepCopyObject(), Deleted: true}, nil
}

func with(fs []string, f string) []string {
	for _, x := range fs {
		if x == f {
			return fs
		}
	}
	return append(fs, f)
}

func without(fs []string, f string) []string {
	out := []string{}
	for _, x := range fs {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// LoseDeletion deletes the object of gvr named ns/name as a deletion whose event every
// watcher missed: the running watches end, and resuming one from a revision before the
// deletion fails as compacted (410 Expired), so a watcher must start over from the
// current objects (what an informer's relist is for).
func (c *Client) LoseDeletion(gvr schema.GroupVersionResource, ns, name string) {
	res := c.cat.Get(gvr)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, key(res, ns, name))
	c.rev++
	c.compacted = c.rev
	c.epoch++
	c.cond.Broadcast()
}

// changed records a change (c.mu held) and wakes the watches.
func (c *Client) changed(res *registry.Resource, typ watch.EventType, obj runtime.Object) {
	c.changes = append(c.changes, Change{Res: res, Type: typ, Object: obj.DeepCopyObject()})
	c.cond.Broadcast()
}

// Watch implements controller.Client: the objects of res in ns as ADDED events, then
// every change after them, until ctx ends.
func (c *Client) Watch(ctx context.Context, res *registry.Resource, ns string, opts registry.WatchOptions) (<-chan registry.Event, error) {
	c.mu.Lock()
	if rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64); err == nil && rv > 0 && rv < c.compacted {
		c.mu.Unlock()
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, c.compacted))
	}
	initial := c.list(res, ns)
	from, rev, epoch := len(c.changes), c.rev, c.epoch
	c.mu.Unlock()
	out := make(chan registry.Event)
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	p := prefix(res, ns)
	go func() {
		defer stop()
		defer close(out)
		send := func(e registry.Event) bool {
			select {
			case out <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for _, o := range initial {
			if !send(registry.Event{Type: watch.Added, Object: o, Initial: true}) {
				return
			}
		}
		if opts.SendInitialEvents && opts.Bookmarks {
			// The end of the initial events, at the revision they were read at (as the
			// registry's watch).
			b := &metav1.PartialObjectMetadata{}
			b.ResourceVersion = strconv.FormatInt(rev, 10)
			b.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
			if !send(registry.Event{Type: watch.Bookmark, Object: b, Initial: true}) {
				return
			}
		}
		for {
			c.mu.Lock()
			for from == len(c.changes) && ctx.Err() == nil && c.epoch == epoch {
				c.cond.Wait()
			}
			if ctx.Err() != nil || c.epoch != epoch {
				c.mu.Unlock()
				return
			}
			batch := append([]Change(nil), c.changes[from:]...)
			from = len(c.changes)
			c.mu.Unlock()
			for _, ch := range batch {
				m, _ := meta.Accessor(ch.Object)
				if !inPrefix(key(ch.Res, m.GetNamespace(), m.GetName()), p) {
					if opts.Bookmarks {
						// Progress: the watch is past this change (the registry's watch
						// tells of revisions without events of its resource likewise).
						b := &metav1.PartialObjectMetadata{}
						b.ResourceVersion = m.GetResourceVersion()
						if !send(registry.Event{Type: watch.Bookmark, Object: b}) {
							return
						}
					}
					continue
				}
				if !send(registry.Event{Type: ch.Type, Object: ch.Object.DeepCopyObject()}) {
					return
				}
			}
		}
	}()
	return out, nil
}

func inPrefix(k, p string) bool { return len(k) > len(p) && k[:len(p)] == p }
