package tainteviction

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/registry"
)

// Component is the controller's name and its events' source component, as upstream's.
const Component = "taint-eviction-controller"

// retries is how many times an eviction's delete is tried (upstream's).
const retries = 5

// Options configures the controller.
type Options struct {
	// Clock is the one clock (nil: the real clock).
	Clock  clock.WithDelayedExecution
	Panics controller.PanicObserver
	Log    *slog.Logger
	// Pods, when set, is the index of pods shared with the other controllers watching
	// every pod (it must then run once the controller has started: SharedPods.Run); nil:
	// an index of its own, watched from Start.
	Pods *controller.SharedPods
	// Evicted, when set, is called after each eviction's delete with the pod's
	// "namespace/name" and the delete's error (tests wait on it).
	Evicted func(key string, err error)
}

// work is one pod's scheduled eviction.
type work struct {
	created time.Time
	fire    time.Time
	timer   clock.Timer // nil once fired
	done    bool
}

// Controller is the taint eviction controller.
type Controller struct {
	store controller.Client
	clock clock.WithDelayedExecution
	log   *slog.Logger
	loop  *controller.Loop
	rec   *record.Recorder
	opts  Options

	// nodes and pods (views) as the watches last delivered them (a relist delivers the
	// deletions it finds); podsOn indexes the pods by node. Pods that need a look are
	// queued on q (set by Start).
	nodes  *controller.Index
	pods   *controller.PodSub
	podsOn controller.PodsByNode
	q      workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	taints  map[string][]corev1.Taint // node → its NoExecute taints (nodes without none absent)
	nodeSet map[string]bool           // nodes seen
	works   map[string]*work
}

// New returns the controller.
func New(store controller.Client, opts Options) *Controller {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	c := &Controller{store: store, clock: opts.Clock, log: opts.Log, opts: opts,
		loop:   controller.NewLoop(Component, store, opts.Log, opts.Panics, opts.Clock),
		rec:    record.NewRecorder(store, Component, opts.Clock, opts.Log),
		nodes:  controller.NewIndex(nil),
		pods:   opts.Pods.Sub(controller.PodFilter{Bound: true}), // pods bound to a node only
		taints: map[string][]corev1.Taint{}, nodeSet: map[string]bool{}, works: map[string]*work{}}
	c.pods.OnChange(func(old, cur runtime.Object, deleted bool) {
		key, _, _ := c.podsOn.Changed(old, cur, deleted)
		if key != "" && needsLook(old, cur, deleted) && c.q != nil {
			c.q.Add("pod/" + key)
		}
	})
	return c
}

var (
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
)

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := controller.NewQueue("noexec_taint")
	c.q = q // before the watches start: their OnChange queues what needs a look
	go c.loop.WatchIndex(ctx, c.store.Catalogue().Get(nodesGVR), c.nodes, controller.On(func(n *corev1.Node, deleted bool) {
		if c.NodeChanged(n, deleted) {
			q.Add("node/" + n.Name)
		}
	}))
	c.pods.Start(ctx, c.loop, nil)
	c.loop.Process(ctx, q, 4, func(ctx context.Context, key string) (time.Duration, error) {
		if name, ok := strings.CutPrefix(key, "node/"); ok {
			c.HandleNode(ctx, name)
		} else if k, ok := strings.CutPrefix(key, "pod/"); ok {
			c.HandlePod(ctx, k)
		}
		return 0, nil
	})
	c.mu.Lock()
	for _, w := range c.works {
		if w.timer != nil {
			w.timer.Stop()
		}
	}
	c.mu.Unlock()
	return nil
}

// noExecute returns the NoExecute taints of taints.
func noExecute(taints []corev1.Taint) []corev1.Taint {
	out := []corev1.Taint{}
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// NodeChanged records a node event; it reports whether the node's NoExecute taints
// changed (or it is new or gone), when its pods must be looked at again.
func (c *Controller) NodeChanged(n *corev1.Node, deleted bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.nodeSet[n.Name]
	old := c.taints[n.Name]
	if deleted {
		delete(c.nodeSet, n.Name)
		delete(c.taints, n.Name)
		return true
	}
	c.nodeSet[n.Name] = true
	nt := noExecute(n.Spec.Taints)
	if len(nt) == 0 {
		delete(c.taints, n.Name)
	} else {
		c.taints[n.Name] = nt
	}
	if seen && equality.Semantic.DeepEqual(noExecuteOrEmpty(old), nt) {
		return false
	}
	return true
}

func noExecuteOrEmpty(t []corev1.Taint) []corev1.Taint {
	if t == nil {
		return []corev1.Taint{}
	}
	return t
}

// PodChanged records a pod event as the watch would deliver it; it reports whether the
// pod needs a look (needsLook).
func (c *Controller) PodChanged(p *corev1.Pod, deleted bool) bool {
	old := c.pods.Get(p.Namespace, p.Name)
	c.pods.Apply(p, deleted)
	cur := c.pods.Get(p.Namespace, p.Name)
	if deleted || cur == nil {
		cur = c.opts.Pods.Views().View(p)
	}
	return needsLook(old, cur, deleted)
}

// needsLook reports whether a change of the pods index (the views held before and now)
// makes a pod new, gone, or changes its node or tolerations (upstream's PodUpdated).
func needsLook(old, cur runtime.Object, deleted bool) bool {
	prev, _ := old.(*controller.PodView)
	v, _ := cur.(*controller.PodView)
	return prev == nil || v == nil || deleted || prev.NodeName != v.NodeName ||
		!equality.Semantic.DeepEqual(prev.Tolerations, v.Tolerations)
}

// HandleNode is upstream's handleNodeUpdate: every pod of the node is looked at against
// its NoExecute taints, or has its eviction cancelled when there are none.
func (c *Controller) HandleNode(ctx context.Context, name string) {
	c.mu.Lock()
	taints := c.taints[name]
	c.mu.Unlock()
	keys := c.podsOn.Keys(name)
	if len(keys) == 0 {
		return
	}
	if len(taints) == 0 {
		for _, k := range keys {
			c.cancel(ctx, k)
		}
		return
	}
	now := c.clock.Now()
	for _, k := range keys {
		ns, n, _ := strings.Cut(k, "/")
		pod, ok := c.pods.Get(ns, n).(*controller.PodView)
		if !ok {
			continue
		}
		c.processPod(ctx, k, pod.Tolerations, taints, now)
	}
}

// HandlePod is upstream's handlePodUpdate.
func (c *Controller) HandlePod(ctx context.Context, key string) {
	ns, name, _ := strings.Cut(key, "/")
	// The cache's view is read as it is (no pod is built of it for every event).
	var node string
	var tolerations []corev1.Toleration
	switch p := c.pods.Get(ns, name).(type) {
	case *controller.PodView:
		node, tolerations = p.NodeName, p.Tolerations
	case *corev1.Pod:
		node, tolerations = p.Spec.NodeName, p.Spec.Tolerations
	default:
		c.cancel(ctx, key)
		return
	}
	if node == "" {
		return
	}
	c.mu.Lock()
	taints, ok := c.taints[node]
	c.mu.Unlock()
	if !ok {
		return
	}
	c.processPod(ctx, key, tolerations, taints, c.clock.Now())
}

// matchingTolerations is upstream's GetMatchingTolerations: whether every taint is
// tolerated, and the toleration used for each.
func matchingTolerations(taints []corev1.Taint, tolerations []corev1.Toleration) (bool, []corev1.Toleration) {
	if len(taints) == 0 {
		return true, []corev1.Toleration{}
	}
	if len(tolerations) == 0 {
		return false, []corev1.Toleration{}
	}
	var used []corev1.Toleration
	for i := range taints {
		tolerated := false
		for j := range tolerations {
			if tolerates(&tolerations[j], &taints[i]) {
				used = append(used, tolerations[j])
				tolerated = true
				break
			}
		}
		if !tolerated {
			return false, []corev1.Toleration{}
		}
	}
	return true, used
}

// tolerates is Toleration.ToleratesTaint with the alpha comparison operators off: the
// effect (when set) and key (when set) match, and Exists, or Equal with the same value.
func tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

// minTolerationTime is upstream's getMinTolerationTime: 0 for none or any non-positive
// tolerationSeconds, -1 for forever, else the least.
func minTolerationTime(tolerations []corev1.Toleration) time.Duration {
	if len(tolerations) == 0 {
		return 0
	}
	min := int64(math.MaxInt64)
	for _, t := range tolerations {
		if t.TolerationSeconds != nil {
			s := *t.TolerationSeconds
			if s <= 0 {
				return 0
			}
			if s < min {
				min = s
			}
		}
	}
	if min == int64(math.MaxInt64) {
		return -1
	}
	return time.Duration(min) * time.Second
}

// processPod is upstream's processPodOnNode.
func (c *Controller) processPod(ctx context.Context, key string, tolerations []corev1.Toleration, taints []corev1.Taint, now time.Time) {
	if len(taints) == 0 {
		c.cancel(ctx, key)
	}
	all, used := matchingTolerations(taints, tolerations)
	if !all {
		c.cancel(ctx, key)
		c.add(ctx, key, now, now)
		return
	}
	min := minTolerationTime(used)
	if min < 0 {
		c.cancel(ctx, key)
		return
	}
	start := now
	trigger := start.Add(min)
	c.mu.Lock()
	w := c.works[key]
	c.mu.Unlock()
	if w != nil {
		start = w.created
		if start.Add(min).Before(trigger) {
			return
		}
		c.cancel(ctx, key)
	}
	c.add(ctx, key, start, trigger)
}

// add schedules key's eviction at fire (at once when that has come), unless one exists.
func (c *Controller) add(ctx context.Context, key string, created, fire time.Time) {
	c.mu.Lock()
	if _, ok := c.works[key]; ok {
		c.mu.Unlock()
		return
	}
	w := &work{created: created, fire: fire}
	c.works[key] = w
	delay := fire.Sub(c.clock.Now())
	if delay > 0 {
		w.timer = c.clock.AfterFunc(delay, func() {
			// Its own goroutine: a fake clock calls this holding its lock.
			go c.loop.Guard("evict "+key, func() { c.evict(ctx, key, w) })
		})
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.evict(ctx, key, w)
}

// cancel drops key's scheduled eviction, with an event when one was pending.
func (c *Controller) cancel(ctx context.Context, key string) {
	c.mu.Lock()
	w, ok := c.works[key]
	pending := ok && !w.done
	if ok {
		if w.timer != nil {
			w.timer.Stop()
		}
		delete(c.works, key)
	}
	c.mu.Unlock()
	if pending {
		c.podEvent(ctx, key, "Cancelling deletion of Pod %s")
	}
}

// Pending returns the pods ("ns/name") whose eviction is scheduled and not yet done, with
// when it fires.
func (c *Controller) Pending() map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]time.Time{}
	for k, w := range c.works {
		if !w.done {
			out[k] = w.fire
		}
	}
	return out
}

func (c *Controller) podEvent(ctx context.Context, key, format string) {
	ns, name, _ := strings.Cut(key, "/")
	c.rec.EventRef(ctx, corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name},
		corev1.EventTypeNormal, "TaintManagerEviction", fmt.Sprintf(format, key))
}

// evict is upstream's deletePodHandler: an event, the DisruptionTarget condition, the
// delete; retried a few times. A done eviction stays recorded (not scheduled again) until
// cancelled; a failed one is forgotten.
func (c *Controller) evict(ctx context.Context, key string, w *work) {
	c.mu.Lock()
	if c.works[key] != w {
		c.mu.Unlock()
		return // cancelled meanwhile
	}
	c.mu.Unlock()
	c.log.Info("Deleting pod", "controller", Component, "pod", key)
	c.podEvent(ctx, key, "Marking for deletion Pod %s")
	var err error
	for i := 0; i < retries && ctx.Err() == nil; i++ {
		if err = c.conditionAndDelete(ctx, key); err == nil {
			break
		}
	}
	c.mu.Lock()
	if c.works[key] == w {
		if err == nil {
			w.done, w.timer = true, nil
		} else {
			delete(c.works, key)
		}
	}
	c.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		c.log.Warn("failed to evict pod", "controller", Component, "pod", key, "err", err)
	}
	if c.opts.Evicted != nil {
		c.opts.Evicted(key, err)
	}
}

// errUnchanged stops a status update that would change nothing.
var errUnchanged = fmt.Errorf("unchanged")

// conditionAndDelete is upstream's addConditionAndDeletePod.
func (c *Controller) conditionAndDelete(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	res := c.store.Catalogue().Get(podsGVR)
	obj, err := c.store.Get(ctx, res, ns, name)
	if err != nil {
		return err
	}
	pod, err := controller.As[*corev1.Pod](obj)
	if err != nil {
		return err
	}
	_, err = c.store.Update(ctx, res, ns, name, "status", func(cur runtime.Object) (runtime.Object, error) {
		p, err := controller.As[*corev1.Pod](cur)
		if err != nil {
			return nil, err
		}
		if p.UID != pod.UID {
			return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", pod.UID, p.UID))
		}
		if !setDisruptionTarget(p, c.clock.Now()) {
			return nil, errUnchanged
		}
		return p, nil
	}, registry.WriteOptions{})
	if err != nil && err != errUnchanged {
		return err
	}
	_, err = c.store.Delete(ctx, res, ns, name, metav1.DeleteOptions{}, registry.WriteOptions{})
	return err
}

// setDisruptionTarget puts the DisruptionTarget condition on pod (upstream's
// UpdatePodCondition: the transition time kept when the status is unchanged), reporting
// whether anything changed.
func setDisruptionTarget(pod *corev1.Pod, now time.Time) bool {
	cond := corev1.PodCondition{Type: corev1.DisruptionTarget, ObservedGeneration: pod.Generation, Status: corev1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint", LastTransitionTime: metav1.NewTime(now)}
	for i := range pod.Status.Conditions {
		old := &pod.Status.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message &&
			old.LastProbeTime.Equal(&cond.LastProbeTime) && old.ObservedGeneration == cond.ObservedGeneration {
			return false
		}
		*old = cond
		return true
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
	return true
}
