package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	nodetopology "k8s.io/component-helpers/node/topology"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/registry"
)

// Component is the events' source component, as upstream's.
const Component = "node-controller"

// Upstream's defaults (kube-controller-manager v1.37 flags of the same names).
const (
	DefaultMonitorPeriod          = 5 * time.Second  // --node-monitor-period
	DefaultGracePeriod            = 50 * time.Second // --node-monitor-grace-period
	DefaultStartupGracePeriod     = 60 * time.Second // --node-startup-grace-period
	DefaultEvictionRate           = 0.1              // --node-eviction-rate
	DefaultSecondaryEvictionRate  = 0.01             // --secondary-node-eviction-rate
	DefaultLargeClusterThreshold  = 50               // --large-cluster-size-threshold
	DefaultUnhealthyZoneThreshold = 0.55             // --unhealthy-zone-threshold
)

// labelNodeDisruptionExclusion excludes a node from zone disruption accounting.
const labelNodeDisruptionExclusion = "node.kubernetes.io/exclude-disruption"

// The NoExecute taints of a node that is not Ready (upstream's templates).
var (
	UnreachableTaint = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	NotReadyTaint    = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
)

// conditionTaints maps a node condition's status to the key of its NoSchedule taint.
var conditionTaints = map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
	corev1.NodeReady:              {corev1.ConditionFalse: corev1.TaintNodeNotReady, corev1.ConditionUnknown: corev1.TaintNodeUnreachable},
	corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
	corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
	corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
	corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
}

// taintConditions is the set of taint keys conditionTaints produces.
var taintConditions = map[string]bool{
	corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeNetworkUnavailable: true,
	corev1.TaintNodeMemoryPressure: true, corev1.TaintNodeDiskPressure: true, corev1.TaintNodePIDPressure: true,
}

// ZoneState is a zone's health as upstream computes it.
type ZoneState string

// The zone states.
const (
	StateInitial           = ZoneState("Initial")
	StateNormal            = ZoneState("Normal")
	StateFullDisruption    = ZoneState("FullDisruption")
	StatePartialDisruption = ZoneState("PartialDisruption")
)

// Options configures the controller; zero fields take upstream's defaults.
type Options struct {
	MonitorPeriod          time.Duration
	GracePeriod            time.Duration
	StartupGracePeriod     time.Duration
	EvictionRate           float32
	SecondaryEvictionRate  float32
	LargeClusterThreshold  int32
	UnhealthyZoneThreshold float32
	// Clock is the one clock (nil: the real clock).
	Clock clock.WithTicker
	// Pods, when set, is the index of pods shared with the other controllers watching
	// every pod (it must then run once the controller has started: SharedPods.Run); nil:
	// an index of its own, watched from Start.
	Pods   *controller.SharedPods
	Panics controller.PanicObserver
	Log    *slog.Logger
}

func (o *Options) defaults() {
	if o.MonitorPeriod <= 0 {
		o.MonitorPeriod = DefaultMonitorPeriod
	}
	if o.GracePeriod <= 0 {
		o.GracePeriod = DefaultGracePeriod
	}
	if o.StartupGracePeriod <= 0 {
		o.StartupGracePeriod = DefaultStartupGracePeriod
	}
	if o.EvictionRate == 0 {
		o.EvictionRate = DefaultEvictionRate
	}
	if o.SecondaryEvictionRate == 0 {
		o.SecondaryEvictionRate = DefaultSecondaryEvictionRate
	}
	if o.LargeClusterThreshold == 0 {
		o.LargeClusterThreshold = DefaultLargeClusterThreshold
	}
	if o.UnhealthyZoneThreshold == 0 {
		o.UnhealthyZoneThreshold = DefaultUnhealthyZoneThreshold
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
}

// health is what the controller last saw of a node (upstream's nodeHealthData).
type health struct {
	probe      time.Time
	transition time.Time
	status     *corev1.NodeStatus
	lease      *coordv1.Lease
}

func (h *health) copy() *health {
	if h == nil {
		return nil
	}
	c := *h
	c.status = h.status.DeepCopy()
	c.lease = h.lease.DeepCopy()
	return &c
}

// Controller is the node lifecycle controller.
type Controller struct {
	store controller.Client
	opts  Options
	clock clock.WithTicker
	log   *slog.Logger
	loop  *controller.Loop
	rec   *record.Recorder

	// Nodes, Leases (kube-node-lease) and Pods' views as the watches last delivered them;
	// pods bound to a node they were not bound to before are queued on podQ (set by Start).
	nodes, leases *controller.Index
	pods          *controller.PodSub
	podQ          workqueue.TypedRateLimitingInterface[string]

	mu       sync.Mutex
	podsOn   controller.PodsByNode
	healths  map[string]*health
	known    map[string]*corev1.Node
	zones    map[string]ZoneState
	tainters map[string]*tainter
	retry    map[string]bool // nodes whose pods must be marked not ready again
	// leaseRev is the highest revision of a Lease the watch delivered; leaseWait the
	// revision a read of storage showed a Lease at, which the watch must reach before
	// node health is judged again (the lease circuit breaker).
	leaseRev, leaseWait int64
}

// errLeasesBehind stops a node's health update while the Leases the watch delivered are
// behind storage (upstream's NodeControllerLeaseCircuitBreaker, beta and on by default
// in v1.37): no node is marked Unknown on a Lease the cache has not caught up with.
var errLeasesBehind = errors.New("node leases cache is behind storage")

// sawLease records the revision of a Lease event.
func (c *Controller) sawLease(l *coordv1.Lease) {
	rv, err := strconv.ParseInt(l.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rv > c.leaseRev {
		c.leaseRev = rv
	}
}

// New returns the controller.
func New(store controller.Client, opts Options) *Controller {
	opts.defaults()
	c := &Controller{
		store: store, opts: opts, clock: opts.Clock, log: opts.Log,
		loop:  controller.NewLoop("nodelifecycle", store, opts.Log, opts.Panics, opts.Clock),
		rec:   record.NewRecorder(store, Component, opts.Clock, opts.Log),
		nodes: controller.NewIndex(nil),
		leases: controller.NewIndex(func(o runtime.Object) runtime.Object {
			if l, ok := o.(*coordv1.Lease); ok && l.Namespace == corev1.NamespaceNodeLease {
				return l
			}
			return nil
		}),
		pods:    opts.Pods.Sub(controller.PodFilter{Bound: true}), // pods bound to a node only
		healths: map[string]*health{}, known: map[string]*corev1.Node{},
		zones: map[string]ZoneState{}, tainters: map[string]*tainter{}, retry: map[string]bool{},
	}
	c.pods.OnChange(func(old, cur runtime.Object, deleted bool) {
		// Queued when bound to a node it was not bound to before (upstream's podUpdated).
		if key, was, now := c.podsOn.Changed(old, cur, deleted); now != "" && now != was && c.podQ != nil {
			c.podQ.Add(key)
		}
	})
	return c
}

var (
	nodesGVR  = corev1.SchemeGroupVersion.WithResource("nodes")
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	leasesGVR = coordv1.SchemeGroupVersion.WithResource("leases")
)

func (c *Controller) res(gvr schema.GroupVersionResource) *registry.Resource {
	return c.store.Catalogue().Get(gvr)
}

// Start runs the controller until ctx ends: the watches, the NoSchedule tainting and
// pod workers, the NoExecute tainting pass every 100ms and the health monitor every
// --node-monitor-period.
func (c *Controller) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	nodeQ := controller.NewQueue("node_lifecycle_controller")
	podQ := controller.NewQueue("node_lifecycle_controller_pods")
	c.podQ = podQ // before the watches start: their OnChange queues pods that moved
	go c.loop.WatchIndex(ctx, c.res(nodesGVR), c.nodes, controller.On(func(n *corev1.Node, deleted bool) {
		if !deleted {
			nodeQ.Add(n.Name)
		}
	}))
	go c.loop.WatchIndex(ctx, c.res(leasesGVR), c.leases, controller.On(func(l *coordv1.Lease, _ bool) {
		c.sawLease(l)
	}))
	c.pods.Start(ctx, c.loop, nil)
	go c.loop.Process(ctx, nodeQ, 2, func(ctx context.Context, name string) (time.Duration, error) {
		if err := c.NoScheduleTaint(ctx, name); err != nil {
			return 0, err
		}
		return 0, c.ReconcileLabels(ctx, name)
	})
	go c.loop.Process(ctx, podQ, 2, func(ctx context.Context, key string) (time.Duration, error) {
		return 0, c.ProcessPod(ctx, key)
	})
	taint := c.clock.NewTicker(evictionPeriod)
	defer taint.Stop()
	monitor := c.clock.NewTicker(c.opts.MonitorPeriod)
	defer monitor.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-taint.C():
			c.loop.Guard("tainting pass", func() { c.TaintPass(ctx) })
		case <-monitor.C():
			c.loop.Guard("monitor node health", func() {
				if err := c.Monitor(ctx); err != nil && ctx.Err() == nil {
					c.log.Warn("error monitoring node health", "controller", "nodelifecycle", "err", err)
				}
			})
		}
	}
}

// Feed records a node, lease or pod as a watch would deliver it (tests use it to show the
// controller what the store holds).
func (c *Controller) Feed(obj runtime.Object, deleted bool) {
	switch o := obj.(type) {
	case *corev1.Node:
		c.nodes.Apply(o, deleted)
	case *coordv1.Lease:
		c.sawLease(o)
		c.leases.Apply(o, deleted)
	case *corev1.Pod:
		c.pods.Apply(o, deleted)
	}
}

// podsOf returns the cached pods bound to node, sorted.
func (c *Controller) podsOf(node string) []*corev1.Pod {
	keys := c.podsOn.Keys(node)
	out := make([]*corev1.Pod, 0, len(keys))
	for _, k := range keys {
		ns, name := splitKey(k)
		if o, ok := c.pods.Get(ns, name).(*controller.PodView); ok && o.NodeName == node {
			out = append(out, o.Pod())
		}
	}
	return out
}

func splitKey(k string) (string, string) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// cachedNodes returns the cached nodes, sorted by name.
func (c *Controller) cachedNodes() []*corev1.Node {
	objs := c.nodes.List("")
	out := make([]*corev1.Node, 0, len(objs))
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			out = append(out, n)
		}
	}
	return out
}

// readyCondition returns the Ready condition of st, or nil.
func readyCondition(st *corev1.NodeStatus) *corev1.NodeCondition {
	return condition(st, corev1.NodeReady)
}

func condition(st *corev1.NodeStatus, t corev1.NodeConditionType) *corev1.NodeCondition {
	if st == nil {
		return nil
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// Monitor is one pass of upstream's monitorNodeHealth:
//  1. nodes new to the controller are registered (an event, a zone's queue, their
//     NoExecute taints of a past leader removed); nodes gone are forgotten;
//  2. each node's health is updated (Ready=Unknown once its grace period passed);
//  3. a node not Ready is queued for its NoExecute taint (or has it swapped at once), a
//     Ready one has them removed; the pods of a node that just stopped being Ready are
//     marked not Ready;
//  4. zone states and their eviction rates follow the share of Ready nodes.
func (c *Controller) Monitor(ctx context.Context) error {
	nodes := c.cachedNodes()
	// 1.
	added, deleted, newZones := c.classify(nodes)
	for _, n := range newZones {
		c.addZone(n)
	}
	for _, n := range added {
		c.nodeEvent(ctx, n, corev1.EventTypeNormal, "RegisteredNode", fmt.Sprintf("Node %s event: Registered Node %s in Controller", n.Name, n.Name))
		c.mu.Lock()
		c.known[n.Name] = n
		c.mu.Unlock()
		c.addZone(n)
		if _, err := c.markReachable(ctx, n); err != nil {
			c.log.Warn("failed to remove taints from node", "controller", "nodelifecycle", "node", n.Name, "err", err)
		}
	}
	for _, n := range deleted {
		c.nodeEvent(ctx, n, corev1.EventTypeNormal, "RemovingNode", fmt.Sprintf("Node %s event: Removing Node %s from Controller", n.Name, n.Name))
		c.mu.Lock()
		delete(c.known, n.Name)
		delete(c.retry, n.Name)
		c.mu.Unlock()
	}
	zoneConditions := map[string][]*corev1.NodeCondition{}
	for _, cached := range nodes {
		// 2.
		node := cached.DeepCopy()
		var observed corev1.NodeCondition
		var current *corev1.NodeCondition
		var err error
		for try := 0; try < 5; try++ {
			observed, current, err = c.updateHealth(ctx, node)
			if err == nil || errors.Is(err, errLeasesBehind) {
				break
			}
			obj, gerr := c.store.Get(ctx, c.res(nodesGVR), "", node.Name)
			if gerr != nil {
				err = gerr
				break
			}
			node = obj.(*corev1.Node)
		}
		if err != nil {
			c.log.Warn("Update health of Node from Controller error, Skipping - no pods will be evicted", "controller", "nodelifecycle", "node", node.Name, "err", err)
			continue
		}
		if _, excluded := node.Labels[labelNodeDisruptionExclusion]; !excluded {
			z := nodetopology.GetZoneKey(node)
			zoneConditions[z] = append(zoneConditions[z], current)
		}
		if current == nil {
			c.mu.Lock()
			delete(c.retry, node.Name)
			c.mu.Unlock()
			continue
		}
		// 3. The node's pods are made only to be marked: a pass over nodes that stay
		// Ready builds none (every pod held, every 5 s, would be the idle server's work).
		c.taintBasedEviction(ctx, node, current)
		c.mu.Lock()
		needsRetry := c.retry[node.Name]
		c.mu.Unlock()
		mark := false
		switch {
		case current.Status != corev1.ConditionTrue && observed.Status == corev1.ConditionTrue:
			c.nodeEvent(ctx, node, corev1.EventTypeNormal, "NodeNotReady", fmt.Sprintf("Node %s status is now: %s", node.Name, "NodeNotReady"))
			mark = true
		case needsRetry && observed.Status != corev1.ConditionTrue:
			mark = true
		}
		if mark {
			if err := c.markPodsNotReady(ctx, c.podsOf(node.Name), node.Name); err != nil {
				c.log.Warn("unable to mark all pods NotReady on node; queuing for retry", "controller", "nodelifecycle", "node", node.Name, "err", err)
				c.mu.Lock()
				c.retry[node.Name] = true
				c.mu.Unlock()
				continue
			}
		}
		c.mu.Lock()
		delete(c.retry, node.Name)
		c.mu.Unlock()
	}
	// 4.
	c.handleDisruption(ctx, zoneConditions, nodes)
	return nil
}

// classify splits nodes into the ones new to the controller, the known ones gone, and
// known ones of a zone without a state.
func (c *Controller) classify(nodes []*corev1.Node) (added, deleted, newZones []*corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n.Name] = true
		if c.known[n.Name] == nil {
			added = append(added, n)
		} else if _, ok := c.zones[nodetopology.GetZoneKey(n)]; !ok {
			newZones = append(newZones, n)
		}
	}
	names := make([]string, 0)
	for name := range c.known {
		if !seen[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		deleted = append(deleted, c.known[name])
	}
	return added, deleted, newZones
}

// addZone gives a node's zone its state and tainting queue when it has none.
func (c *Controller) addZone(n *corev1.Node) {
	z := nodetopology.GetZoneKey(n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.zones[z]; !ok {
		c.zones[z] = StateInitial
		c.tainters[z] = newTainter(c.clock, c.opts.EvictionRate)
	}
}

func (c *Controller) tainter(n *corev1.Node) *tainter {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tainters[nodetopology.GetZoneKey(n)]
}

// nodeEvent records an event about a node.
func (c *Controller) nodeEvent(ctx context.Context, n *corev1.Node, typ, reason, msg string) {
	c.rec.EventRef(ctx, corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}, typ, reason, msg)
}

// updateHealth is upstream's tryUpdateNodeHealth: it records what it sees of node and,
// once the node's grace period passed without a new heartbeat or lease renewal, writes
// its conditions Unknown. It returns the Ready condition seen and the one now current.
//
// Upstream's lease circuit breaker: before marking a node Unknown, its Lease is read from
// storage; when that is not the Lease last seen renewed, the Leases cache is behind, and
// no node's health is updated (errLeasesBehind) until the watch delivered that revision.
func (c *Controller) updateHealth(ctx context.Context, node *corev1.Node) (corev1.NodeCondition, *corev1.NodeCondition, error) {
	c.mu.Lock()
	h := c.healths[node.Name].copy()
	behind := c.leaseWait > c.leaseRev
	c.mu.Unlock()
	if behind {
		return corev1.NodeCondition{}, nil, errLeasesBehind
	}
	defer func() {
		c.mu.Lock()
		c.healths[node.Name] = h
		c.mu.Unlock()
	}()
	now := c.clock.Now()
	var grace time.Duration
	var observed corev1.NodeCondition
	current := readyCondition(&node.Status)
	if current == nil {
		// The kubelet never posted status: a fake Unknown condition as of creation.
		observed = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: node.CreationTimestamp}
		grace = c.opts.StartupGracePeriod
		if h != nil {
			h.status = &node.Status
		} else {
			h = &health{status: &node.Status, probe: node.CreationTimestamp.Time, transition: node.CreationTimestamp.Time}
		}
	} else {
		observed = *current
		grace = c.opts.GracePeriod
	}
	var saved *corev1.NodeCondition
	var savedLease *coordv1.Lease
	if h != nil {
		saved = readyCondition(h.status)
		savedLease = h.lease
	}
	switch {
	case h == nil, saved == nil && current != nil, saved != nil && current == nil:
		h = &health{status: &node.Status, probe: now, transition: now}
	case saved != nil && current != nil && !saved.LastHeartbeatTime.Equal(&current.LastHeartbeatTime):
		transition := h.transition
		if !saved.LastTransitionTime.Equal(&current.LastTransitionTime) {
			transition = now
		}
		h = &health{status: &node.Status, probe: now, transition: transition, lease: h.lease}
	}
	// A renewed Lease counts as a heartbeat.
	var lease *coordv1.Lease
	if o, ok := c.leases.Get(corev1.NamespaceNodeLease, node.Name).(*coordv1.Lease); ok {
		lease = o
	}
	if lease != nil && (savedLease == nil || savedLease.Spec.RenewTime.Before(lease.Spec.RenewTime)) {
		h.lease = lease
		h.probe = now
	}
	if !now.After(h.probe.Add(grace)) {
		return observed, current, nil
	}
	if err := c.leaseCurrent(ctx, node.Name, h.lease); err != nil {
		return corev1.NodeCondition{}, nil, err
	}
	// The grace period passed: Ready and the pressure conditions become Unknown
	// (NetworkUnavailable is the control plane's).
	stamp := metav1.NewTime(now)
	for _, t := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		cond := condition(&node.Status, t)
		if cond == nil {
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionUnknown,
				Reason: "NodeStatusNeverUpdated", Message: "Kubelet never posted node status.",
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: stamp})
		} else if cond.Status != corev1.ConditionUnknown {
			cond.Status = corev1.ConditionUnknown
			cond.Reason = "NodeStatusUnknown"
			cond.Message = "Kubelet stopped posting node status."
			cond.LastTransitionTime = stamp
		}
	}
	current = readyCondition(&node.Status)
	if equality.Semantic.DeepEqual(current, &observed) {
		return observed, current, nil
	}
	res := c.res(nodesGVR)
	written, err := c.store.Update(ctx, res, "", node.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
		n, err := controller.As[*corev1.Node](cur)
		if err != nil {
			return nil, err
		}
		if n.ResourceVersion != node.ResourceVersion {
			return nil, apierrors.NewConflict(res.GroupResource(), node.Name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		n.Status = node.Status
		return n, nil
	}, registry.WriteOptions{})
	if err != nil {
		return observed, current, err
	}
	if wn, ok := written.Object.(*corev1.Node); ok {
		node.ResourceVersion = wn.ResourceVersion
	}
	h = &health{status: &node.Status, probe: h.probe, transition: now, lease: lease}
	return observed, current, nil
}

// leaseCurrent reads node's Lease from storage: errLeasesBehind, recording the revision
// to wait for, unless it is seen (the Lease last seen renewed) or there is none.
func (c *Controller) leaseCurrent(ctx context.Context, node string, seen *coordv1.Lease) error {
	obj, err := c.store.Get(ctx, c.res(leasesGVR), corev1.NamespaceNodeLease, node)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("%w: error looking up lease to verify node %s: %v", errLeasesBehind, node, err)
	}
	live := obj.(*coordv1.Lease)
	var seenRV string
	if seen != nil {
		seenRV = seen.ResourceVersion
	}
	if live.ResourceVersion == seenRV {
		return nil
	}
	if rv, err := strconv.ParseInt(live.ResourceVersion, 10, 64); err == nil {
		c.mu.Lock()
		if rv > c.leaseWait {
			c.leaseWait = rv
		}
		c.mu.Unlock()
	}
	return fmt.Errorf("%w: read lease %s at revision %s, seen at %q", errLeasesBehind, node, live.ResourceVersion, seenRV)
}

// taintBasedEviction is upstream's processTaintBaseEviction.
func (c *Controller) taintBasedEviction(ctx context.Context, node *corev1.Node, ready *corev1.NodeCondition) {
	switch ready.Status {
	case corev1.ConditionFalse:
		if hasTaint(node.Spec.Taints, UnreachableTaint) {
			if err := c.swapTaints(ctx, node.Name, []corev1.Taint{NotReadyTaint}, []corev1.Taint{UnreachableTaint}); err != nil {
				c.log.Warn("Failed to instantly swap UnreachableTaint to NotReadyTaint. Will try again in the next cycle", "controller", "nodelifecycle", "node", node.Name, "err", err)
			}
		} else {
			c.markForTainting(node, corev1.ConditionFalse)
		}
	case corev1.ConditionUnknown:
		if hasTaint(node.Spec.Taints, NotReadyTaint) {
			if err := c.swapTaints(ctx, node.Name, []corev1.Taint{UnreachableTaint}, []corev1.Taint{NotReadyTaint}); err != nil {
				c.log.Warn("Failed to instantly swap NotReadyTaint to UnreachableTaint. Will try again in the next cycle", "controller", "nodelifecycle", "node", node.Name, "err", err)
			}
		} else {
			c.markForTainting(node, corev1.ConditionUnknown)
		}
	case corev1.ConditionTrue:
		if _, err := c.markReachable(ctx, node); err != nil {
			c.log.Warn("failed to remove taints from node", "controller", "nodelifecycle", "node", node.Name, "err", err)
		}
	}
}

// markForTainting queues node for its NoExecute taint.
func (c *Controller) markForTainting(node *corev1.Node, status corev1.ConditionStatus) bool {
	q := c.tainter(node)
	if q == nil {
		return false
	}
	if status == corev1.ConditionFalse && !hasTaint(node.Spec.Taints, NotReadyTaint) {
		q.remove(node.Name)
	}
	if status == corev1.ConditionUnknown && !hasTaint(node.Spec.Taints, UnreachableTaint) {
		q.remove(node.Name)
	}
	return q.add(node.Name, string(node.UID))
}

// markReachable removes both NoExecute taints and takes the node out of its queue.
func (c *Controller) markReachable(ctx context.Context, node *corev1.Node) (bool, error) {
	if err := c.swapTaints(ctx, node.Name, nil, []corev1.Taint{UnreachableTaint, NotReadyTaint}); err != nil {
		return false, err
	}
	q := c.tainter(node)
	if q == nil {
		return false, nil
	}
	return q.remove(node.Name), nil
}

// hasTaint reports whether taints has one of t's key and effect.
func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

// swapTaints adds (stamped now) and removes taints on the stored node, writing only when
// that changes them (upstream's SwapNodeControllerTaint).
func (c *Controller) swapTaints(ctx context.Context, name string, add, remove []corev1.Taint) error {
	now := metav1.NewTime(c.clock.Now())
	res := c.res(nodesGVR)
	_, err := c.store.Update(ctx, res, "", name, "", func(cur runtime.Object) (runtime.Object, error) {
		n, err := controller.As[*corev1.Node](cur)
		if err != nil {
			return nil, err
		}
		taints, changed := applyTaints(n.Spec.Taints, add, remove, now)
		if !changed {
			return nil, errUnchanged
		}
		n.Spec.Taints = taints
		return n, nil
	}, registry.WriteOptions{})
	if err == errUnchanged || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// errUnchanged stops an update that would change nothing.
var errUnchanged = fmt.Errorf("unchanged")

// applyTaints returns taints with add (stamped at) put in place of any of the same key and
// effect, then remove dropped, and whether that changed anything.
func applyTaints(taints, add, remove []corev1.Taint, at metav1.Time) ([]corev1.Taint, bool) {
	out := append([]corev1.Taint(nil), taints...)
	changed := false
	for _, t := range add {
		t.TimeAdded = &at
		replaced := false
		for i := range out {
			if out[i].MatchTaint(&t) {
				replaced = true
				if !equality.Semantic.DeepEqual(out[i], t) {
					out[i] = t
					changed = true
				}
				break
			}
		}
		if !replaced {
			out = append(out, t)
			changed = true
		}
	}
	for _, t := range remove {
		kept := out[:0]
		for _, o := range out {
			if o.MatchTaint(&t) {
				changed = true
				continue
			}
			kept = append(kept, o)
		}
		out = kept
	}
	return out, changed
}

// NoScheduleTaint is upstream's doNoScheduleTaintingPass: the node's NoSchedule taints of
// conditions (and of spec.unschedulable) follow its conditions.
func (c *Controller) NoScheduleTaint(ctx context.Context, name string) error {
	node, ok := c.nodes.Get("", name).(*corev1.Node)
	if !ok {
		return nil
	}
	var want []corev1.Taint
	for _, cond := range node.Status.Conditions {
		if key, ok := conditionTaints[cond.Type][cond.Status]; ok {
			want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		want = append(want, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	var have []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule && (t.Key == corev1.TaintNodeUnschedulable || taintConditions[t.Key]) {
			have = append(have, t)
		}
	}
	var add, del []corev1.Taint
	for _, t := range want {
		if !hasTaint(have, t) {
			add = append(add, t)
		}
	}
	for _, t := range have {
		if !hasTaint(want, t) {
			del = append(del, t)
		}
	}
	if len(add) == 0 && len(del) == 0 {
		return nil
	}
	if err := c.swapTaints(ctx, name, add, del); err != nil {
		return fmt.Errorf("failed to swap taints of node %s: %w", name, err)
	}
	return nil
}

// ReconcileLabels is upstream's reconcileNodeLabels: the deprecated beta.kubernetes.io/os
// and arch labels follow kubernetes.io/os and arch.
func (c *Controller) ReconcileLabels(ctx context.Context, name string) error {
	node, ok := c.nodes.Get("", name).(*corev1.Node)
	if !ok || node.Labels == nil {
		return nil
	}
	want := map[string]string{}
	for primary, secondary := range map[string]string{corev1.LabelOSStable: "beta.kubernetes.io/os", corev1.LabelArchStable: "beta.kubernetes.io/arch"} {
		v, ok := node.Labels[primary]
		if !ok {
			continue
		}
		if sv, ok := node.Labels[secondary]; !ok || sv != v {
			want[secondary] = v
		}
	}
	if len(want) == 0 {
		return nil
	}
	_, err := c.store.Update(ctx, c.res(nodesGVR), "", name, "", func(cur runtime.Object) (runtime.Object, error) {
		n, err := controller.As[*corev1.Node](cur)
		if err != nil {
			return nil, err
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for k, v := range want {
			n.Labels[k] = v
		}
		return n, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// TaintPass is upstream's doNoExecuteTaintingPass: each zone's queue, at its rate, gives
// its nodes the NoExecute taint matching their Ready condition.
func (c *Controller) TaintPass(ctx context.Context) {
	c.mu.Lock()
	zones := make([]string, 0, len(c.tainters))
	for z := range c.tainters {
		zones = append(zones, z)
	}
	c.mu.Unlock()
	sort.Strings(zones)
	for _, z := range zones {
		c.mu.Lock()
		q := c.tainters[z]
		c.mu.Unlock()
		q.try(func(v timedValue) (bool, time.Duration) {
			node, ok := c.nodes.Get("", v.value).(*corev1.Node)
			if !ok {
				return true, 0
			}
			ready := readyCondition(&node.Status)
			if ready == nil {
				return false, 50 * time.Millisecond
			}
			var add, opposite corev1.Taint
			switch ready.Status {
			case corev1.ConditionFalse:
				add, opposite = NotReadyTaint, UnreachableTaint
			case corev1.ConditionUnknown:
				add, opposite = UnreachableTaint, NotReadyTaint
			default:
				return true, 0
			}
			if err := c.swapTaints(ctx, node.Name, []corev1.Taint{add}, []corev1.Taint{opposite}); err != nil {
				c.log.Warn("failed to taint node", "controller", "nodelifecycle", "node", node.Name, "err", err)
				return false, 0
			}
			return true, 0
		})
	}
}

// markPodsNotReady is upstream's MarkPodsNotReady: the Ready condition of each pod of
// node becomes False (with an event), written to the pod's status.
func (c *Controller) markPodsNotReady(ctx context.Context, pods []*corev1.Pod, node string) error {
	var errs []error
	res := c.res(podsGVR)
	for _, p := range pods {
		if p.Spec.NodeName != node || !podReadyNotFalse(p) {
			continue
		}
		var changed *corev1.Pod
		_, err := c.store.Update(ctx, res, p.Namespace, p.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
			pod, err := controller.As[*corev1.Pod](cur)
			if err != nil {
				return nil, err
			}
			if pod.UID != p.UID || !setPodNotReady(pod, c.clock.Now()) {
				return nil, errUnchanged
			}
			changed = pod
			return pod, nil
		}, registry.WriteOptions{})
		switch {
		case err == errUnchanged, apierrors.IsNotFound(err):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		c.rec.Event(ctx, changed, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// podReadyNotFalse reports whether p has a Ready condition that is not False.
func podReadyNotFalse(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status != corev1.ConditionFalse
		}
	}
	return false
}

// setPodNotReady sets pod's Ready condition False (upstream's UpdatePodCondition: the
// transition time now), reporting whether that changed it.
func setPodNotReady(pod *corev1.Pod, now time.Time) bool {
	for i := range pod.Status.Conditions {
		cond := &pod.Status.Conditions[i]
		if cond.Type != corev1.PodReady {
			continue
		}
		if cond.Status == corev1.ConditionFalse {
			return false
		}
		cond.Status = corev1.ConditionFalse
		cond.LastTransitionTime = metav1.NewTime(now)
		return true
	}
	return false
}

// ProcessPod is upstream's processPod: a pod bound to a node that is not Ready is marked
// not Ready.
func (c *Controller) ProcessPod(ctx context.Context, key string) error {
	ns, name := splitKey(key)
	pod := controller.CachedPod(c.pods.Get(ns, name))
	if pod == nil || pod.Spec.NodeName == "" {
		return nil
	}
	c.mu.Lock()
	h := c.healths[pod.Spec.NodeName].copy()
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	if _, ok := c.nodes.Get("", pod.Spec.NodeName).(*corev1.Node); !ok {
		return fmt.Errorf("node %s not yet seen", pod.Spec.NodeName)
	}
	ready := readyCondition(h.status)
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return nil
	}
	return c.markPodsNotReady(ctx, []*corev1.Pod{pod}, pod.Spec.NodeName)
}

// ComputeZoneState is upstream's: fully disrupted with no Ready node, partially with at
// least three not Ready making at least the unhealthy threshold, else normal.
func (c *Controller) ComputeZoneState(conds []*corev1.NodeCondition) (int, ZoneState) {
	ready, notReady := 0, 0
	for _, cond := range conds {
		if cond != nil && cond.Status == corev1.ConditionTrue {
			ready++
		} else {
			notReady++
		}
	}
	switch {
	case ready == 0 && notReady > 0:
		return notReady, StateFullDisruption
	case notReady > 2 && float32(notReady)/float32(notReady+ready) >= c.opts.UnhealthyZoneThreshold:
		return notReady, StatePartialDisruption
	default:
		return notReady, StateNormal
	}
}

// reducedQPS is upstream's ReducedQPSFunc: the secondary rate in a large zone, else none.
func (c *Controller) reducedQPS(nodes int) float32 {
	if int32(nodes) > c.opts.LargeClusterThreshold {
		return c.opts.SecondaryEvictionRate
	}
	return 0
}

func (c *Controller) setLimiter(zone string, size int, state ZoneState) {
	q := c.tainters[zone]
	switch state {
	case StateNormal:
		q.swapLimiter(c.opts.EvictionRate)
	case StatePartialDisruption:
		q.swapLimiter(c.reducedQPS(size))
	case StateFullDisruption:
		q.swapLimiter(c.opts.EvictionRate)
	}
}

// handleDisruption is upstream's: zone states and their tainting rates; when every zone
// is fully disrupted (the control plane, not the nodes, is likely the problem) tainting
// stops and the NoExecute taints are removed.
func (c *Controller) handleDisruption(ctx context.Context, zoneConditions map[string][]*corev1.NodeCondition, nodes []*corev1.Node) {
	newStates := map[string]ZoneState{}
	allAre := true
	c.mu.Lock()
	for z, conds := range zoneConditions {
		_, st := c.ComputeZoneState(conds)
		if st != StateFullDisruption {
			allAre = false
		}
		newStates[z] = st
		if _, had := c.zones[z]; !had {
			c.zones[z] = StateInitial
			c.tainters[z] = newTainter(c.clock, c.opts.EvictionRate)
		}
	}
	allWere := true
	zones := make([]string, 0, len(c.zones))
	for z := range c.zones {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	for _, z := range zones {
		if _, have := zoneConditions[z]; !have {
			delete(c.zones, z)
			continue
		}
		if c.zones[z] != StateFullDisruption {
			allWere = false
			break
		}
	}
	if allAre && allWere {
		c.mu.Unlock()
		return
	}
	if allAre {
		c.mu.Unlock()
		c.log.Info("Controller detected that all Nodes are not-Ready. Entering master disruption mode", "controller", "nodelifecycle")
		for _, n := range nodes {
			if _, err := c.markReachable(ctx, n); err != nil {
				c.log.Warn("failed to remove taints from node", "controller", "nodelifecycle", "node", n.Name, "err", err)
			}
		}
		c.mu.Lock()
		for z := range c.zones {
			c.tainters[z].swapLimiter(0)
			c.zones[z] = StateFullDisruption
		}
		c.mu.Unlock()
		return
	}
	if allWere {
		c.log.Info("Controller detected that some Nodes are Ready. Exiting master disruption mode", "controller", "nodelifecycle")
		now := c.clock.Now()
		for _, n := range nodes {
			if h := c.healths[n.Name]; h != nil {
				h = h.copy()
				h.probe, h.transition = now, now
				c.healths[n.Name] = h
			}
		}
		for z := range c.zones {
			c.setLimiter(z, len(zoneConditions[z]), newStates[z])
			c.zones[z] = newStates[z]
		}
		c.mu.Unlock()
		return
	}
	for z, st := range c.zones {
		ns := newStates[z]
		if st == ns {
			continue
		}
		c.log.Info("Controller detected that zone is now in new state", "controller", "nodelifecycle", "zone", z, "newState", ns)
		c.setLimiter(z, len(zoneConditions[z]), ns)
		c.zones[z] = ns
	}
	c.mu.Unlock()
}

// ZoneStates returns the zones' states (for tests and metrics).
func (c *Controller) ZoneStates() map[string]ZoneState {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]ZoneState, len(c.zones))
	for z, s := range c.zones {
		out[z] = s
	}
	return out
}

// ZoneRate returns the tainting rate of a zone (for tests).
func (c *Controller) ZoneRate(zone string) float32 {
	c.mu.Lock()
	q := c.tainters[zone]
	c.mu.Unlock()
	if q == nil {
		return 0
	}
	return q.qps()
}
