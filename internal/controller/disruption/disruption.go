package disruption

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// DeletionTimeout is how long an eviction's entry in disruptedPods keeps its pod out of
// currentHealthy while the pod is not yet deleted (upstream's DeletionTimeout).
const DeletionTimeout = 2 * time.Minute

// ScaleFunc returns the replicas of a pod's controller, and whether it has one that scales.
type ScaleFunc func(ns string, ref metav1.OwnerReference) (int32, bool, error)

// Selects reports whether a policy/v1 budget selects pod: a nil selector selects nothing,
// an empty one every pod of the namespace.
func Selects(pdb *policyv1.PodDisruptionBudget, pod *corev1.Pod) bool {
	if pdb.Spec.Selector == nil || pod.Namespace != pdb.Namespace {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(pod.Labels))
}

// podReady is upstream's IsPodReady.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Compute returns the status pdb should have given the pods it selects (already
// filtered), the scale of their controllers and the time now, and when it should be
// computed again (an entry of disruptedPods expires), 0 for never.
//  1. expectedPods and desiredHealthy from minAvailable or maxUnavailable.
//  2. disruptedPods: entries of pods gone or being deleted dropped, expired ones dropped.
//  3. currentHealthy: Ready pods not being deleted and not recently disrupted.
//  4. disruptionsAllowed and the DisruptionAllowed condition.
func Compute(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, scale ScaleFunc, now time.Time) (policyv1.PodDisruptionBudgetStatus, time.Duration, error) {
	st := *pdb.Status.DeepCopy()
	expected, desired, err := expectations(pdb, pods, scale)
	if err != nil {
		return st, 0, err
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	var disrupted map[string]metav1.Time
	var recheck time.Duration
	for name, at := range pdb.Status.DisruptedPods {
		p := byName[name]
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		expires := at.Add(DeletionTimeout)
		if !now.Before(expires) {
			continue
		}
		if disrupted == nil {
			disrupted = map[string]metav1.Time{}
		}
		disrupted[name] = at
		if d := expires.Sub(now); recheck == 0 || d < recheck {
			recheck = d
		}
	}
	var healthy int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil || !podReady(p) {
			continue
		}
		if _, ok := disrupted[p.Name]; ok {
			continue
		}
		healthy++
	}
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	st.CurrentHealthy, st.DesiredHealthy, st.ExpectedPods, st.DisruptionsAllowed = healthy, desired, expected, allowed
	st.DisruptedPods = disrupted
	st.ObservedGeneration = pdb.Generation
	setCondition(&st, now)
	return st, recheck, nil
}

// expectations is upstream's getExpectedPodCount.
func expectations(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, scale ScaleFunc) (expected, desired int32, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, err = expectedScale(pdb, pods, scale)
		if err != nil {
			return 0, 0, err
		}
		max, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		desired = expected - int32(max)
		if desired < 0 {
			desired = 0
		}
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired = pdb.Spec.MinAvailable.IntVal
		expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		expected, err = expectedScale(pdb, pods, scale)
		if err != nil {
			return 0, 0, err
		}
		min, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		desired = int32(min)
	}
	// Neither set: nothing expected, so no disruption is allowed (as upstream).
	return expected, desired, nil
}

// expectedScale sums the replicas of the distinct controllers of pods; a pod without a
// scalable controller counts as one.
func expectedScale(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, scale ScaleFunc) (int32, error) {
	seen := map[string]bool{}
	var n int64
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || scale == nil {
			n++
			continue
		}
		if seen[string(ref.UID)] {
			continue
		}
		seen[string(ref.UID)] = true
		r, ok, err := scale(pdb.Namespace, *ref)
		if err != nil {
			return 0, err
		}
		if !ok {
			n++
			continue
		}
		n += int64(r)
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return int32(n), nil
}

// setCondition is upstream's UpdateDisruptionAllowedCondition.
func setCondition(st *policyv1.PodDisruptionBudgetStatus, now time.Time) {
	c := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}
	if st.DisruptionsAllowed > 0 {
		c.Status, c.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	} else {
		c.Status, c.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	setOrReplace(st, c)
}

// setOrReplace puts c among the conditions, keeping the transition time when the status
// did not change.
func setOrReplace(st *policyv1.PodDisruptionBudgetStatus, c metav1.Condition) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

// Controller keeps PodDisruptionBudget statuses current.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	clock clock.PassiveClock

	mu sync.Mutex
	// budgets is, per namespace, the selectors of its budgets by name (from the watch), so
	// a pod event finds the budgets to sync without reading storage.
	budgets map[string]map[string]*policyv1.PodDisruptionBudget
	// pods delivers every pod event (the controller keeps none).
	pods *controller.PodSub
}

// New returns the controller; panics counts recovered panics (may be nil); pods, when
// set, is the watch of pods shared with the other controllers watching every pod (nil: a
// watch of its own).
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver, pods *controller.SharedPods) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("disruption", store, log, panics, nil), clock: clock.RealClock{},
		budgets: map[string]map[string]*policyv1.PodDisruptionBudget{}, pods: pods.Sub(controller.PodFilter{})}
}

func (c *Controller) res(gvr schema.GroupVersionResource) *registry.Resource {
	return c.store.Catalogue().Get(gvr)
}

var (
	pdbGVR  = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	podsGVR = corev1.SchemeGroupVersion.WithResource("pods")
)

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("disruption")
	go c.loop.Watch(ctx, c.res(pdbGVR), controller.On(func(pdb *policyv1.PodDisruptionBudget, deleted bool) {
		c.mu.Lock()
		if deleted {
			delete(c.budgets[pdb.Namespace], pdb.Name)
		} else {
			if c.budgets[pdb.Namespace] == nil {
				c.budgets[pdb.Namespace] = map[string]*policyv1.PodDisruptionBudget{}
			}
			c.budgets[pdb.Namespace][pdb.Name] = pdb
		}
		c.mu.Unlock()
		if !deleted {
			q.Add(pdb.Namespace + "/" + pdb.Name)
		}
	}))
	c.pods.Start(ctx, c.loop, controller.On(func(pod *corev1.Pod, _ bool) {
		c.mu.Lock()
		var keys []string
		for name, pdb := range c.budgets[pod.Namespace] {
			if Selects(pdb, pod) {
				keys = append(keys, pod.Namespace+"/"+name)
			}
		}
		c.mu.Unlock()
		for _, k := range keys {
			q.Add(k)
		}
	}))
	c.loop.Process(ctx, q, 2, c.sync)
	return nil
}

// sync recomputes one budget's status and writes it when it differs.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	pdbRes := c.res(pdbGVR)
	obj, err := c.store.Get(ctx, pdbRes, ns, name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	pdb, err := controller.As[*policyv1.PodDisruptionBudget](obj)
	if err != nil {
		return 0, err
	}
	objs, _, err := c.store.ListObjects(ctx, c.res(podsGVR), ns)
	if err != nil {
		return 0, err
	}
	var pods []*corev1.Pod
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && Selects(pdb, p) {
			pods = append(pods, p)
		}
	}
	st, recheck, cerr := Compute(pdb, pods, c.scale(ctx), c.clock.Now())
	if cerr != nil {
		// Upstream's failSafe: no disruption allowed, the reason in the condition.
		st = *pdb.Status.DeepCopy()
		st.DisruptionsAllowed = 0
		st.ObservedGeneration = pdb.Generation
		setOrReplace(&st, metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason,
			Message: cerr.Error(), ObservedGeneration: pdb.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now().Truncate(time.Second))})
	}
	if equality.Semantic.DeepEqual(st, pdb.Status) {
		return recheck, nil
	}
	_, err = c.store.Update(ctx, pdbRes, ns, name, "status", func(cur runtime.Object) (runtime.Object, error) {
		p, err := controller.As[*policyv1.PodDisruptionBudget](cur)
		if err != nil {
			return nil, err
		}
		if p.ResourceVersion != pdb.ResourceVersion {
			// Changed since computed (an eviction took a disruption): compute again.
			return nil, apierrors.NewConflict(pdbRes.GroupResource(), name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		p.Status = st
		return p, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if apierrors.IsConflict(err) {
		return time.Millisecond, nil
	}
	return recheck, err
}

// scale reads the replicas of a pod's controller (a Deployment's for its ReplicaSets).
func (c *Controller) scale(ctx context.Context) ScaleFunc {
	return func(ns string, ref metav1.OwnerReference) (int32, bool, error) {
		var gvr schema.GroupVersionResource
		switch {
		case ref.Kind == "ReplicaSet" && strings.HasPrefix(ref.APIVersion, "apps/"):
			gvr = appsv1.SchemeGroupVersion.WithResource("replicasets")
		case ref.Kind == "StatefulSet" && strings.HasPrefix(ref.APIVersion, "apps/"):
			gvr = appsv1.SchemeGroupVersion.WithResource("statefulsets")
		case ref.Kind == "ReplicationController" && ref.APIVersion == "v1":
			gvr = corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
		default:
			return 0, false, nil
		}
		obj, err := c.store.Get(ctx, c.res(gvr), ns, ref.Name)
		if apierrors.IsNotFound(err) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		switch o := obj.(type) {
		case *appsv1.ReplicaSet:
			if d := metav1.GetControllerOf(o); d != nil && d.Kind == "Deployment" {
				if dobj, err := c.store.Get(ctx, c.res(appsv1.SchemeGroupVersion.WithResource("deployments")), ns, d.Name); err == nil {
					if dep, ok := dobj.(*appsv1.Deployment); ok && dep.UID == d.UID {
						return replicas(dep.Spec.Replicas), true, nil
					}
				}
			}
			return replicas(o.Spec.Replicas), true, nil
		case *appsv1.StatefulSet:
			return replicas(o.Spec.Replicas), true, nil
		case *corev1.ReplicationController:
			return replicas(o.Spec.Replicas), true, nil
		}
		return 0, false, nil
	}
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
