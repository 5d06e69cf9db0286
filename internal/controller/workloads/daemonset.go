package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

var (
	daemonSetKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	daemonSetGVR  = appsv1.SchemeGroupVersion.WithResource("daemonsets")
	nodeGVR       = corev1.SchemeGroupVersion.WithResource("nodes")
)

// Upstream's DaemonSetTemplateGenerationKey and the annotation v1 DaemonSets carry their
// template generation in.
const (
	templateGenerationLabel      = "pod-template-generation"
	templateGenerationAnnotation = "deprecated.daemonset.template.generation"
)

// DaemonSet is upstream's DaemonSet controller: one pod per Node that the pod template's
// nodeSelector and required node affinity select and whose NoSchedule and NoExecute
// taints it tolerates (with the tolerations upstream adds to every daemon pod); each pod
// is bound to its node through a required node affinity on metadata.name, as upstream
// leaves it for the scheduler. RollingUpdate (maxUnavailable) and OnDelete through
// ControllerRevisions; status. A refused create is a FailedCreate event and a retry.
type DaemonSet struct {
	base
	// keys holds every DaemonSet's key, so a Node change enqueues them all.
	mu   sync.Mutex
	keys map[string]bool
	// nodeIndex holds every Node: syncs read them from memory.
	nodeIndex *controller.Index
	// pods is the daemon pods (in detail: the affinity binding an unscheduled pod to its
	// node, conditions) and the labelled orphans, as views of the shared pods; writes
	// holds each DaemonSet's last pod write, which its next read of pods waits for.
	pods   *controller.PodSub
	writes controller.Revisions
}

// NewDaemonSet returns the DaemonSet controller (events from "daemonset-controller").
func NewDaemonSet(store controller.Client, log *slog.Logger, opts Options) *DaemonSet {
	c := &DaemonSet{base: newBase(store, log, opts, "daemonset", "daemonset-controller"), keys: map[string]bool{}, nodeIndex: controller.NewIndex(nil)}
	c.pods = c.opts.Pods.Sub(detailedPods(daemonSetKind))
	return c
}

// Start runs the controller until ctx ends.
func (c *DaemonSet) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := controller.NewQueue("daemonset")
	// Every DaemonSet is synced again when a Node is added or removed, or its labels or
	// taints change (upstream's shouldIgnoreNodeUpdate): a node's status reports do not
	// resync every DaemonSet.
	c.nodeIndex.OnChange(func(old, cur runtime.Object, deleted bool) {
		o, _ := old.(*corev1.Node)
		n, _ := cur.(*corev1.Node)
		if !deleted && o != nil && n != nil && nodeUpdateIgnorable(o, n) {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for k := range c.keys {
			q.Add(k)
		}
	})
	go c.loop.WatchIndex(ctx, c.store.Catalogue().Get(nodeGVR), c.nodeIndex, nil)
	c.owned(ctx, q, daemonSetKind, daemonSetGVR, c.subFeed(c.pods), func(obj runtime.Object, deleted bool) {
		if m, err := controller.Meta(obj); err == nil {
			c.mu.Lock()
			if deleted {
				delete(c.keys, keyOf(m.GetNamespace(), m.GetName()))
				c.writes.Forget(keyOf(m.GetNamespace(), m.GetName()))
			} else {
				c.keys[keyOf(m.GetNamespace(), m.GetName())] = true
			}
			c.mu.Unlock()
		}
	}, c.sync)
	return nil
}

// daemonTolerations are upstream's AddOrUpdateDaemonPodTolerations.
func daemonTolerations(spec *corev1.PodSpec) {
	add := func(key string, effect corev1.TaintEffect) {
		t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
		for i := range spec.Tolerations {
			if spec.Tolerations[i].MatchToleration(&t) {
				return
			}
		}
		spec.Tolerations = append(spec.Tolerations, t)
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
}

// nodeShouldRun is upstream's NodeShouldRunDaemonPod: shouldRun when the node fits the
// template's node name, nodeSelector, required node affinity and taints;
// shouldContinueRunning also when only NoSchedule taints are not tolerated.
func nodeShouldRun(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinue bool) {
	return newPlacement(ds).shouldRun(node)
}

// placement is a DaemonSet's daemon pod as nodeShouldRun judges it against each node:
// made once per pass over the nodes (upstream makes it per node).
type placement struct {
	pod      *corev1.Pod
	affinity nodeaffinity.RequiredNodeAffinity
}

func newPlacement(ds *appsv1.DaemonSet) *placement {
	pod := &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy()}
	daemonTolerations(&pod.Spec)
	return &placement{pod: pod, affinity: nodeaffinity.GetRequiredNodeAffinity(pod)}
}

// shouldRun is nodeShouldRun for the placement's DaemonSet.
func (pl *placement) shouldRun(node *corev1.Node) (shouldRun, shouldContinue bool) {
	pod := pl.pod
	// 1. Upstream's predicates: node name, required node affinity (parse errors ignored,
	// as upstream), and taints the pod does not tolerate.
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return false, false
	}
	if fits, _ := pl.affinity.Match(node); !fits {
		return false, false
	}
	untolerated := func(effects ...corev1.TaintEffect) bool {
		_, found := v1helper.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
			for _, e := range effects {
				if t.Effect == e {
					return true
				}
			}
			return false
		}, true)
		return found
	}
	// 2. A NoSchedule or NoExecute taint keeps a new pod off the node; only NoExecute
	// evicts the pods already there.
	if untolerated(corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) {
		return false, !untolerated(corev1.TaintEffectNoExecute)
	}
	return true, true
}

// bindToNode is upstream's ReplaceDaemonSetPodNodeNameNodeAffinity.
func bindToNode(a *corev1.Affinity, node string) *corev1.Affinity {
	req := corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	sel := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req}}}}
	switch {
	case a == nil:
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
	case a.NodeAffinity == nil:
		a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}
	case a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil:
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	default:
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = sel.NodeSelectorTerms
	}
	return a
}

// targetNode is upstream's GetTargetNodeName: spec.nodeName, or the node the pod's
// required node affinity binds it to.
func targetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// templateGeneration is upstream's GetTemplateGeneration: the
// deprecated.daemonset.template.generation annotation, nil when absent or malformed.
func templateGeneration(ds *appsv1.DaemonSet) *int64 {
	v, ok := ds.Annotations[templateGenerationAnnotation]
	if !ok {
		return nil
	}
	g, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &g
}

// isDaemonPodUpdated is upstream's IsPodUpdated: the revision hash matches, or the
// template generation does.
func isDaemonPodUpdated(p *corev1.Pod, hash string, generation *int64) bool {
	return (hash != "" && p.Labels[revisionHashLabel] == hash) ||
		(generation != nil && p.Labels[templateGenerationLabel] == strconv.FormatInt(*generation, 10))
}

// sync is upstream's syncDaemonSet.
func (c *DaemonSet) sync(ctx context.Context, key string) (time.Duration, error) {
	ds, found, err := ownerOf[*appsv1.DaemonSet](ctx, &c.base, daemonSetGVR, key)
	if !found {
		return 0, err
	}
	ds = ds.DeepCopy()
	if ds.Spec.Selector == nil {
		return 0, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || selector.Empty() {
		return 0, nil
	}
	// 1. Revisions: the current one records spec.template; its hash labels new pods.
	revs, err := ownedRevisions(ctx, c.store, ds)
	if err != nil {
		return 0, err
	}
	var cc int32
	if ds.Status.CollisionCount != nil {
		cc = *ds.Status.CollisionCount
	}
	cur, cc, err := ensureRevision(ctx, c.store, ds, daemonSetKind, &ds.Spec.Template, revs, cc)
	if err != nil {
		return 0, err
	}
	hash := cur.Labels[revisionHashLabel]
	// 2. Nodes and the daemon pods on each.
	nodes, err := c.nodes(ctx)
	if err != nil {
		return 0, err
	}
	// Its pods' writes are recorded: each read of its pods waits for the index to hold them.
	store := c.writes.Tracked(c.store, c.store.Catalogue().Get(podGVR), key)
	byNode, taken, err := c.podsByNode(ctx, store, ds, selector)
	if err != nil {
		return 0, err
	}
	// 3. Create and delete pods, then roll the update, unless being deleted.
	var manageErr error
	if ds.DeletionTimestamp == nil {
		manageErr = c.manage(ctx, store, ds, nodes, byNode, taken, hash)
		if manageErr == nil && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			// The pods as manage left them, as upstream's rollingUpdate reads them.
			if byNode, taken, err = c.podsByNode(ctx, store, ds, selector); err != nil {
				return 0, err
			}
			manageErr = c.rollingUpdate(ctx, store, ds, nodes, byNode, taken, hash)
		}
	}
	c.starved.set(key, manageErr != nil && isQuotaRefusal(manageErr))
	// 4. Status from the pods as they are now; history beyond revisionHistoryLimit.
	if byNode, _, err = c.podsByNode(ctx, store, ds, selector); err != nil {
		return 0, err
	}
	requeue, err := c.writeStatus(ctx, ds, nodes, byNode, hash, cc)
	if err != nil {
		return 0, err
	}
	if manageErr != nil {
		return 0, retryErr(manageErr)
	}
	live := map[string]bool{cur.Name: true}
	for _, r := range revs {
		for _, pods := range byNode {
			for _, p := range pods {
				if p.Labels[revisionHashLabel] == r.Labels[revisionHashLabel] {
					live[r.Name] = true
				}
			}
		}
	}
	if revs, err = ownedRevisions(ctx, c.store, ds); err != nil {
		return 0, err
	}
	limit := int32(defaultRevisionHistoryLimit)
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = *ds.Spec.RevisionHistoryLimit
	}
	if err := truncateHistory(ctx, c.store, revs, live, limit); err != nil {
		return 0, err
	}
	return requeue, nil
}

// nodes returns every Node, sorted by name, from the index once it holds them all.
func (c *DaemonSet) nodes(ctx context.Context) ([]*corev1.Node, error) {
	wctx, cancel := context.WithTimeout(ctx, controller.WriteWait)
	defer cancel()
	if err := c.nodeIndex.WaitFor(wctx, 0); err != nil {
		return nil, fmt.Errorf("waiting for the nodes cache: %w", err)
	}
	all := c.nodeIndex.List("")
	out := make([]*corev1.Node, 0, len(all))
	for _, o := range all {
		n, err := controller.As[*corev1.Node](o)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// nodeUpdateIgnorable is upstream's shouldIgnoreNodeUpdate: the labels and taints, all
// that decides where daemon pods run, are unchanged.
func nodeUpdateIgnorable(old, cur *corev1.Node) bool {
	return apiequality.Semantic.DeepEqual(old.Labels, cur.Labels) && apiequality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints)
}

// podsByNode is upstream's getNodesToDaemonPods: the DaemonSet's pods (adopting matching
// orphans) grouped by target node, oldest first; taken holds their names. They are read
// from the index once it holds every pod write of the DaemonSet's syncs (an orphan the
// selector matches is read from storage whole: the index keeps a view of it).
func (c *DaemonSet) podsByNode(ctx context.Context, store controller.Client, ds *appsv1.DaemonSet, selector labels.Selector) (map[string][]*corev1.Pod, map[string]bool, error) {
	if err := c.writes.Await(ctx, c.pods, keyOf(ds.Namespace, ds.Name)); err != nil {
		return nil, nil, err
	}
	all := c.pods.Controlled(ds.Namespace, ds.UID)
	for _, o := range c.pods.Controlled(ds.Namespace, "") {
		v, ok := o.(*controller.PodView)
		if !ok || !selector.Matches(labels.Set(v.Labels)) {
			continue
		}
		full, err := c.store.Get(ctx, c.store.Catalogue().Get(podGVR), v.Namespace, v.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		all = append(all, full)
	}
	taken := map[string]bool{}
	var candidates []*corev1.Pod
	for _, o := range all {
		p := controller.CachedPod(o)
		if p == nil {
			return nil, nil, fmt.Errorf("a pod's cache holds %T", o)
		}
		taken[p.Name] = true
		candidates = append(candidates, p)
	}
	owned, err := claimPods(ctx, store, c.log, ds, ds.ObjectMeta, daemonSetKind, daemonSetGVR, selector, candidates)
	if err != nil {
		return nil, nil, err
	}
	out := map[string][]*corev1.Pod{}
	for _, p := range owned {
		if n := targetNode(p); n != "" {
			out[n] = append(out[n], p)
		}
	}
	for _, pods := range out {
		// upstream's podByCreationTimestampAndPhase: scheduled first, then oldest.
		sort.SliceStable(pods, func(i, j int) bool {
			if (pods[i].Spec.NodeName != "") != (pods[j].Spec.NodeName != "") {
				return pods[i].Spec.NodeName != ""
			}
			if !pods[i].CreationTimestamp.Equal(&pods[j].CreationTimestamp) {
				return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp)
			}
			return pods[i].Name < pods[j].Name
		})
	}
	return out, taken, nil
}

// manage is upstream's manage and podsShouldBeOnNode: a pod on every node that should
// run one, failed pods replaced, extra pods and pods on nodes that should not run them
// (or that are gone) deleted.
func (c *DaemonSet) manage(ctx context.Context, store controller.Client, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, taken map[string]bool, hash string) error {
	var create []string
	var del []*corev1.Pod
	exists := map[string]bool{}
	pl := newPlacement(ds)
	for _, node := range nodes {
		exists[node.Name] = true
		shouldRun, shouldContinue := pl.shouldRun(node)
		pods := byNode[node.Name]
		switch {
		case shouldRun && len(pods) == 0:
			create = append(create, node.Name)
		case shouldContinue:
			var running []*corev1.Pod
			for _, p := range pods {
				if p.DeletionTimestamp != nil {
					continue
				}
				if p.Status.Phase == corev1.PodFailed {
					c.rec.Eventf(ctx, ds, corev1.EventTypeWarning, "FailedDaemonPod", "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
					del = append(del, p)
					continue
				}
				if p.Status.Phase == corev1.PodSucceeded {
					c.rec.Eventf(ctx, ds, corev1.EventTypeNormal, "SucceededDaemonPod", "Found succeeded daemon pod %s/%s on node %s, will try to delete it", p.Namespace, p.Name, node.Name)
					del = append(del, p)
					continue
				}
				running = append(running, p)
			}
			if !allowsSurge(ds) {
				if len(running) > 1 {
					del = append(del, running[1:]...)
				}
				break
			}
			if len(running) <= 1 {
				if len(running) == 0 && shouldRun {
					create = append(create, node.Name)
				}
				break
			}
			// Surging: an old and a new pod may share the node until the new one is
			// available (or the old one is not ready); any others go.
			var oldestNew, oldestOld *corev1.Pod
			for _, p := range running {
				switch {
				case p.Labels[revisionHashLabel] == hash && oldestNew == nil:
					oldestNew = p
				case p.Labels[revisionHashLabel] != hash && oldestOld == nil:
					oldestOld = p
				default:
					del = append(del, p)
				}
			}
			if oldestNew != nil && oldestOld != nil && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.Spec.MinReadySeconds, c.opts.Clock.Now())) {
				del = append(del, oldestOld)
			}
		default:
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					del = append(del, p)
				}
			}
		}
	}
	for node, pods := range byNode {
		if exists[node] {
			continue
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				del = append(del, p)
			}
		}
	}
	return c.syncNodes(ctx, store, ds, del, create, taken, hash)
}

// syncNodes is upstream's syncNodes: deletes, then creates in slow-start batches with
// the template labelled by the revision hash and generation, bound to its node.
func (c *DaemonSet) syncNodes(ctx context.Context, store controller.Client, ds *appsv1.DaemonSet, del []*corev1.Pod, create []string, taken map[string]bool, hash string) error {
	if len(del) > 0 {
		if err := deletePods(ctx, store, c.rec, ds, del); err != nil {
			return err
		}
	}
	if len(create) > burstReplicas {
		create = create[:burstReplicas]
	}
	t := ds.Spec.Template.DeepCopy()
	daemonTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	gen := ds.Generation
	if g := templateGeneration(ds); g != nil {
		gen = *g
	}
	t.Labels[templateGenerationLabel] = strconv.FormatInt(gen, 10)
	t.Labels[revisionHashLabel] = hash
	ref := controllerRef(ds, daemonSetKind)
	_, err := slowStartBatch(len(create), slowStartInitialBatch, func(i int) error {
		pt := t.DeepCopy()
		pt.Spec.Affinity = bindToNode(pt.Spec.Affinity, create[i])
		return createPod(ctx, store, c.rec, ds, pt, podsPrefix(ds.Name), ref)
	})
	return err
}

// rollingUpdate is upstream's rollingUpdate. Without surge, old pods that are not
// available are replaced at once, available ones while fewer than maxUnavailable nodes
// (those with pods, and those that should run one) are unavailable.
func (c *DaemonSet) rollingUpdate(ctx context.Context, store controller.Client, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, taken map[string]bool, hash string) error {
	now := c.opts.Clock.Now()
	// 1. The nodes considered: those with daemon pods and those that should run one.
	desired := 0
	var considered []string
	seen := map[string]bool{}
	pl := newPlacement(ds)
	for _, node := range nodes {
		if shouldRun, _ := pl.shouldRun(node); shouldRun {
			desired++
			considered = append(considered, node.Name)
			seen[node.Name] = true
		}
	}
	for name := range byNode {
		if !seen[name] {
			considered = append(considered, name)
		}
	}
	sort.Strings(considered)
	// 2. upstream's UnavailableCount and SurgeCount (rounded up); with neither, 1.
	maxUnavailable, maxSurge := 0, 0
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.MaxUnavailable != nil {
			if v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true); err == nil {
				maxUnavailable = v
			}
		}
		if ru.MaxSurge != nil {
			if v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, desired, true); err == nil {
				maxSurge = v
			}
		}
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	gen := templateGeneration(ds)
	if maxSurge > 0 {
		return c.surge(ctx, store, ds, nodes, byNode, taken, considered, hash, gen, desired, maxSurge)
	}
	// 3. Count unavailable nodes and pick old pods to delete.
	numUnavailable := 0
	var allowed, candidates []*corev1.Pod
	for _, name := range considered {
		var newPod, oldPod *corev1.Pod
		ok := true
		for _, p := range byNode[name] {
			if p.DeletionTimestamp != nil {
				continue
			}
			if isDaemonPodUpdated(p, hash, gen) {
				ok = ok && newPod == nil
				newPod = p
			} else {
				ok = ok && oldPod == nil
				oldPod = p
			}
		}
		switch {
		case !ok, oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
			numUnavailable++
		case newPod != nil:
			if !isPodAvailable(newPod, ds.Spec.MinReadySeconds, now) {
				numUnavailable++
			}
		case !isPodAvailable(oldPod, ds.Spec.MinReadySeconds, now):
			allowed = append(allowed, oldPod)
			numUnavailable++
		case numUnavailable >= maxUnavailable:
		default:
			candidates = append(candidates, oldPod)
		}
	}
	remaining := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
	del := append(allowed, candidates[:remaining]...)
	if len(del) == 0 {
		return nil
	}
	return deletePods(ctx, store, c.rec, ds, del)
}

// surge is the maxSurge half of upstream's rollingUpdate: a new pod is created beside an
// old one that is unavailable at once, beside available ones up to maxSurge at a time;
// an old pod goes once the new one on its node is available.
func (c *DaemonSet) surge(ctx context.Context, store controller.Client, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, taken map[string]bool, considered []string, hash string, gen *int64, desired, maxSurge int) error {
	now := c.opts.Clock.Now()
	nodeByName := map[string]*corev1.Node{}
	for _, n := range nodes {
		nodeByName[n.Name] = n
	}
	pl := newPlacement(ds)
	shouldRun := func(name string) bool {
		n := nodeByName[name]
		if n == nil {
			return false
		}
		run, _ := pl.shouldRun(n)
		return run
	}
	var del, shouldNotRun []*corev1.Pod
	var allowedNew, candidateNew []string
	numSurge, numAvailable := 0, 0
	for _, name := range considered {
		var newPod, oldPod *corev1.Pod
		ok := true
		for _, p := range byNode[name] {
			if p.DeletionTimestamp != nil {
				continue
			}
			if isDaemonPodUpdated(p, hash, gen) {
				ok = ok && newPod == nil
				newPod = p
			} else {
				ok = ok && oldPod == nil
				oldPod = p
			}
		}
		if !ok {
			numSurge++
			continue
		}
		if oldPod != nil && isPodAvailable(oldPod, ds.Spec.MinReadySeconds, now) || oldPod == nil && newPod != nil && isPodAvailable(newPod, ds.Spec.MinReadySeconds, now) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			switch {
			case !isPodAvailable(oldPod, ds.Spec.MinReadySeconds, now):
				if !shouldRun(name) {
					del = append(del, oldPod)
					continue
				}
				allowedNew = append(allowedNew, name)
			default:
				if !shouldRun(name) {
					shouldNotRun = append(shouldNotRun, oldPod)
					continue
				}
				if numSurge >= maxSurge {
					continue
				}
				candidateNew = append(candidateNew, name)
			}
		default:
			if !isPodAvailable(newPod, ds.Spec.MinReadySeconds, now) {
				numSurge++
				continue
			}
			del = append(del, oldPod)
		}
	}
	// Pods on nodes that no longer fit go only as pods elsewhere become available.
	if n := min(numAvailable-desired, len(shouldNotRun)); n > 0 {
		del = append(del, shouldNotRun[:n]...)
	}
	remaining := min(max(maxSurge-numSurge, 0), len(candidateNew))
	create := append(allowedNew, candidateNew[:remaining]...)
	if len(del) == 0 && len(create) == 0 {
		return nil
	}
	return c.syncNodes(ctx, store, ds, del, create, taken, hash)
}

// allowsSurge is upstream's AllowsSurge.
func allowsSurge(ds *appsv1.DaemonSet) bool {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return false
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, 1, true)
	return err == nil && v > 0
}

// writeStatus is upstream's updateDaemonSetStatus; it returns when to look again for
// pods becoming available after minReadySeconds.
func (c *DaemonSet) writeStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, cc int32) (time.Duration, error) {
	now := c.opts.Clock.Now()
	var requeue time.Duration
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, Conditions: ds.Status.Conditions, CollisionCount: &cc}
	pl := newPlacement(ds)
	for _, node := range nodes {
		shouldRun, _ := pl.shouldRun(node)
		pods := byNode[node.Name]
		scheduled := len(pods) > 0
		if shouldRun {
			st.DesiredNumberScheduled++
			if scheduled {
				st.CurrentNumberScheduled++
				p := pods[0]
				if isPodReady(p) {
					st.NumberReady++
					if isPodAvailable(p, ds.Spec.MinReadySeconds, now) {
						st.NumberAvailable++
					} else if ds.Spec.MinReadySeconds > 0 {
						requeue = time.Duration(ds.Spec.MinReadySeconds) * time.Second
					}
				}
				if isDaemonPodUpdated(p, hash, templateGeneration(ds)) {
					st.UpdatedNumberScheduled++
				}
			}
		} else if scheduled {
			st.NumberMisscheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	if apiequality.Semantic.DeepEqual(st, ds.Status) {
		return requeue, nil
	}
	rv := ds.ResourceVersion
	_, err := c.store.Update(ctx, c.store.Catalogue().Get(daemonSetGVR), ds.Namespace, ds.Name, "status", func(o runtime.Object) (runtime.Object, error) {
		cur, err := controller.As[*appsv1.DaemonSet](o)
		if err != nil {
			return nil, err
		}
		cur.ResourceVersion = rv
		cur.Status = st
		return cur, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return requeue, err
}
