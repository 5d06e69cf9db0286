package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/registry"
)

// ReplicaSet is upstream's ReplicaSet controller; the same type runs the
// ReplicationController controller (upstream converts RCs to ReplicaSets the same way).
// It keeps spec.replicas active pods matching the selector, adopts and releases pods,
// and reports status.replicas, readiness and the ReplicaFailure condition.
type ReplicaSet struct {
	base
	kind schema.GroupVersionKind
	gvr  schema.GroupVersionResource
	name string
	// selectors holds every owner's pod selector, kept by the owner watch, so an orphan
	// pod's event finds the owners that may adopt it without reading storage.
	selectors ownerSelectors
	// pods holds the views of the pods this kind controls and of the orphans, indexed by
	// controller; writes holds each owner's last pod write, which its next sync waits for.
	pods   *controller.PodSub
	writes controller.Revisions
}

// ownerSelectors maps namespace → owner name → pod selector.
type ownerSelectors struct {
	mu sync.RWMutex
	m  map[string]map[string]labels.Selector
}

func (o *ownerSelectors) set(ns, name string, sel labels.Selector) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if sel == nil {
		delete(o.m[ns], name)
		return
	}
	if o.m == nil {
		o.m = map[string]map[string]labels.Selector{}
	}
	if o.m[ns] == nil {
		o.m[ns] = map[string]labels.Selector{}
	}
	o.m[ns][name] = sel
}

// matching returns the keys of the owners in ns whose selector matches set.
func (o *ownerSelectors) matching(ns string, set labels.Set) []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var out []string
	for name, sel := range o.m[ns] {
		if sel.Matches(set) {
			out = append(out, keyOf(ns, name))
		}
	}
	return out
}

// NewReplicaSet returns the ReplicaSet controller (events from "replicaset-controller").
func NewReplicaSet(store controller.Client, log *slog.Logger, opts Options) *ReplicaSet {
	return newReplicaManager(store, log, opts, replicaSetKind, replicaSetGVR, "replicaset", "replicaset-controller")
}

// NewReplicationController returns the ReplicationController controller (events from
// "replication-controller").
func NewReplicationController(store controller.Client, log *slog.Logger, opts Options) *ReplicaSet {
	return newReplicaManager(store, log, opts, rcKind, rcGVR, "replicationcontroller", "replication-controller")
}

func newReplicaManager(store controller.Client, log *slog.Logger, opts Options, kind schema.GroupVersionKind, gvr schema.GroupVersionResource, name, component string) *ReplicaSet {
	c := &ReplicaSet{base: newBase(store, log, opts, name, component), kind: kind, gvr: gvr, name: name}
	c.pods = c.opts.Pods.Sub(ownedPods(kind))
	return c
}

// controls reports whether ref names an owner of this controller's kind.
func (c *ReplicaSet) controls(ref *metav1.OwnerReference) bool {
	return ref.Kind == c.kind.Kind && ref.APIVersion == c.kind.GroupVersion().String()
}

func (c *ReplicaSet) res(gvr schema.GroupVersionResource) *registry.Resource {
	return c.store.Catalogue().Get(gvr)
}

// Start runs the controller until ctx ends.
func (c *ReplicaSet) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := controller.NewQueue(c.name)
	go c.loop.Watch(ctx, c.res(c.gvr), func(obj runtime.Object, deleted bool) {
		m, err := controller.Meta(obj)
		if err != nil {
			return
		}
		if deleted {
			c.starved.set(keyOf(m.GetNamespace(), m.GetName()), false)
			c.selectors.set(m.GetNamespace(), m.GetName(), nil)
			c.writes.Forget(keyOf(m.GetNamespace(), m.GetName()))
		} else {
			c.selectors.set(m.GetNamespace(), m.GetName(), ownerSelector(c.toRS(obj)))
		}
		q.Add(keyOf(m.GetNamespace(), m.GetName()))
	})
	c.pods.Start(ctx, c.loop, controller.On(func(p *corev1.Pod, deleted bool) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			if c.controls(ref) {
				q.Add(keyOf(p.Namespace, ref.Name))
			}
			return
		}
		if deleted {
			return
		}
		// An orphan: every owner whose selector matches may adopt it.
		if len(p.Labels) == 0 {
			return
		}
		for _, key := range c.selectors.matching(p.Namespace, labels.Set(p.Labels)) {
			q.Add(key)
		}
	}))
	go c.starved.retryOnQuotaChange(ctx, c.loop, c.store, q)
	c.loop.Process(ctx, q, c.opts.Workers, c.sync)
	return nil
}

// ownerSelector returns an owner's pod selector, or nil when it selects nothing.
func ownerSelector(rs *appsv1.ReplicaSet) labels.Selector {
	if rs == nil || rs.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil
	}
	return sel
}

// toRS returns the ReplicaSet view of an owner (RCs converted as upstream does).
func (c *ReplicaSet) toRS(obj runtime.Object) *appsv1.ReplicaSet {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		return o
	case *corev1.ReplicationController:
		rs := &appsv1.ReplicaSet{ObjectMeta: o.ObjectMeta}
		rs.Spec.Replicas = o.Spec.Replicas
		rs.Spec.MinReadySeconds = o.Spec.MinReadySeconds
		if o.Spec.Selector != nil {
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: o.Spec.Selector}
		}
		if o.Spec.Template != nil {
			rs.Spec.Template = *o.Spec.Template
		}
		rs.Status = appsv1.ReplicaSetStatus{
			Replicas: o.Status.Replicas, FullyLabeledReplicas: o.Status.FullyLabeledReplicas,
			ReadyReplicas: o.Status.ReadyReplicas, AvailableReplicas: o.Status.AvailableReplicas,
			ObservedGeneration: o.Status.ObservedGeneration,
		}
		for _, cond := range o.Status.Conditions {
			rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
				Type: appsv1.ReplicaSetConditionType(cond.Type), Status: cond.Status,
				LastTransitionTime: cond.LastTransitionTime, Reason: cond.Reason, Message: cond.Message,
			})
		}
		return rs
	}
	return nil
}

// setStatus writes a ReplicaSet status into the owner object.
func (c *ReplicaSet) setStatus(obj runtime.Object, st appsv1.ReplicaSetStatus) {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		o.Status = st
	case *corev1.ReplicationController:
		o.Status = corev1.ReplicationControllerStatus{
			Replicas: st.Replicas, FullyLabeledReplicas: st.FullyLabeledReplicas,
			ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas,
			ObservedGeneration: st.ObservedGeneration,
		}
		for _, cond := range st.Conditions {
			o.Status.Conditions = append(o.Status.Conditions, corev1.ReplicationControllerCondition{
				Type: corev1.ReplicationControllerConditionType(cond.Type), Status: cond.Status,
				LastTransitionTime: cond.LastTransitionTime, Reason: cond.Reason, Message: cond.Message,
			})
		}
	}
}

// sync is upstream's syncReplicaSet.
func (c *ReplicaSet) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name := splitKey(key)
	// 1. The owner, read at the latest revision.
	obj, err := c.store.Get(ctx, c.res(c.gvr), ns, name)
	if apierrors.IsNotFound(err) {
		c.starved.set(key, false)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rs := c.toRS(obj)
	if rs == nil {
		return 0, fmt.Errorf("unexpected object %T, want %s", obj, c.kind.Kind)
	}
	if rs.Spec.Selector == nil || rs.Spec.Replicas == nil {
		return 0, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return 0, nil
	}
	// 2. Its pods: the active pods it controls or may adopt, from the index once it holds
	// every pod write of this owner's earlier syncs (so none is created twice).
	if err := c.writes.Await(ctx, c.pods, key); err != nil {
		return 0, err
	}
	active := activePods(c.pods, ns, rs.UID, selector)
	store := c.writes.Tracked(c.store, c.res(podGVR), key)
	owned, err := claimPods(ctx, store, c.log, obj, rs.ObjectMeta, c.kind, c.gvr, selector, active)
	if err != nil {
		return 0, err
	}
	// 3. Create or delete pods, unless the owner is being deleted.
	var manageErr error
	if rs.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, store, obj, rs, owned)
	}
	c.starved.set(key, manageErr != nil && isQuotaRefusal(manageErr))
	// 4. Status from the pods seen at the start, as upstream.
	st := calculateRSStatus(rs, owned, manageErr, c.opts.Clock.Now())
	if err := c.updateStatus(ctx, obj, rs, st); err != nil {
		return 0, err
	}
	if manageErr != nil {
		return 0, retryErr(manageErr)
	}
	if rs.Spec.MinReadySeconds > 0 && st.ReadyReplicas == *rs.Spec.Replicas && st.AvailableReplicas != *rs.Spec.Replicas {
		return time.Duration(rs.Spec.MinReadySeconds) * time.Second, nil
	}
	return 0, nil
}

func (c *ReplicaSet) updateStatus(ctx context.Context, obj runtime.Object, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	cur := rs.Status
	if cur.Replicas == st.Replicas && cur.FullyLabeledReplicas == st.FullyLabeledReplicas &&
		cur.ReadyReplicas == st.ReadyReplicas && cur.AvailableReplicas == st.AvailableReplicas &&
		rs.Generation == cur.ObservedGeneration && reflect.DeepEqual(cur.Conditions, st.Conditions) {
		return nil
	}
	st.ObservedGeneration = rs.Generation
	rv := rs.ResourceVersion
	_, err := c.store.Update(ctx, c.res(c.gvr), rs.Namespace, rs.Name, "status", func(o runtime.Object) (runtime.Object, error) {
		// Guarded by the resourceVersion this sync read: a concurrent change requeues.
		m, err := controller.Meta(o)
		if err != nil {
			return nil, err
		}
		m.SetResourceVersion(rv)
		c.setStatus(o, st)
		return o, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// manageReplicas is upstream's manageReplicas.
func (c *ReplicaSet) manageReplicas(ctx context.Context, store controller.Client, owner runtime.Object, rs *appsv1.ReplicaSet, pods []*controller.PodView) error {
	diff := len(pods) - int(*rs.Spec.Replicas)
	ref := controllerRef(rs, c.kind)
	switch {
	case diff < 0:
		diff = -diff
		if diff > burstReplicas {
			diff = burstReplicas
		}
		_, err := slowStartBatch(diff, slowStartInitialBatch, func(int) error {
			return createPod(ctx, store, c.rec, owner, &rs.Spec.Template, podsPrefix(rs.Name), ref)
		})
		return err
	case diff > 0:
		if diff > burstReplicas {
			diff = burstReplicas
		}
		victims := append([]*controller.PodView(nil), pods...)
		sortForDeletion(victims, viewRank)
		return deletePods(ctx, store, c.rec, owner, viewPods(victims[:diff]))
	}
	return nil
}

// calculateRSStatus is upstream's calculateStatus.
func calculateRSStatus(rs *appsv1.ReplicaSet, pods []*controller.PodView, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	// The pods matched the selector (claimPods); when it asks exactly the template's
	// labels, as a Deployment's ReplicaSets do, each is fully labelled without a look.
	sameAsSelector := rs.Spec.Selector != nil && len(rs.Spec.Selector.MatchExpressions) == 0 && maps.Equal(rs.Spec.Selector.MatchLabels, rs.Spec.Template.Labels)
	var fully, ready, available int32
	for _, v := range pods {
		if sameAsSelector || templateLabels.Matches(labels.Set(v.Labels)) {
			fully++
		}
		if v.Ready == corev1.ConditionTrue {
			ready++
			if readyFor(v.ReadySince, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	var failure *appsv1.ReplicaSetCondition
	for i := range st.Conditions {
		if st.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
			failure = &st.Conditions[i]
		}
	}
	switch {
	case manageErr != nil && failure == nil:
		reason := ""
		if diff := len(pods) - int(*rs.Spec.Replicas); diff < 0 {
			reason = "FailedCreate"
		} else if diff > 0 {
			reason = "FailedDelete"
		}
		st.Conditions = append(filterRSConditions(st.Conditions, appsv1.ReplicaSetReplicaFailure), appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure != nil:
		st.Conditions = filterRSConditions(st.Conditions, appsv1.ReplicaSetReplicaFailure)
	}
	st.Replicas = int32(len(pods))
	st.FullyLabeledReplicas = fully
	st.ReadyReplicas = ready
	st.AvailableReplicas = available
	return st
}

func filterRSConditions(cs []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) []appsv1.ReplicaSetCondition {
	var out []appsv1.ReplicaSetCondition
	for _, c := range cs {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// slowStartBatch is upstream's: batches of 1, 2, 4, … run in parallel; the first batch with
// an error stops the rest. It returns the number of successful calls.
func slowStartBatch(count, initial int, fn func(i int) error) (int, error) {
	remaining := count
	successes := 0
	next := 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for i := 0; i < batch; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if err := fn(i); err != nil {
					errs <- err
				}
			}(next + i)
		}
		wg.Wait()
		next += batch
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= batch
	}
	return successes, nil
}

// createPod is upstream's PodControl.CreatePods for one pod, with its events.
// The pod is named by the registry from prefix (generateName): a fresh name for every
// attempt, so each refusal names the pod it refused, as upstream.
func createPod(ctx context.Context, store controller.Client, rec *record.Recorder, owner runtime.Object, t *corev1.PodTemplateSpec, prefix string, ref *metav1.OwnerReference) error {
	m, err := controller.Meta(owner)
	if err != nil {
		return err
	}
	p := podFromTemplate(t, "", ref)
	p.GenerateName = prefix
	if len(p.Labels) == 0 {
		return fmt.Errorf("unable to create pods, no labels")
	}
	res, err := store.Create(ctx, store.Catalogue().Get(podGVR), m.GetNamespace(), p, registry.WriteOptions{})
	if err != nil {
		if isNamespaceTerminating(err) {
			return nil
		}
		rec.Eventf(ctx, owner, corev1.EventTypeWarning, reasonFailedCreate, "Error creating: %v", err)
		return err
	}
	if cm, err := controller.Meta(res.Object); err == nil {
		p.Name = cm.GetName()
	}
	rec.Eventf(ctx, owner, corev1.EventTypeNormal, reasonSuccessfulCreate, "Created pod: %v", p.Name)
	return nil
}

// deletePods deletes pods in parallel as upstream, with SuccessfulDelete/FailedDelete events.
func deletePods(ctx context.Context, store controller.Client, rec *record.Recorder, owner runtime.Object, pods []*corev1.Pod) error {
	errs := make(chan error, len(pods))
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Add(1)
		go func(p *corev1.Pod) {
			defer wg.Done()
			if err := deletePod(ctx, store, rec, owner, p); err != nil {
				errs <- err
			}
		}(p)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func deletePod(ctx context.Context, store controller.Client, rec *record.Recorder, owner runtime.Object, p *corev1.Pod) error {
	uid := p.UID
	_, err := store.Delete(ctx, store.Catalogue().Get(podGVR), p.Namespace, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		rec.Eventf(ctx, owner, corev1.EventTypeWarning, reasonFailedDelete, "Error deleting: %v", err)
		return err
	}
	rec.Eventf(ctx, owner, corev1.EventTypeNormal, reasonSuccessfulDelete, "Deleted pod: %v", p.Name)
	return nil
}

// activePods returns, from the index of pod views, the views of the active pods the owner
// of uid controls and of the active orphans its selector matches, owned ones first, in no
// order: a ReplicaSet's sync counts them, and ranks those it deletes by a total order of
// its own. A sync runs on every change of any of its pods and reads them all, so it reads
// the views themselves: a pod is made only of those it deletes.
func activePods(x controller.Cache, ns string, uid types.UID, selector labels.Selector) []*controller.PodView {
	return claimable(x, ns, uid, selector, controller.CachedView, viewActive, false)
}

// podMeta is what claiming reads of a pod, or of its view (controller.PodView).
type podMeta interface {
	comparable
	GetNamespace() string
	GetName() string
	GetUID() types.UID
	GetLabels() map[string]string
	GetOwnerReferences() []metav1.OwnerReference
	GetDeletionTimestamp() *metav1.Time
}

// claimable returns, from the index, the pods the owner of uid controls and the orphans
// its selector matches (all claimPods may own) for which keep (nil: all) is true, each
// read from the index's object by as (the zero value: not a pod), owned ones first, each
// part in name order when sorted.
//
// A sync reads them all on every change of any of them, so neither the index's names nor
// the objects are copied.
func claimable[P podMeta](x controller.Cache, ns string, uid types.UID, selector labels.Selector, as func(runtime.Object) P, keep func(P) bool, sorted bool) []P {
	var out []P
	var none P
	for _, owner := range []types.UID{uid, ""} {
		from := len(out)
		x.EachControlled(ns, owner, func(o runtime.Object) {
			p := as(o)
			if p == none || (keep != nil && !keep(p)) || (owner == "" && !selector.Matches(labels.Set(p.GetLabels()))) {
				return
			}
			out = append(out, p)
		})
		if sorted {
			slices.SortFunc(out[from:], func(a, b P) int { return strings.Compare(a.GetName(), b.GetName()) })
		}
	}
	return out
}

// claimPods is upstream's PodControllerRefManager.ClaimPods: keep owned pods that match,
// adopt matching orphans (unless the owner is being deleted), release owned pods that no
// longer match.
func claimPods[P podMeta](ctx context.Context, store controller.Client, log *slog.Logger, owner runtime.Object, om metav1.ObjectMeta, kind schema.GroupVersionKind, gvr schema.GroupVersionResource, selector labels.Selector, pods []P) ([]P, error) {
	out := make([]P, 0, len(pods))
	var canAdopt *bool
	for _, p := range pods {
		ref := controller.ControllerOf(p.GetOwnerReferences())
		matches := selector.Matches(labels.Set(p.GetLabels()))
		switch {
		case ref != nil && ref.UID != om.UID:
			continue
		case ref != nil && matches:
			out = append(out, p)
		case ref != nil:
			if om.DeletionTimestamp != nil {
				continue
			}
			if err := patchOwnerRefs(ctx, store, podGVR, p.GetNamespace(), p.GetName(), p.GetUID(), om.UID, nil); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		case matches && om.DeletionTimestamp == nil && p.GetDeletionTimestamp() == nil:
			if canAdopt == nil {
				ok := recheckOwner(ctx, store, gvr, om)
				canAdopt = &ok
			}
			if !*canAdopt {
				continue
			}
			if err := patchOwnerRefs(ctx, store, podGVR, p.GetNamespace(), p.GetName(), p.GetUID(), "", controllerRef(&om, kind)); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				log.Debug("cannot adopt pod", "pod", p.GetName(), "err", err)
				continue
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// recheckOwner is upstream's RecheckDeletionTimestamp: adopt only for a live, same-UID owner.
func recheckOwner(ctx context.Context, store controller.Client, gvr schema.GroupVersionResource, om metav1.ObjectMeta) bool {
	fresh, err := store.Get(ctx, store.Catalogue().Get(gvr), om.Namespace, om.Name)
	if err != nil {
		return false
	}
	m, err := controller.Meta(fresh)
	if err != nil {
		return false
	}
	return m.GetUID() == om.UID && m.GetDeletionTimestamp() == nil
}

// patchOwnerRefs removes the ownerReference to remove (if set) and adds add (if set, and no
// other controller is set) on one object, guarded by its UID.
func patchOwnerRefs(ctx context.Context, store controller.Client, gvr schema.GroupVersionResource, ns, name string, uid, remove types.UID, add *metav1.OwnerReference) error {
	_, err := store.Update(ctx, store.Catalogue().Get(gvr), ns, name, "", func(o runtime.Object) (runtime.Object, error) {
		m, err := controller.Meta(o)
		if err != nil {
			return nil, err
		}
		if m.GetUID() != uid {
			return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
		}
		var refs []metav1.OwnerReference
		for _, r := range m.GetOwnerReferences() {
			if remove != "" && r.UID == remove {
				continue
			}
			if add != nil && r.Controller != nil && *r.Controller {
				return nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("object already has a controller"))
			}
			refs = append(refs, r)
		}
		if add != nil {
			if m.GetDeletionTimestamp() != nil {
				return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
			}
			refs = append(refs, *add)
		}
		m.SetOwnerReferences(refs)
		return o, nil
	}, registry.WriteOptions{})
	return err
}
