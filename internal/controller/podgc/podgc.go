package podgc

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's periods.
const (
	// DefaultCheckPeriod is how often the collector runs (gcCheckPeriod).
	DefaultCheckPeriod = 20 * time.Second
	// DefaultQuarantine is how long a node must be missing before its pods are
	// collected (quarantineTime).
	DefaultQuarantine = 40 * time.Second
	// DefaultTerminatedPodThreshold is --terminated-pod-gc-threshold's default.
	DefaultTerminatedPodThreshold = 12500
)

// Options configure the collector; zero values are upstream's defaults except
// TerminatedPodThreshold, whose zero (or negative) value turns the terminated pass off,
// as the flag's does.
type Options struct {
	TerminatedPodThreshold int
	CheckPeriod            time.Duration
	Quarantine             time.Duration
	// Clock drives the check period and the quarantine (nil: the real clock).
	Clock  clock.WithTicker
	Panics controller.PanicObserver
	// Pods, when set, is the index of pods shared with the other controllers watching
	// every pod (it must then run once the collector has started: SharedPods.Run); nil:
	// an index of its own, watched from Start.
	Pods *controller.SharedPods
}

// Controller is the pod garbage collector.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	opts  Options
	// cache holds a view (controller.PodView) of every collectable pod, as
	// upstream's collector reads its informer: a pass decodes no pod. A watch that starts
	// over delivers the deletions it missed, so removed never keeps a UID for good.
	cache *controller.PodSub
	// mu guards removed: the UIDs of the pods the collector removed that its cache still
	// holds (upstream's expectations). A pass that ran before the cache saw a removal would
	// count that pod again: a pod it had just failed and removed as an orphan would be a
	// terminated pod over the threshold, and a live terminated pod would go in its place.
	mu      sync.Mutex
	removed map[types.UID]bool
	// quarantine holds each missing node's name and when its quarantine ends. Only the
	// collector's goroutine uses it.
	quarantine map[string]time.Time
}

// New returns the collector.
func New(store controller.Client, log *slog.Logger, opts Options) *Controller {
	if log == nil {
		log = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.CheckPeriod <= 0 {
		opts.CheckPeriod = DefaultCheckPeriod
	}
	if opts.Quarantine <= 0 {
		opts.Quarantine = DefaultQuarantine
	}
	return &Controller{store: store, log: log, opts: opts, quarantine: map[string]time.Time{}, removed: map[types.UID]bool{},
		cache: opts.Pods.Sub(collectable), loop: controller.NewLoop("podgc", store, log, opts.Panics, opts.Clock)}
}

func (c *Controller) pods() *registry.Resource {
	return c.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
}

func (c *Controller) nodes() *registry.Resource {
	return c.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("nodes"))
}

// Start collects at once and then every check period until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.cache.Start(ctx, c.loop, controller.On(c.forgetRemoved))
	t := c.opts.Clock.NewTicker(c.opts.CheckPeriod)
	defer t.Stop()
	for {
		c.loop.Guard("gc", func() { c.GC(ctx) })
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// PodChanged records a pod event in the collector's cache, as its watch does.
func (c *Controller) PodChanged(p *corev1.Pod, deleted bool) {
	c.cache.Apply(p, deleted)
	c.forgetRemoved(p, deleted)
}

// forgetRemoved stops expecting the removal of a pod the cache has seen go.
func (c *Controller) forgetRemoved(p *corev1.Pod, deleted bool) {
	if deleted {
		c.mu.Lock()
		delete(c.removed, p.UID)
		c.mu.Unlock()
	}
}

// GC runs one pass of the collector (upstream's gc): the terminated, out-of-service,
// orphaned and unscheduled terminating passes, in that order, on the nodes read from
// storage now and the pods of the cache that a pass may act on (terminated, terminating,
// or bound to a node not listed). A pod gone since the cache saw it is no error.
func (c *Controller) GC(ctx context.Context) {
	nobjs, _, err := c.store.ListObjects(ctx, c.nodes(), "")
	if err != nil {
		c.log.Error("podgc: listing nodes", "err", err)
		return
	}
	nodes := map[string]*corev1.Node{}
	for _, n := range typed[*corev1.Node](nobjs) {
		nodes[n.Name] = n
	}
	var pods []*corev1.Pod
	c.mu.Lock()
	removed := maps.Clone(c.removed)
	c.mu.Unlock()
	// Every pod held is read, in place; the few collectable now are made into pods, in
	// namespace and name order.
	var found []*controller.PodView
	c.cache.Each(func(o runtime.Object) {
		v, ok := o.(*controller.PodView)
		if ok && !removed[v.UID] && (isTerminatedPhase(v.Phase) || v.DeletionTimestamp != nil || (v.NodeName != "" && nodes[v.NodeName] == nil)) {
			found = append(found, v)
		}
	})
	slices.SortFunc(found, func(a, b *controller.PodView) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, v := range found {
		pods = append(pods, v.Pod())
	}
	if c.opts.TerminatedPodThreshold > 0 {
		c.gcTerminated(ctx, pods)
	}
	c.gcTerminating(ctx, pods, nodes)
	c.gcOrphaned(ctx, pods, nodes)
	c.gcUnscheduledTerminating(ctx, pods)
}

// collectable is the pods the GC may ever collect as they are: bound (their node may go),
// deleting, or terminated. The cache keeps only those; a pod becomes one by a change its
// event brings.
var collectable = controller.PodFilter{Bound: true, Finishing: true}

func typed[T runtime.Object](objs []runtime.Object) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// isTerminated is upstream's isPodTerminated: a phase other than Pending, Running and
// Unknown (an empty phase included).
func isTerminated(p *corev1.Pod) bool {
	return isTerminatedPhase(p.Status.Phase)
}

var isTerminatedPhase = controller.TerminatedPhase

// gcTerminated deletes the terminated pods beyond the threshold: evicted first, then the
// oldest.
func (c *Controller) gcTerminated(ctx context.Context, pods []*corev1.Pod) {
	var terminated []*corev1.Pod
	for _, p := range pods {
		if isTerminated(p) {
			terminated = append(terminated, p)
		}
	}
	n := len(terminated) - c.opts.TerminatedPodThreshold
	if n <= 0 {
		return
	}
	c.log.Info("Garbage collecting pods", "numPods", n)
	sortByEvictionAndCreation(terminated)
	for _, p := range terminated[:n] {
		c.forceDelete(ctx, p, nil, "terminated")
	}
}

// gcTerminating deletes terminating pods on nodes that are not Ready and carry the
// out-of-service taint.
func (c *Controller) gcTerminating(ctx context.Context, pods []*corev1.Pod, nodes map[string]*corev1.Node) {
	var terminating []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		node := nodes[p.Spec.NodeName]
		if node == nil {
			c.log.Debug("podgc: failed to get node", "node", p.Spec.NodeName)
			continue
		}
		if !nodeReady(node) && hasTaintKey(node.Spec.Taints, corev1.TaintNodeOutOfService) {
			terminating = append(terminating, p)
		}
	}
	if len(terminating) == 0 {
		return
	}
	sortByEvictionAndCreation(terminating)
	for _, p := range terminating {
		c.forceDelete(ctx, p, nil, "terminating on an out-of-service node")
	}
}

// gcOrphaned deletes the pods of nodes missing for the quarantine time and confirmed
// gone by a read.
func (c *Controller) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes map[string]*corev1.Node) {
	now := c.opts.Clock.Now()
	// 1. Newly missing nodes enter quarantine (a node already there keeps its end).
	for _, p := range pods {
		if n := p.Spec.NodeName; n != "" && nodes[n] == nil {
			if _, ok := c.quarantine[n]; !ok {
				c.quarantine[n] = now.Add(c.opts.Quarantine)
			}
		}
	}
	// 2. Nodes whose quarantine ended leave it; those still missing are read: gone only
	// when the read finds nothing (an error leaves the node to a later pass).
	deleted := map[string]bool{}
	for name, end := range c.quarantine {
		if now.Before(end) {
			continue
		}
		delete(c.quarantine, name)
		if nodes[name] != nil {
			continue
		}
		_, err := c.store.Get(ctx, c.nodes(), "", name)
		switch {
		case apierrors.IsNotFound(err):
			deleted[name] = true
		case err != nil:
			c.log.Error("podgc: error while getting node", "node", name, "err", err)
		}
	}
	// 3. Their pods are marked and deleted.
	for _, p := range pods {
		if !deleted[p.Spec.NodeName] {
			continue
		}
		c.log.Info("Found orphaned Pod assigned to the Node, deleting", "pod", p.Namespace+"/"+p.Name, "node", p.Spec.NodeName)
		cond := &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
		c.forceDelete(ctx, p, cond, "orphaned")
	}
}

// gcUnscheduledTerminating deletes terminating pods bound to no node.
func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) {
	for _, p := range pods {
		if p.DeletionTimestamp == nil || p.Spec.NodeName != "" {
			continue
		}
		c.forceDelete(ctx, p, nil, "unscheduled terminating")
	}
}

// forceDelete is upstream's markFailedAndDeletePodWithCondition: a pod not yet Succeeded
// or Failed is written Failed (with cond, when set), status and condition observing its
// generation, through /status, guarded by its UID;
// then it is deleted with grace 0. Errors are logged; a pod already gone is not one.
func (c *Controller) forceDelete(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition, why string) {
	c.log.Info("PodGC is force deleting Pod", "pod", p.Namespace+"/"+p.Name, "reason", why)
	err := c.markFailed(ctx, p, cond)
	if err == nil {
		_, err = c.store.Delete(ctx, c.pods(), p.Namespace, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, registry.WriteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		c.log.Error("podgc: failed to delete pod", "pod", p.Namespace+"/"+p.Name, "reason", why, "err", err)
		return
	}
	if v, ok := c.cache.Get(p.Namespace, p.Name).(*controller.PodView); ok && v.UID == p.UID {
		c.mu.Lock()
		c.removed[p.UID] = true
		c.mu.Unlock()
	}
}

// markFailed writes the pod Failed, with cond, unless it already is terminal.
func (c *Controller) markFailed(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition) error {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	_, err := c.store.Update(ctx, c.pods(), p.Namespace, p.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
		pod, err := controller.As[*corev1.Pod](cur)
		if err != nil {
			return nil, err
		}
		if pod.UID != p.UID {
			return nil, apierrors.NewConflict(c.pods().GroupResource(), p.Name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", p.UID, pod.UID))
		}
		pod = pod.DeepCopy()
		pod.Status.Phase = corev1.PodFailed
		// The status and the condition observe the pod's generation (upstream's
		// PodObservedGenerationTracking, GA and locked on since v1.35).
		pod.Status.ObservedGeneration = pod.Generation
		if cond != nil {
			cond := *cond
			cond.ObservedGeneration = pod.Generation
			setCondition(&pod.Status, cond, metav1.NewTime(c.opts.Clock.Now()))
		}
		return pod, nil
	}, registry.WriteOptions{})
	return err
}

// setCondition is upstream's UpdatePodCondition: the condition replaces the one of its
// type, keeping its transition time unless its status changes.
func setCondition(st *corev1.PodStatus, cond corev1.PodCondition, now metav1.Time) {
	cond.LastTransitionTime = now
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		*old = cond
		return
	}
	st.Conditions = append(st.Conditions, cond)
}

// sortByEvictionAndCreation orders evicted pods (Failed, reason Evicted) first, then by
// creation time, then by name.
func sortByEvictionAndCreation(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if ea, eb := evicted(a), evicted(b); ea != eb {
			return ea
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

func evicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"
}

// nodeReady reports the node's Ready condition True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaintKey(taints []corev1.Taint, key string) bool {
	for _, t := range taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
