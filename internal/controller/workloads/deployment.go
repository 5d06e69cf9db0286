package workloads

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/davecgh/go-spew/spew"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/workqueue"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's deployment annotations and condition reasons (pkg/controller/deployment/util).
const (
	RevisionAnnotation         = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation  = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation  = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation      = "deployment.kubernetes.io/max-replicas"
	reasonReplicaSetUpdated    = "ReplicaSetUpdated"
	reasonFailedRSCreate       = "ReplicaSetCreateError"
	reasonNewReplicaSet        = "NewReplicaSetCreated"
	reasonFoundNewRS           = "FoundNewReplicaSet"
	reasonNewRSAvailable       = "NewReplicaSetAvailable"
	reasonTimedOut             = "ProgressDeadlineExceeded"
	reasonPaused               = "DeploymentPaused"
	reasonResumed              = "DeploymentResumed"
	reasonMinimumAvailable     = "MinimumReplicasAvailable"
	reasonMinimumUnavailable   = "MinimumReplicasUnavailable"
	maxRevHistoryLengthInChars = 2000
)

var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true,
	RevisionAnnotation:                 true,
	RevisionHistoryAnnotation:          true,
	DesiredReplicasAnnotation:          true,
	MaxReplicasAnnotation:              true,
	appsv1.DeprecatedRollbackTo:        true,
}

// Deployment is upstream's Deployment controller: it creates the ReplicaSet of the current
// pod template (named <deployment>-<pod-template-hash>), scales ReplicaSets for Recreate and
// RollingUpdate rollouts and scaling events, keeps the revision annotations and history
// limit, and reports status and the Available, Progressing and ReplicaFailure conditions.
type Deployment struct {
	base
	// deployments holds every Deployment; replicaSets every ReplicaSet, indexed by
	// controller; pods the views of the pods ReplicaSets control (what a Recreate rollout
	// waits on), indexed by controller. writes holds each Deployment's last ReplicaSet
	// write, which its next sync waits for.
	deployments, replicaSets *controller.Index
	pods                     *controller.PodSub
	writes                   controller.Revisions
}

// NewDeployment returns the Deployment controller (events from "deployment-controller").
func NewDeployment(store controller.Client, log *slog.Logger, opts Options) *Deployment {
	c := &Deployment{base: newBase(store, log, opts, "deployment", "deployment-controller"),
		deployments: controller.NewIndex(nil), replicaSets: controller.NewIndex(nil)}
	c.pods = c.opts.Pods.Sub(controller.PodFilter{ControlledBy: []schema.GroupVersionKind{replicaSetKind}})
	return c
}

// Start runs the controller until ctx ends.
func (c *Deployment) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := controller.NewQueue("deployment")
	c.watch(ctx, q)
	c.loop.Process(ctx, q, c.opts.Workers, c.sync)
	return nil
}

// watch starts the watches feeding the controller's indexes, whose handlers add to q the
// Deployments to sync, until ctx ends.
func (c *Deployment) watch(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) {
	cat := c.store.Catalogue()
	// The watch handlers find owners in indexes fed by the same watches (a watch event
	// arriving before its owner's is harmless: the owner's own event enqueues it).
	go c.loop.WatchIndex(ctx, cat.Get(deploymentGVR), c.deployments, controller.On(func(d *appsv1.Deployment, deleted bool) {
		if deleted {
			c.writes.Forget(keyOf(d.Namespace, d.Name))
		}
		q.Add(keyOf(d.Namespace, d.Name))
	}))
	go c.loop.WatchIndex(ctx, cat.Get(replicaSetGVR), c.replicaSets, controller.On(func(rs *appsv1.ReplicaSet, deleted bool) {
		if ref := metav1.GetControllerOf(rs); ref != nil {
			if ref.Kind == deploymentKind.Kind && ref.APIVersion == deploymentKind.GroupVersion().String() {
				q.Add(keyOf(rs.Namespace, ref.Name))
			}
			return
		}
		if deleted {
			return
		}
		for _, o := range c.deployments.List(rs.Namespace) {
			d, ok := o.(*appsv1.Deployment)
			if !ok {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(rs.Labels)) {
				q.Add(keyOf(d.Namespace, d.Name))
			}
		}
	}))
	// Recreate waits for the old pods to be gone or finished: the last one of a ReplicaSet
	// to go enqueues its Deployment (upstream's deletePod).
	c.pods.OnChange(func(old, cur runtime.Object, deleted bool) {
		if key, ok := c.recreateMayProceed(old, cur, deleted); ok {
			q.Add(key)
		}
	})
	c.pods.Start(ctx, c.loop, nil)
}

// recreateMayProceed returns the key of the Recreate Deployment whose rollout a change of
// a pod's view (old, cur and deleted as Index.OnChange gives them) may let proceed: an
// unfinished pod is now gone, finished or no longer its ReplicaSet's, no other pod of
// that ReplicaSet is unfinished, and the ReplicaSet's controller is a Deployment using
// Recreate.
func (c *Deployment) recreateMayProceed(old, cur runtime.Object, deleted bool) (string, bool) {
	was, _ := old.(*controller.PodView)
	now, _ := cur.(*controller.PodView)
	if deleted {
		was, now = now, nil // a deletion's cur is the view the index held
	}
	if was == nil || !unfinished(was) {
		return "", false
	}
	ref := viewController(was)
	if ref == nil {
		return "", false
	}
	if now != nil && unfinished(now) {
		if r := viewController(now); r != nil && r.UID == ref.UID {
			return "", false // still an unfinished pod of its ReplicaSet
		}
	}
	rs, ok := c.replicaSets.Get(was.Namespace, ref.Name).(*appsv1.ReplicaSet)
	if !ok || rs.UID != ref.UID {
		return "", false
	}
	dref := metav1.GetControllerOfNoCopy(rs)
	if dref == nil || dref.Kind != deploymentKind.Kind || dref.APIVersion != deploymentKind.GroupVersion().String() {
		return "", false
	}
	d, ok := c.deployments.Get(rs.Namespace, dref.Name).(*appsv1.Deployment)
	if !ok || d.UID != dref.UID || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		return "", false
	}
	if c.pods.AnyControlled(rs.Namespace, rs.UID, unfinished) {
		return "", false
	}
	return keyOf(d.Namespace, d.Name), true
}

// viewController is the controller reference of a pod's view (nil: none).
func viewController(v *controller.PodView) *metav1.OwnerReference {
	for i := range v.OwnerReferences {
		if r := &v.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// unfinished reports a pod (or its view) whose phase is neither Failed nor Succeeded:
// what a Recreate rollout waits for.
func unfinished(o runtime.Object) bool {
	var phase corev1.PodPhase
	switch p := o.(type) {
	case *controller.PodView:
		phase = p.Phase
	case *corev1.Pod:
		phase = p.Status.Phase
	default:
		return false
	}
	return phase != corev1.PodFailed && phase != corev1.PodSucceeded
}

// dsync carries one sync of one Deployment.
type dsync struct {
	c *Deployment
	// store is the controller's, recording the ReplicaSet writes of this sync (which the
	// next sync of this Deployment waits for the index to hold).
	store controller.Client
	d     *appsv1.Deployment
	// writtenAnnotations are the annotations last stored for d.
	writtenAnnotations map[string]string
	requeue            time.Duration
}

func (c *Deployment) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name := splitKey(key)
	obj, err := c.store.Get(ctx, c.store.Catalogue().Get(deploymentGVR), ns, name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	d, err := controller.As[*appsv1.Deployment](obj)
	if err != nil {
		return 0, err
	}
	if d.Spec.Replicas == nil || d.Spec.Selector == nil {
		return 0, nil
	}
	if err := c.writes.Await(ctx, c.replicaSets, key); err != nil {
		return 0, err
	}
	store := c.writes.Tracked(c.store, c.store.Catalogue().Get(replicaSetGVR), key)
	s := &dsync{c: c, store: store, d: d, writtenAnnotations: copyMap(d.Annotations)}
	err = s.run(ctx)
	return s.requeue, retryErr(err)
}

// run is upstream's syncDeployment.
func (s *dsync) run(ctx context.Context) error {
	d := s.d
	if reflect.DeepEqual(d.Spec.Selector, &metav1.LabelSelector{}) {
		s.c.rec.Eventf(ctx, d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			return s.write(ctx)
		}
		return nil
	}
	rsList, err := s.replicaSets(ctx)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		newRS, oldRSs, err := s.allReplicaSetsAndSyncRevision(ctx, rsList, false)
		if err != nil {
			return err
		}
		return s.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS)
	}
	if err := s.checkPausedConditions(ctx); err != nil {
		return err
	}
	if d.Spec.Paused {
		return s.syncScale(ctx, rsList)
	}
	scaling, err := s.isScalingEvent(ctx, rsList)
	if err != nil {
		return err
	}
	if scaling {
		return s.syncScale(ctx, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return s.rolloutRecreate(ctx, rsList)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return s.rolloutRolling(ctx, rsList)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// write stores d's annotations (main resource) and status (status subresource), each
// guarded by the resourceVersion this sync holds.
func (s *dsync) write(ctx context.Context) error {
	res := s.store.Catalogue().Get(deploymentGVR)
	d := s.d
	if !reflect.DeepEqual(d.Annotations, s.writtenAnnotations) {
		ann := copyMap(d.Annotations)
		r, err := s.store.Update(ctx, res, d.Namespace, d.Name, "", func(o runtime.Object) (runtime.Object, error) {
			cur, err := controller.As[*appsv1.Deployment](o)
			if err != nil {
				return nil, err
			}
			cur.ResourceVersion = d.ResourceVersion
			cur.Annotations = ann
			return cur, nil
		}, registry.WriteOptions{})
		if err != nil {
			return err
		}
		m, err := controller.Meta(r.Object)
		if err != nil {
			return err
		}
		d.ResourceVersion = m.GetResourceVersion()
		s.writtenAnnotations = ann
	}
	st := *d.Status.DeepCopy()
	r, err := s.store.Update(ctx, res, d.Namespace, d.Name, "status", func(o runtime.Object) (runtime.Object, error) {
		cur, err := controller.As[*appsv1.Deployment](o)
		if err != nil {
			return nil, err
		}
		cur.ResourceVersion = d.ResourceVersion
		cur.Status = st
		return cur, nil
	}, registry.WriteOptions{})
	if err != nil {
		return err
	}
	m, err := controller.Meta(r.Object)
	if err != nil {
		return err
	}
	d.ResourceVersion = m.GetResourceVersion()
	return nil
}

// replicaSets lists the ReplicaSets the Deployment controls, adopting and releasing as
// upstream's ReplicaSetControllerRefManager.
func (s *dsync) replicaSets(ctx context.Context) ([]*appsv1.ReplicaSet, error) {
	d := s.d
	res := s.store.Catalogue().Get(replicaSetGVR)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, nil
	}
	// The ReplicaSets it controls and the orphans, from the index (copies: a sync changes
	// them).
	objs := append(s.c.replicaSets.Controlled(d.Namespace, d.UID), s.c.replicaSets.Controlled(d.Namespace, "")...)
	var out []*appsv1.ReplicaSet
	var canAdopt *bool
	for _, o := range objs {
		rs, err := controller.As[*appsv1.ReplicaSet](o)
		if err != nil {
			return nil, err
		}
		rs = rs.DeepCopy()
		ref := metav1.GetControllerOf(rs)
		matches := sel.Matches(labels.Set(rs.Labels))
		switch {
		case ref != nil && ref.UID != d.UID:
		case ref != nil && matches:
			out = append(out, rs)
		case ref != nil:
			if d.DeletionTimestamp == nil {
				if err := patchOwnerRefs(ctx, s.c.store, replicaSetGVR, rs.Namespace, rs.Name, rs.UID, d.UID, nil); err != nil && !apierrors.IsNotFound(err) {
					return nil, err
				}
			}
		case matches && d.DeletionTimestamp == nil && rs.DeletionTimestamp == nil:
			if canAdopt == nil {
				ok := recheckOwner(ctx, s.c.store, deploymentGVR, d.ObjectMeta)
				canAdopt = &ok
			}
			if !*canAdopt {
				continue
			}
			if err := patchOwnerRefs(ctx, s.c.store, replicaSetGVR, rs.Namespace, rs.Name, rs.UID, "", controllerRef(d, deploymentKind)); err != nil {
				continue
			}
			fresh, err := s.store.Get(ctx, res, rs.Namespace, rs.Name)
			if err != nil {
				continue
			}
			if rs, ok := fresh.(*appsv1.ReplicaSet); ok {
				out = append(out, rs)
			}
		}
	}
	return out, nil
}

func (s *dsync) now() metav1.Time { return metav1.NewTime(s.c.opts.Clock.Now()) }

func (s *dsync) newCondition(t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, msg string) appsv1.DeploymentCondition {
	now := s.now()
	return appsv1.DeploymentCondition{Type: t, Status: status, LastUpdateTime: now, LastTransitionTime: now, Reason: reason, Message: msg}
}

// checkPausedConditions is upstream's: a paused deployment has a Progressing Unknown
// condition so that no progress is estimated while it is paused.
func (s *dsync) checkPausedConditions(ctx context.Context) error {
	d := s.d
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := getDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == reasonTimedOut {
		return nil
	}
	pausedExists := cond != nil && cond.Reason == reasonPaused
	switch {
	case d.Spec.Paused && !pausedExists:
		setDeploymentCondition(&d.Status, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, reasonPaused, "Deployment is paused"))
	case !d.Spec.Paused && pausedExists:
		setDeploymentCondition(&d.Status, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, reasonResumed, "Deployment is resumed"))
	default:
		return nil
	}
	return s.write(ctx)
}

// allReplicaSetsAndSyncRevision is upstream's getAllReplicaSetsAndSyncRevision.
func (s *dsync) allReplicaSetsAndSyncRevision(ctx context.Context, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	_, allOld := findOldReplicaSets(s.d, rsList)
	newRS, err := s.newReplicaSet(ctx, rsList, allOld, create)
	if err != nil {
		return nil, nil, err
	}
	return newRS, allOld, nil
}

// newReplicaSet is upstream's getNewReplicaSet.
func (s *dsync) newReplicaSet(ctx context.Context, rsList, oldRSs []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	d := s.d
	store := s.store
	rsRes := store.Catalogue().Get(replicaSetGVR)
	existing := findNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(maxRevision(oldRSs)+1, 10)
	if existing != nil {
		rsCopy := existing.DeepCopy()
		annotationsUpdated := setNewReplicaSetAnnotations(d, rsCopy, newRevision, true)
		if annotationsUpdated || rsCopy.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rsCopy.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			return s.updateRS(ctx, rsCopy)
		}
		needsUpdate := setDeploymentRevision(d, rsCopy.Annotations[RevisionAnnotation])
		if hasProgressDeadline(d) && getDeploymentCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			setDeploymentCondition(&d.Status, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonFoundNewRS, fmt.Sprintf("Found new replica set %q", rsCopy.Name)))
			needsUpdate = true
		}
		if needsUpdate {
			if err := s.write(ctx); err != nil {
				return nil, err
			}
		}
		return rsCopy, nil
	}
	if !create {
		return nil, nil
	}
	// A new ReplicaSet, named deterministically from the template hash.
	tmpl := *d.Spec.Template.DeepCopy()
	hash := computeHash(&tmpl, d.Status.CollisionCount)
	tmpl.Labels = copyMap(d.Spec.Template.Labels)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[podTemplateLabel] = hash
	sel := d.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[podTemplateLabel] = hash
	newRS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name + "-" + hash, Namespace: d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*controllerRef(d, deploymentKind)},
			Labels:          copyMap(tmpl.Labels),
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: tmpl},
	}
	count, err := newRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS), newRS)
	if err != nil {
		return nil, err
	}
	*newRS.Spec.Replicas = count
	setNewReplicaSetAnnotations(d, newRS, newRevision, false)
	alreadyExists := false
	var created *appsv1.ReplicaSet
	r, err := store.Create(ctx, rsRes, d.Namespace, newRS, registry.WriteOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		alreadyExists = true
		cur, gerr := store.Get(ctx, rsRes, d.Namespace, newRS.Name)
		if gerr != nil {
			return nil, gerr
		}
		rs, aerr := controller.As[*appsv1.ReplicaSet](cur)
		if aerr != nil {
			return nil, aerr
		}
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
			created = rs
			err = nil
			break
		}
		// A hash collision: bump collisionCount and try again on the next sync.
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		_ = s.write(ctx)
		return nil, err
	case isNamespaceTerminating(err):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", newRS.Name, err)
		if hasProgressDeadline(d) {
			setDeploymentCondition(&d.Status, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, reasonFailedRSCreate, msg))
			_ = s.write(ctx)
		}
		s.c.rec.Event(ctx, d, corev1.EventTypeWarning, reasonFailedRSCreate, msg)
		return nil, err
	default:
		if created, err = controller.As[*appsv1.ReplicaSet](r.Object); err != nil {
			return nil, err
		}
	}
	if !alreadyExists && count > 0 {
		s.c.rec.Eventf(ctx, d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s to %d", created.Name, count)
	}
	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExists && hasProgressDeadline(d) {
		setDeploymentCondition(&d.Status, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonNewReplicaSet, fmt.Sprintf("Created new replica set %q", created.Name)))
		needsUpdate = true
	}
	if needsUpdate {
		if err := s.write(ctx); err != nil {
			return created, err
		}
	}
	return created, nil
}

// updateRS writes a ReplicaSet's metadata and spec, guarded by the resourceVersion read.
func (s *dsync) updateRS(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	want := rs.DeepCopy()
	r, err := s.store.Update(ctx, s.store.Catalogue().Get(replicaSetGVR), rs.Namespace, rs.Name, "", func(o runtime.Object) (runtime.Object, error) {
		cur, err := controller.As[*appsv1.ReplicaSet](o)
		if err != nil {
			return nil, err
		}
		cur.ResourceVersion = want.ResourceVersion
		cur.Annotations = want.Annotations
		cur.Spec = want.Spec
		return cur, nil
	}, registry.WriteOptions{})
	if err != nil {
		return nil, err
	}
	return controller.As[*appsv1.ReplicaSet](r.Object)
}

// isScalingEvent is upstream's: an active ReplicaSet's desired-replicas annotation differs
// from the Deployment's replicas.
func (s *dsync) isScalingEvent(ctx context.Context, rsList []*appsv1.ReplicaSet) (bool, error) {
	newRS, oldRSs, err := s.allReplicaSetsAndSyncRevision(ctx, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range filterActiveReplicaSets(append(oldRSs, newRS)) {
		desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
		if ok && desired != *s.d.Spec.Replicas {
			return true, nil
		}
	}
	return false, nil
}

// syncScale is upstream's sync: scaling events and paused deployments.
func (s *dsync) syncScale(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := s.allReplicaSetsAndSyncRevision(ctx, rsList, false)
	if err != nil {
		return err
	}
	if err := s.scale(ctx, newRS, oldRSs); err != nil {
		return err
	}
	if s.d.Spec.Paused {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS)
}

// scale is upstream's proportional scaling.
func (s *dsync) scale(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if al := findActiveOrLatest(newRS, oldRSs); al != nil {
		if *al.Spec.Replicas == *d.Spec.Replicas {
			return nil
		}
		_, _, err := s.scaleAndRecord(ctx, al, *d.Spec.Replicas)
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range filterActiveReplicaSets(oldRSs) {
			if _, _, err := s.scaleAndRecord(ctx, old, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return nil
	}
	all := filterActiveReplicaSets(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	allReplicas := replicaCount(all)
	allowed := int32(0)
	if *d.Spec.Replicas > 0 {
		allowed = *d.Spec.Replicas + maxSurge(d)
	}
	toAdd := allowed - allReplicas
	var op string
	switch {
	case toAdd > 0:
		sort.SliceStable(all, func(i, j int) bool { return bySizeNewer(all[i], all[j]) })
		op = "up"
	case toAdd < 0:
		sort.SliceStable(all, func(i, j int) bool { return bySizeOlder(all[i], all[j]) })
		op = "down"
	}
	added := int32(0)
	sizes := map[string]int32{}
	for _, rs := range all {
		if toAdd != 0 {
			p := proportion(rs, d, toAdd, added)
			sizes[rs.Name] = *rs.Spec.Replicas + p
			added += p
		} else {
			sizes[rs.Name] = *rs.Spec.Replicas
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[rs.Name] += toAdd - added
			if sizes[rs.Name] < 0 {
				sizes[rs.Name] = 0
			}
		}
		if _, _, err := s.scaleRS(ctx, rs, sizes[rs.Name], op); err != nil {
			return err
		}
	}
	return nil
}

func (s *dsync) scaleAndRecord(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32) (bool, *appsv1.ReplicaSet, error) {
	if *rs.Spec.Replicas == newScale {
		return false, rs, nil
	}
	op := "down"
	if *rs.Spec.Replicas < newScale {
		op = "up"
	}
	return s.scaleRS(ctx, rs, newScale, op)
}

// scaleRS is upstream's scaleReplicaSet: size and replicas annotations in one write.
func (s *dsync) scaleRS(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32, op string) (bool, *appsv1.ReplicaSet, error) {
	d := s.d
	sizeNeedsUpdate := *rs.Spec.Replicas != newScale
	annNeedsUpdate := replicasAnnotationsNeedUpdate(rs, *d.Spec.Replicas, *d.Spec.Replicas+maxSurge(d))
	if !sizeNeedsUpdate && !annNeedsUpdate {
		return false, rs, nil
	}
	oldScale := *rs.Spec.Replicas
	rsCopy := rs.DeepCopy()
	*rsCopy.Spec.Replicas = newScale
	setReplicasAnnotations(rsCopy, *d.Spec.Replicas, *d.Spec.Replicas+maxSurge(d))
	updated, err := s.updateRS(ctx, rsCopy)
	if err != nil {
		return false, rs, err
	}
	if sizeNeedsUpdate {
		s.c.rec.Eventf(ctx, d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s to %d from %d", op, updated.Name, newScale, oldScale)
	}
	return sizeNeedsUpdate, updated, nil
}

// cleanup is upstream's cleanupDeployment: keep revisionHistoryLimit old ReplicaSets.
func (s *dsync) cleanup(ctx context.Context, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit == math.MaxInt32 {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := int32(len(cleanable)) - *d.Spec.RevisionHistoryLimit
	if diff <= 0 {
		return nil
	}
	sort.SliceStable(cleanable, func(i, j int) bool {
		ri, _ := revisionOf(cleanable[i])
		rj, _ := revisionOf(cleanable[j])
		if ri == rj {
			return olderRS(cleanable[i], cleanable[j])
		}
		return ri < rj
	})
	res := s.store.Catalogue().Get(replicaSetGVR)
	for i := int32(0); i < diff; i++ {
		rs := cleanable[i]
		if rs.Status.Replicas != 0 || *rs.Spec.Replicas != 0 || rs.Generation > rs.Status.ObservedGeneration || rs.DeletionTimestamp != nil {
			continue
		}
		uid := rs.UID
		if _, err := s.store.Delete(ctx, res, rs.Namespace, rs.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// rolloutRolling is upstream's rolloutRolling.
func (s *dsync) rolloutRolling(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := s.allReplicaSetsAndSyncRevision(ctx, rsList, true)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledUp, err := s.reconcileNewReplicaSet(ctx, all, newRS)
	if err != nil {
		return err
	}
	if scaledUp {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	scaledDown, err := s.reconcileOldReplicaSets(ctx, all, filterActiveReplicaSets(oldRSs), newRS)
	if err != nil {
		return err
	}
	if scaledDown {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	if deploymentComplete(s.d, &s.d.Status) {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, all, newRS)
}

func (s *dsync) reconcileNewReplicaSet(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	d := s.d
	if *newRS.Spec.Replicas == *d.Spec.Replicas {
		return false, nil
	}
	if *newRS.Spec.Replicas > *d.Spec.Replicas {
		scaled, _, err := s.scaleAndRecord(ctx, newRS, *d.Spec.Replicas)
		return scaled, err
	}
	n, err := newRSNewReplicas(d, all, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := s.scaleAndRecord(ctx, newRS, n)
	return scaled, err
}

func (s *dsync) reconcileOldReplicaSets(ctx context.Context, all, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	d := s.d
	if replicaCount(oldRSs) == 0 {
		return false, nil
	}
	allPods := replicaCount(all)
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	newUnavailable := *newRS.Spec.Replicas - newRS.Status.AvailableReplicas
	maxScaledDown := allPods - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	// 1. Unhealthy replicas of old ReplicaSets go first.
	sort.SliceStable(oldRSs, func(i, j int) bool { return olderRS(oldRSs[i], oldRSs[j]) })
	cleaned := int32(0)
	for i, rs := range oldRSs {
		if cleaned >= maxScaledDown {
			break
		}
		if *rs.Spec.Replicas == 0 || *rs.Spec.Replicas == rs.Status.AvailableReplicas {
			continue
		}
		n := min(maxScaledDown-cleaned, *rs.Spec.Replicas-rs.Status.AvailableReplicas)
		_, updated, err := s.scaleAndRecord(ctx, rs, *rs.Spec.Replicas-n)
		if err != nil {
			return false, err
		}
		cleaned += n
		oldRSs[i] = updated
	}
	// 2. Then available old replicas, down to minAvailable.
	all = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	available := availableCount(all)
	scaled := int32(0)
	if available > minAvailable {
		total := available - minAvailable
		for _, rs := range oldRSs {
			if scaled >= total {
				break
			}
			if *rs.Spec.Replicas == 0 {
				continue
			}
			n := min(*rs.Spec.Replicas, total-scaled)
			if _, _, err := s.scaleAndRecord(ctx, rs, *rs.Spec.Replicas-n); err != nil {
				return false, err
			}
			scaled += n
		}
	}
	return cleaned+scaled > 0, nil
}

// rolloutRecreate is upstream's rolloutRecreate.
func (s *dsync) rolloutRecreate(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	d := s.d
	newRS, oldRSs, err := s.allReplicaSetsAndSyncRevision(ctx, rsList, false)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown := false
	for _, rs := range filterActiveReplicaSets(oldRSs) {
		if *rs.Spec.Replicas == 0 {
			continue
		}
		scaled, _, err := s.scaleAndRecord(ctx, rs, 0)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	running, err := s.oldPodsRunning(ctx, newRS, oldRSs)
	if err != nil {
		return err
	}
	if running {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	if newRS == nil {
		newRS, oldRSs, err = s.allReplicaSetsAndSyncRevision(ctx, rsList, true)
		if err != nil {
			return err
		}
		all = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	}
	if _, _, err := s.scaleAndRecord(ctx, newRS, *d.Spec.Replicas); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, all, newRS)
}

// oldPodsRunning is upstream's: old ReplicaSets still report replicas, or pods of old
// ReplicaSets (not the new one) are not finished. The pods are read from the index once
// it holds the current pods.
func (s *dsync) oldPodsRunning(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) (bool, error) {
	if actualCount(oldRSs) > 0 {
		return true, nil
	}
	wctx, cancel := context.WithTimeout(ctx, controller.WriteWait)
	defer cancel()
	if err := s.c.pods.WaitFor(wctx, 0); err != nil {
		return false, fmt.Errorf("waiting for the pods cache: %w", err)
	}
	for _, rs := range oldRSs {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		if s.c.pods.AnyControlled(s.d.Namespace, rs.UID, unfinished) {
			return true, nil
		}
	}
	return false, nil
}

// calculateDeploymentStatus is upstream's calculateStatus.
func (s *dsync) calculateStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) appsv1.DeploymentStatus {
	d := s.d
	available := availableCount(all)
	unavailable := replicaCount(all) - available
	if unavailable < 0 {
		unavailable = 0
	}
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            actualCount(all),
		UpdatedReplicas:     actualCount([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       readyCount(all),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		CollisionCount:      d.Status.CollisionCount,
	}
	st.Conditions = append(st.Conditions, d.Status.Conditions...)
	if available >= *d.Spec.Replicas-maxUnavailable(d) {
		setDeploymentCondition(&st, s.newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, reasonMinimumAvailable, "Deployment has minimum availability."))
	} else {
		setDeploymentCondition(&st, s.newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, reasonMinimumUnavailable, "Deployment does not have minimum availability."))
	}
	return st
}

// syncDeploymentStatus is upstream's: status without progress estimation.
func (s *dsync) syncDeploymentStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := s.calculateStatus(all, newRS)
	if apiequality.Semantic.DeepEqual(s.d.Status, st) {
		return nil
	}
	s.d.Status = st
	return s.write(ctx)
}

// syncRolloutStatus is upstream's: status with the Progressing and ReplicaFailure conditions.
func (s *dsync) syncRolloutStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	d := s.d
	st := s.calculateStatus(all, newRS)
	if !hasProgressDeadline(d) {
		removeDeploymentCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == reasonNewRSAvailable
	if hasProgressDeadline(d) && !complete {
		switch {
		case deploymentComplete(d, &st):
			msg := fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name)
			}
			setDeploymentCondition(&st, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonNewRSAvailable, msg))
		case deploymentProgressing(d, &st):
			msg := fmt.Sprintf("Deployment %q is progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
			}
			cond := s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, reasonReplicaSetUpdated, msg)
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					cond.LastTransitionTime = cur.LastTransitionTime
				}
				removeDeploymentCondition(&st, appsv1.DeploymentProgressing)
			}
			setDeploymentCondition(&st, cond)
		case s.timedOut(&st):
			msg := fmt.Sprintf("Deployment %q has timed out progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
			}
			setDeploymentCondition(&st, s.newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, reasonTimedOut, msg))
		}
	}
	if failures := replicaFailures(all, newRS); len(failures) > 0 {
		setDeploymentCondition(&st, failures[0])
	} else {
		removeDeploymentCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		s.requeue = s.requeueStuck(&st)
		return nil
	}
	d.Status = st
	return s.write(ctx)
}

func (s *dsync) timedOut(st *appsv1.DeploymentStatus) bool {
	if !hasProgressDeadline(s.d) {
		return false
	}
	cond := getDeploymentCondition(*st, appsv1.DeploymentProgressing)
	if cond == nil || cond.Reason == reasonNewRSAvailable {
		return false
	}
	if cond.Reason == reasonTimedOut {
		return true
	}
	delta := time.Duration(*s.d.Spec.ProgressDeadlineSeconds) * time.Second
	return cond.LastUpdateTime.Add(delta).Before(s.c.opts.Clock.Now())
}

// requeueStuck is upstream's requeueStuckDeployment: when to check the deadline again.
func (s *dsync) requeueStuck(st *appsv1.DeploymentStatus) time.Duration {
	cur := getDeploymentCondition(s.d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(s.d) || cur == nil {
		return 0
	}
	if deploymentComplete(s.d, st) || cur.Reason == reasonTimedOut {
		return 0
	}
	after := cur.LastUpdateTime.Add(time.Duration(*s.d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(s.c.opts.Clock.Now())
	if after < time.Second {
		return time.Second
	}
	return after + time.Second
}

func replicaFailures(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []appsv1.DeploymentCondition {
	conv := func(c appsv1.ReplicaSetCondition) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, LastUpdateTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}
	var out []appsv1.DeploymentCondition
	if newRS != nil {
		for _, c := range newRS.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				out = append(out, conv(c))
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, rs := range all {
		if rs == nil {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				out = append(out, conv(c))
			}
		}
	}
	return out
}

// computeHash is upstream's controller.ComputeHash: fnv32a over the spew dump of the
// template (and the collision count), encoded with rand.SafeEncodeString.
func computeHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(h, "%#v", *t)
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, podTemplateLabel)
	delete(b.Labels, podTemplateLabel)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

func olderRS(a, b *appsv1.ReplicaSet) bool {
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.Name < b.Name
	}
	return a.CreationTimestamp.Before(&b.CreationTimestamp)
}

func bySizeNewer(a, b *appsv1.ReplicaSet) bool {
	if *a.Spec.Replicas == *b.Spec.Replicas {
		return olderRS(b, a)
	}
	return *a.Spec.Replicas > *b.Spec.Replicas
}

func bySizeOlder(a, b *appsv1.ReplicaSet) bool {
	if *a.Spec.Replicas == *b.Spec.Replicas {
		return olderRS(a, b)
	}
	return *a.Spec.Replicas > *b.Spec.Replicas
}

func findNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderRS(sorted[i], sorted[j]) })
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

func findOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) ([]*appsv1.ReplicaSet, []*appsv1.ReplicaSet) {
	newRS := findNewReplicaSet(d, rsList)
	var required, all []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		all = append(all, rs)
		if *rs.Spec.Replicas != 0 {
			required = append(required, rs)
		}
	}
	return required, all
}

func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	sorted := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.SliceStable(sorted, func(i, j int) bool { return olderRS(sorted[j], sorted[i]) })
	active := filterActiveReplicaSets(append(sorted, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return active[0]
	}
	return nil
}

func filterActiveReplicaSets(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && *rs.Spec.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	if err != nil {
		return false
	}
	return *rs.Spec.Replicas == *d.Spec.Replicas && int32(desired) == *d.Spec.Replicas && rs.Status.AvailableReplicas == *d.Spec.Replicas
}

func sumRS(rss []*appsv1.ReplicaSet, f func(*appsv1.ReplicaSet) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs)
		}
	}
	return n
}

func replicaCount(rss []*appsv1.ReplicaSet) int32 {
	return sumRS(rss, func(rs *appsv1.ReplicaSet) int32 { return *rs.Spec.Replicas })
}
func actualCount(rss []*appsv1.ReplicaSet) int32 {
	return sumRS(rss, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.Replicas })
}
func readyCount(rss []*appsv1.ReplicaSet) int32 {
	return sumRS(rss, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.ReadyReplicas })
}
func availableCount(rss []*appsv1.ReplicaSet) int32 {
	return sumRS(rss, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.AvailableReplicas })
}

// resolveFenceposts is upstream's ResolveFenceposts.
func resolveFenceposts(surge, unavailable *intstr.IntOrString, desired int32) (int32, int32) {
	zero := intstr.FromInt32(0)
	s, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(surge, zero), int(desired), true)
	u, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(unavailable, zero), int(desired), false)
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u)
}

func maxUnavailable(d *appsv1.Deployment) int32 {
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || *d.Spec.Replicas == 0 || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	_, u := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, *d.Spec.Replicas)
	if u > *d.Spec.Replicas {
		return *d.Spec.Replicas
	}
	return u
}

func maxSurge(d *appsv1.Deployment) int32 {
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	s, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, *d.Spec.Replicas)
	return s
}

// newRSNewReplicas is upstream's NewRSNewReplicas.
func newRSNewReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		surge, err := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxSurge, int(*d.Spec.Replicas), true)
		if err != nil {
			return 0, err
		}
		current := replicaCount(all)
		maxTotal := *d.Spec.Replicas + int32(surge)
		if current >= maxTotal {
			return *newRS.Spec.Replicas, nil
		}
		up := min(maxTotal-current, *d.Spec.Replicas-*newRS.Spec.Replicas)
		return *newRS.Spec.Replicas + up, nil
	case appsv1.RecreateDeploymentStrategyType:
		return *d.Spec.Replicas, nil
	}
	return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
}

// proportion is upstream's GetProportion.
func proportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || *rs.Spec.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := rsFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func rsFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if *d.Spec.Replicas == 0 {
		return -*rs.Spec.Replicas
	}
	deploymentReplicas := *d.Spec.Replicas + maxSurge(d)
	annotated, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || annotated == 0 {
		annotated = d.Status.Replicas
	}
	if annotated == 0 {
		return 0
	}
	size := float64(*rs.Spec.Replicas*deploymentReplicas) / float64(annotated)
	return int32(math.Round(size)) - *rs.Spec.Replicas
}

func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

func revisionOf(rs *appsv1.ReplicaSet) (int64, error) {
	v, ok := rs.Annotations[RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		if v, err := revisionOf(rs); err == nil && v > m {
			m = v
		}
	}
	return m
}

func setDeploymentRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[RevisionAnnotation] != revision {
		d.Annotations[RevisionAnnotation] = revision
		return true
	}
	return false
}

// setNewReplicaSetAnnotations is upstream's SetNewReplicaSetAnnotations.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if annotationsToSkip[k] || rs.Annotations[k] == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	oldRevision, ok := rs.Annotations[RevisionAnnotation]
	oldInt, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldInt = 0
	}
	newInt, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldInt < newInt {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
	}
	if ok && oldInt < newInt {
		history := rs.Annotations[RevisionHistoryAnnotation]
		olds := splitComma(history)
		if len(olds) == 0 {
			rs.Annotations[RevisionHistoryAnnotation] = oldRevision
		} else {
			total := len(history) + len(oldRevision) + 1
			start := 0
			for total > maxRevHistoryLengthInChars && start < len(olds) {
				total -= len(olds[start]) + 1
				start++
			}
			if total <= maxRevHistoryLengthInChars {
				rs.Annotations[RevisionHistoryAnnotation] = joinComma(append(olds[start:], oldRevision))
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, *d.Spec.Replicas, *d.Spec.Replicas+maxSurge(d)) {
		changed = true
	}
	return changed
}

func splitComma(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	if v := fmt.Sprintf("%d", desired); rs.Annotations[DesiredReplicasAnnotation] != v {
		rs.Annotations[DesiredReplicasAnnotation] = v
		changed = true
	}
	if v := fmt.Sprintf("%d", maxReplicas); rs.Annotations[MaxReplicasAnnotation] != v {
		rs.Annotations[MaxReplicasAnnotation] = v
		changed = true
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != fmt.Sprintf("%d", desired) ||
		rs.Annotations[MaxReplicasAnnotation] != fmt.Sprintf("%d", maxReplicas)
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	return st.UpdatedReplicas == *d.Spec.Replicas && st.Replicas == *d.Spec.Replicas &&
		st.AvailableReplicas == *d.Spec.Replicas && st.ObservedGeneration >= d.Generation
}

func deploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		(st.Replicas-st.UpdatedReplicas) < (old.Replicas-old.UpdatedReplicas) ||
		st.ReadyReplicas > old.ReadyReplicas || st.AvailableReplicas > old.AvailableReplicas
}

func getDeploymentCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			c := st.Conditions[i]
			return &c
		}
	}
	return nil
}

// setDeploymentCondition is upstream's: same status and reason keep the current condition;
// same status keeps lastTransitionTime.
func setDeploymentCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getDeploymentCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeDeploymentCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

func removeDeploymentCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
}
