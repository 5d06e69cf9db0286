package endpointslice

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Resources the endpoints controllers read and write.
var (
	ServicesGVR = corev1.SchemeGroupVersion.WithResource("services")
	PodsGVR     = corev1.SchemeGroupVersion.WithResource("pods")
	NodesGVR    = corev1.SchemeGroupVersion.WithResource("nodes")
	SlicesGVR   = discovery.SchemeGroupVersion.WithResource("endpointslices")
)

// Watcher is what both endpoints controllers watch: Services and Pods in indexes (a
// relist delivers the deletions it finds), each pod change turned into the keys ("ns/name")
// of the Services that select it before or after.
type Watcher struct {
	Services *controller.Index
	Pods     *controller.PodSub
	// q receives the keys of the Services to sync (set by Watch).
	q workqueue.TypedRateLimitingInterface[string]
}

// NewWatcher returns an empty index of Services and a subscription to pods (nil pods: an
// index of its own).
func NewWatcher(pods *controller.SharedPods) *Watcher {
	// A pod without labels is selected by no Service: none is kept.
	w := &Watcher{Services: controller.NewIndex(nil), Pods: pods.Sub(controller.PodFilter{Labelled: true})}
	w.Pods.OnChange(func(old, cur runtime.Object, deleted bool) {
		if w.q == nil {
			return
		}
		for _, k := range w.selecting(old, cur) {
			w.q.Add(k)
		}
	})
	return w
}

// Watch starts the watches of Services and Pods, feeding q the keys of the Services to
// sync.
func (w *Watcher) Watch(ctx context.Context, loop *controller.Loop, cat *registry.Catalogue, q workqueue.TypedRateLimitingInterface[string]) {
	w.q = q // before the watches start: the pods' OnChange queues their Services
	go loop.WatchIndex(ctx, cat.Get(ServicesGVR), w.Services, controller.On(func(s *corev1.Service, _ bool) {
		q.Add(s.Namespace + "/" + s.Name)
	}))
	w.Pods.Start(ctx, loop, nil)
}

// PodsOf returns the cached pods svc selects (made of their views: read-only), as
// kube-controller-manager's endpoints controllers read their pod informer. The index is
// fed before a pod event queues its Services, so a sync sees the pod at least as new as
// the event that queued it.
func (w *Watcher) PodsOf(svc *corev1.Service) []*corev1.Pod {
	var out []*corev1.Pod
	// The labels are matched on the views; only the selected pods are made, in name order.
	w.Pods.Range(svc.Namespace, func(o runtime.Object) {
		if v, ok := o.(*controller.PodView); ok && selectsLabels(svc, v.Namespace, v.Labels) {
			out = append(out, v.Pod())
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PodChanged records a pod event as the watch would deliver it and returns the keys of
// the Services selecting it now or before.
func (w *Watcher) PodChanged(pod *corev1.Pod, deleted bool) []string {
	old := w.Pods.Get(pod.Namespace, pod.Name)
	w.Pods.Apply(pod, deleted)
	cur := w.Pods.Get(pod.Namespace, pod.Name)
	if cur == nil {
		cur = controller.ViewOf(pod)
	}
	return w.selecting(old, cur)
}

// selecting returns the keys of the managed Services of the pod's namespace that select
// its view before (old) or now (cur; nil when the index no longer keeps the pod, its
// labels gone).
func (w *Watcher) selecting(old, cur runtime.Object) []string {
	prev, _ := old.(*controller.PodView)
	v, _ := cur.(*controller.PodView)
	ns := ""
	switch {
	case v != nil:
		ns = v.Namespace
	case prev != nil:
		ns = prev.Namespace
	default:
		return nil
	}
	var keys []string
	w.Services.Range(ns, func(o runtime.Object) {
		svc, ok := o.(*corev1.Service)
		if !ok || !Managed(svc) {
			return
		}
		if (v != nil && selectsLabels(svc, v.Namespace, v.Labels)) || (prev != nil && selectsLabels(svc, prev.Namespace, prev.Labels)) {
			keys = append(keys, svc.Namespace+"/"+svc.Name)
		}
	})
	return keys
}

// Options configures the controller.
type Options struct {
	// MaxEndpointsPerSlice is --max-endpoints-per-slice (0: 100).
	MaxEndpointsPerSlice int
	// Pods, when set, is the index of pods shared with the other controllers watching
	// every pod (it must then run once the controller has started: SharedPods.Run); nil:
	// an index of its own, watched from Start.
	Pods   *controller.SharedPods
	Panics controller.PanicObserver
	Log    *slog.Logger
}

// Controller is the EndpointSlice controller.
type Controller struct {
	store controller.Client
	opts  Options
	log   *slog.Logger
	loop  *controller.Loop
	w     *Watcher
	nodes *controller.Index
	// slices holds the EndpointSlices this controller manages, indexed by controller (the
	// Service; "" for orphans labelled with a Service's name); writes holds each Service's
	// last slice write, which its next sync waits for.
	slices *controller.Index
	writes controller.Revisions
}

// New returns the controller.
func New(store controller.Client, opts Options) *Controller {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.MaxEndpointsPerSlice <= 0 {
		opts.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	return &Controller{store: store, opts: opts, log: opts.Log, loop: controller.NewLoop("endpointslice", store, opts.Log, opts.Panics, nil),
		w: NewWatcher(opts.Pods), nodes: controller.NewIndex(nil),
		slices: sliceIndex()}
}

func (c *Controller) res(gvr schema.GroupVersionResource) *registry.Resource {
	return c.store.Catalogue().Get(gvr)
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("endpoint_slice")
	c.Watch(ctx, q)
	c.loop.Process(ctx, q, 4, func(ctx context.Context, key string) (time.Duration, error) {
		return 0, c.Sync(ctx, key)
	})
	return nil
}

// Watch starts the watches feeding q.
func (c *Controller) Watch(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) {
	c.w.Watch(ctx, c.loop, c.store.Catalogue(), q)
	go c.loop.WatchIndex(ctx, c.res(NodesGVR), c.nodes, nil)
	go c.loop.WatchIndex(ctx, c.res(SlicesGVR), c.slices, controller.On(func(s *discovery.EndpointSlice, _ bool) {
		if s.Labels[discovery.LabelManagedBy] == ControllerName && s.Labels[discovery.LabelServiceName] != "" {
			q.Add(s.Namespace + "/" + s.Labels[discovery.LabelServiceName])
		}
	}))
}

// node returns a node from the cache, else from storage; nil when there is none.
func (c *Controller) node(ctx context.Context) NodeFunc {
	return func(name string) *corev1.Node {
		if n, ok := c.nodes.Get("", name).(*corev1.Node); ok {
			return n
		}
		o, err := c.store.Get(ctx, c.res(NodesGVR), "", name)
		if err != nil {
			return nil
		}
		n, _ := o.(*corev1.Node)
		return n
	}
}

// Sync reconciles the slices of one Service ("ns/name"), reading the Service and its slices
// from storage and its pods from the watcher's cache.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	obj, err := c.store.Get(ctx, c.res(ServicesGVR), ns, name)
	if apierrors.IsNotFound(err) {
		c.writes.Forget(key)
		return nil // its slices go with it (owner references)
	}
	if err != nil {
		return err
	}
	svc, err := controller.As[*corev1.Service](obj)
	if err != nil {
		return err
	}
	if !Managed(svc) {
		return nil
	}
	pods := c.w.PodsOf(svc)
	// Its slices, from the index once it holds the slices this Service's earlier syncs
	// wrote (so a slice is never created twice): those it owns, and the orphans labelled
	// for it. They are shared with the index: Reconcile copies what it changes.
	if err := c.writes.Await(ctx, c.slices, key); err != nil {
		return err
	}
	var slices []*discovery.EndpointSlice
	for _, owner := range []types.UID{svc.UID, ""} {
		for _, o := range c.slices.Controlled(ns, owner) {
			if s, ok := o.(*discovery.EndpointSlice); ok && s.Labels[discovery.LabelServiceName] == svc.Name {
				slices = append(slices, s)
			}
		}
	}
	plan, rerr := Reconcile(svc, pods, c.node(ctx), slices, c.opts.MaxEndpointsPerSlice)
	if err := c.apply(ctx, c.writes.Tracked(c.store, c.res(SlicesGVR), key), svc, plan); err != nil {
		return err
	}
	return rerr
}

// sliceIndex returns an empty index of the EndpointSlices this controller manages.
func sliceIndex() *controller.Index {
	return controller.NewIndex(func(o runtime.Object) runtime.Object {
		if s, ok := o.(*discovery.EndpointSlice); ok && s.Labels[discovery.LabelManagedBy] == ControllerName && s.Labels[discovery.LabelServiceName] != "" {
			return s
		}
		return nil
	})
}

// apply writes a plan: creates (unless the Service is being deleted), updates, deletes.
func (c *Controller) apply(ctx context.Context, store controller.Client, svc *corev1.Service, plan Plan) error {
	res := c.res(SlicesGVR)
	if svc.DeletionTimestamp == nil {
		for _, s := range plan.Create {
			if _, err := store.Create(ctx, res, svc.Namespace, s, registry.WriteOptions{}); err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Service %s/%s: %v", svc.Namespace, svc.Name, err)
			}
		}
	}
	for _, s := range plan.Update {
		want := s
		_, err := store.Update(ctx, res, svc.Namespace, s.Name, "", func(cur runtime.Object) (runtime.Object, error) {
			have, err := controller.As[*discovery.EndpointSlice](cur)
			if err != nil {
				return nil, err
			}
			if want.ResourceVersion != "" && have.ResourceVersion != want.ResourceVersion {
				return nil, apierrors.NewConflict(res.GroupResource(), want.Name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
			}
			out := have.DeepCopy()
			out.Labels, out.OwnerReferences = want.Labels, want.OwnerReferences
			out.AddressType, out.Ports, out.Endpoints = want.AddressType, want.Ports, want.Endpoints
			return out, nil
		}, registry.WriteOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
	}
	for _, s := range plan.Delete {
		uid := s.UID
		_, err := store.Delete(ctx, res, svc.Namespace, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
	}
	return nil
}
