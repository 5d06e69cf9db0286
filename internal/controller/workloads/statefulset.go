package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

var (
	statefulSetKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	statefulSetGVR  = appsv1.SchemeGroupVersion.WithResource("statefulsets")
	pvcGVR          = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	podKind         = corev1.SchemeGroupVersion.WithKind("Pod")
)

// statefulPodRegex is upstream's: a member pod is named <parent>-<ordinal>.
var statefulPodRegex = regexp.MustCompile("(.*)-([0-9]+)$")

// defaultRevisionHistoryLimit is upstream's default of spec.revisionHistoryLimit.
const defaultRevisionHistoryLimit = 10

// StatefulSet is upstream's StatefulSet controller: ordinal pods <name>-<ordinal> with
// stable identity labels, hostname and subdomain; the claims of volumeClaimTemplates
// (<template>-<name>-<ordinal>) created before their pod, so they are charged to storage
// quota like any claim; OrderedReady and Parallel pod management; RollingUpdate (with
// partition, highest ordinal first) and OnDelete through ControllerRevisions; the PVC
// retention policy through owner references, as upstream; and status. A refused create
// is a FailedCreate event with upstream's text and a retry.
type StatefulSet struct {
	base
	// pods holds the StatefulSets' pods and the labelled orphans a selector may adopt
	// (views), indexed by controller; writes holds each set's last pod write, which its
	// next sync waits for.
	pods   *controller.PodSub
	writes controller.Revisions
}

// NewStatefulSet returns the StatefulSet controller (events from "statefulset-controller").
func NewStatefulSet(store controller.Client, log *slog.Logger, opts Options) *StatefulSet {
	c := &StatefulSet{base: newBase(store, log, opts, "statefulset", "statefulset-controller")}
	c.pods = c.opts.Pods.Sub(ownedPods(statefulSetKind))
	return c
}

// Start runs the controller until ctx ends.
func (c *StatefulSet) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	c.owned(ctx, controller.NewQueue("statefulset"), statefulSetKind, statefulSetGVR, c.subFeed(c.pods), func(obj runtime.Object, deleted bool) {
		if m, err := controller.Meta(obj); err == nil && deleted {
			c.writes.Forget(keyOf(m.GetNamespace(), m.GetName()))
		}
	}, c.sync)
	return nil
}

// parentAndOrdinal is upstream's getParentNameAndOrdinal (-1 when not a member name).
func parentAndOrdinal(p *corev1.Pod) (string, int) {
	m := statefulPodRegex.FindStringSubmatch(p.Name)
	if len(m) < 3 {
		return "", -1
	}
	o, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return m[1], -1
	}
	return m[1], int(o)
}

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func stsPodName(set *appsv1.StatefulSet, ordinal int) string {
	return set.Name + "-" + strconv.Itoa(ordinal)
}

// claimName is upstream's getPersistentVolumeClaimName.
func claimName(set *appsv1.StatefulSet, t *corev1.PersistentVolumeClaim, ordinal int) string {
	return t.Name + "-" + set.Name + "-" + strconv.Itoa(ordinal)
}

func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && isPodReady(p)
}

func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

func isFailed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }

func isSucceeded(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }

func podRevision(p *corev1.Pod) string { return p.Labels[revisionHashLabel] }

// stsSync holds one sync of one StatefulSet.
type stsSync struct {
	c *StatefulSet
	// store is the controller's, recording the revision of each pod write for the set's
	// next sync (Revisions.Tracked).
	store   controller.Client
	set     *appsv1.StatefulSet
	current *appsv1.ControllerRevision
	update  *appsv1.ControllerRevision
	curTmpl *corev1.PodTemplateSpec
	updTmpl *corev1.PodTemplateSpec
	status  appsv1.StatefulSetStatus
	now     time.Time
	requeue time.Duration
}

// sync is upstream's syncStatefulSet / updateStatefulSet.
func (c *StatefulSet) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, _ := splitKey(key)
	// 1. The set, read at the latest revision.
	set, found, err := ownerOf[*appsv1.StatefulSet](ctx, &c.base, statefulSetGVR, key)
	if !found {
		return 0, err
	}
	set = set.DeepCopy()
	if set.Spec.Selector == nil {
		return 0, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || selector.Empty() {
		return 0, nil
	}
	// 2. Its member pods, adopting orphans named as members that match the selector, from
	// the index once it holds the set's earlier pod writes (made of views: read-only).
	if err := c.writes.Await(ctx, c.pods, key); err != nil {
		return 0, err
	}
	store := c.writes.Tracked(c.store, c.store.Catalogue().Get(podGVR), key)
	var candidates []*corev1.Pod
	for _, p := range claimable(c.pods, ns, set.UID, selector, controller.CachedPod, nil, true) {
		if parent, ord := parentAndOrdinal(p); parent == set.Name && ord >= 0 {
			candidates = append(candidates, p)
		}
	}
	pods, err := claimPods(ctx, store, c.log, set, set.ObjectMeta, statefulSetKind, statefulSetGVR, selector, candidates)
	if err != nil {
		return 0, err
	}
	// 3. Its revisions: the update revision records spec.template.
	s := &stsSync{c: c, store: store, set: set, now: c.opts.Clock.Now()}
	if err := s.revisions(ctx); err != nil {
		return 0, err
	}
	// 4. Pods and claims, unless the set is being deleted.
	var manageErr error
	if set.DeletionTimestamp == nil {
		manageErr = s.manage(ctx, pods)
	} else {
		s.countStatus(pods)
	}
	c.starved.set(key, manageErr != nil && isQuotaRefusal(manageErr))
	// 5. Status, then history beyond revisionHistoryLimit.
	if err := s.writeStatus(ctx); err != nil {
		return 0, err
	}
	if manageErr == nil {
		if err := s.truncate(ctx, pods); err != nil {
			return 0, err
		}
	}
	if manageErr != nil {
		return 0, retryErr(manageErr)
	}
	return s.requeue, nil
}

// revisions finds or creates the current and update revisions.
func (s *stsSync) revisions(ctx context.Context) error {
	revs, err := ownedRevisions(ctx, s.store, s.set)
	if err != nil {
		return err
	}
	var cc int32
	if s.set.Status.CollisionCount != nil {
		cc = *s.set.Status.CollisionCount
	}
	update, cc, err := ensureRevision(ctx, s.store, s.set, statefulSetKind, &s.set.Spec.Template, revs, cc)
	if err != nil {
		return err
	}
	s.update = update
	s.current = update
	for _, r := range revs {
		if r.Name == s.set.Status.CurrentRevision && r.Name != update.Name {
			s.current = r
		}
	}
	if s.updTmpl, err = templateOf(s.update); err != nil {
		return err
	}
	if s.curTmpl, err = templateOf(s.current); err != nil {
		return err
	}
	s.status = appsv1.StatefulSetStatus{
		ObservedGeneration: s.set.Generation,
		CurrentRevision:    s.current.Name,
		UpdateRevision:     s.update.Name,
		CollisionCount:     &cc,
	}
	return nil
}

// countStatus counts pods into the status as upstream's updateStatefulSet does.
func (s *stsSync) countStatus(pods []*corev1.Pod) {
	for _, p := range pods {
		s.countPod(p)
	}
}

func (s *stsSync) countPod(p *corev1.Pod) {
	s.status.Replicas++
	if isRunningAndReady(p) {
		s.status.ReadyReplicas++
		if isPodAvailable(p, s.set.Spec.MinReadySeconds, s.now) {
			s.status.AvailableReplicas++
		} else if s.set.Spec.MinReadySeconds > 0 {
			s.requeueAfter(time.Duration(s.set.Spec.MinReadySeconds) * time.Second)
		}
	}
	if !isTerminating(p) {
		switch rev := podRevision(p); {
		case rev == s.current.Name && rev == s.update.Name:
			s.status.CurrentReplicas++
			s.status.UpdatedReplicas++
		case rev == s.current.Name:
			s.status.CurrentReplicas++
		case rev == s.update.Name:
			s.status.UpdatedReplicas++
		}
	}
}

func (s *stsSync) requeueAfter(d time.Duration) {
	if s.requeue == 0 || d < s.requeue {
		s.requeue = d
	}
}

// manage is the body of upstream's updateStatefulSet (v1.37): create, repair and delete
// pods in ordinal order, then roll the update within maxUnavailable.
func (s *stsSync) manage(ctx context.Context, pods []*corev1.Pod) error {
	set := s.set
	replicaCount := int(deref32(set.Spec.Replicas, 1))
	start := startOrdinal(set)
	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	minReady := set.Spec.MinReadySeconds
	// 1. Split pods into replicas (ordinal in range, by index) and condemned (out of
	// range, highest ordinal first). A map, not upstream's slice: spec.replicas may be
	// huge, and only existing pods are ever looked at more than once.
	replicas := make(map[int]*corev1.Pod, len(pods))
	var condemned []*corev1.Pod
	for _, p := range pods {
		_, ord := parentAndOrdinal(p)
		if ord >= start && ord < start+replicaCount {
			replicas[ord-start] = p
		} else {
			condemned = append(condemned, p)
		}
	}
	sort.Slice(condemned, func(i, j int) bool {
		_, a := parentAndOrdinal(condemned[i])
		_, b := parentAndOrdinal(condemned[j])
		return a > b
	})
	// Status counts the pods that exist at the start of the sync, as upstream.
	s.countStatus(pods)
	// The first unavailable pod: a replica (a missing one is unavailable) before the
	// condemned, lowest ordinal first. Only a condemned one matters below.
	var firstUnavailable *corev1.Pod
	replicaUnavailable := len(replicas) < replicaCount
	for _, p := range replicas {
		replicaUnavailable = replicaUnavailable || s.isUnavailable(p)
	}
	if !replicaUnavailable {
		for i := len(condemned) - 1; i >= 0; i-- {
			if s.isUnavailable(condemned[i]) {
				firstUnavailable = condemned[i]
				break
			}
		}
	}
	// 2. Replicas in ordinal order (upstream's processReplica).
	created := 0
	for i := 0; i < replicaCount; i++ {
		ord := start + i
		p := replicas[i]
		if p == nil {
			if err := s.createPod(ctx, s.newPod(ord)); err != nil {
				return err
			}
			if created++; monotonic {
				return nil
			}
			if created >= burstReplicas {
				// The rest on the next sync, at once.
				s.requeueAfter(time.Nanosecond)
				return nil
			}
			continue
		}
		if isFailed(p) || isSucceeded(p) {
			// Deleted now, created again once it is gone.
			if !isTerminating(p) {
				if err := s.deletePod(ctx, p); err != nil {
					return err
				}
			}
			if monotonic {
				return nil
			}
			continue
		}
		if p.Status.Phase == corev1.PodPending {
			if err := s.ensureClaims(ctx, p, ord); err != nil {
				return err
			}
		}
		if monotonic && (isTerminating(p) || !isRunningAndReady(p) || !isPodAvailable(p, minReady, s.now)) {
			return nil
		}
		// The invariants: identity, storage, and the retention policy's claim owners.
		if err := s.retainClaims(ctx, p, ord, false); err != nil {
			return err
		}
		if err := s.fixIdentity(ctx, p, ord); err != nil {
			return err
		}
	}
	// 3. Condemned pods hand their claims to themselves when whenScaled is Delete, then
	// go highest ordinal first, one at a time when OrderedReady, each once all others
	// are available (upstream's processCondemned).
	for _, p := range condemned {
		_, ord := parentAndOrdinal(p)
		if err := s.retainClaims(ctx, p, ord, true); err != nil {
			return err
		}
	}
	for _, p := range condemned {
		if isTerminating(p) {
			if monotonic {
				return nil
			}
			continue
		}
		if monotonic && p != firstUnavailable && (!isRunningAndReady(p) || !isPodAvailable(p, minReady, s.now)) {
			return nil
		}
		if err := s.deletePod(ctx, p); err != nil {
			return err
		}
		if monotonic {
			return nil
		}
	}
	// 4. The update (OnDelete leaves it to users).
	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return nil
	}
	return s.rollingUpdate(ctx, replicas, replicaCount, monotonic)
}

func (s *stsSync) isUnavailable(p *corev1.Pod) bool {
	return !isPodAvailable(p, s.set.Spec.MinReadySeconds, s.now) || isTerminating(p)
}

// rollingUpdate is upstream's updateStatefulSetAfterInvariantEstablished
// (MaxUnavailableStatefulSet is on in v1.37): above the partition, pods not at the update
// revision are deleted, highest ordinal first, keeping at most maxUnavailable replicas
// unavailable; Parallel sets first replace old pods that are unavailable anyway.
func (s *stsSync) rollingUpdate(ctx context.Context, replicas map[int]*corev1.Pod, replicaCount int, monotonic bool) error {
	set := s.set
	updateMin, maxUnavailable := 0, 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			updateMin = int(*ru.Partition)
		}
		v, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, intstr.FromInt32(1)), replicaCount, false)
		if err != nil {
			return err
		}
		maxUnavailable = max(v, 1)
	}
	// Existing replicas, highest index first; missing ones count as unavailable.
	idx := make([]int, 0, len(replicas))
	for i := range replicas {
		idx = append(idx, i)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(idx)))
	unavailable := replicaCount - len(replicas)
	needingUpdate := 0
	for _, i := range idx {
		p := replicas[i]
		if s.isUnavailable(p) {
			unavailable++
			if !monotonic && podRevision(p) != s.update.Name && !isTerminating(p) {
				needingUpdate++
			}
		}
	}
	if unavailable >= maxUnavailable && needingUpdate == 0 {
		return nil
	}
	del := func(p *corev1.Pod) error {
		if err := s.deletePod(ctx, p); err != nil {
			return err
		}
		s.status.CurrentReplicas--
		return nil
	}
	old := func(p *corev1.Pod) bool { return podRevision(p) != s.update.Name }
	if !monotonic {
		// Phase 1: old pods unavailable anyway; phase 2: available old pods, within budget.
		for _, i := range idx {
			if p := replicas[i]; i >= updateMin && old(p) && !isPodAvailable(p, set.Spec.MinReadySeconds, s.now) && !isTerminating(p) {
				if err := del(p); err != nil {
					return err
				}
			}
		}
		budget := maxUnavailable - unavailable
		for _, i := range idx {
			if p := replicas[i]; budget > 0 && i >= updateMin && old(p) && !s.isUnavailable(p) {
				if err := del(p); err != nil {
					return err
				}
				budget--
			}
		}
		return nil
	}
	toDelete := maxUnavailable - unavailable
	for _, i := range idx {
		if p := replicas[i]; toDelete > 0 && i >= updateMin && old(p) && !isTerminating(p) {
			if err := del(p); err != nil {
				return err
			}
			toDelete--
		}
	}
	return nil
}

// newPod is upstream's newVersionedStatefulSetPod: the current revision's template below
// the partition (RollingUpdate), the update revision's otherwise, with identity and storage.
func (s *stsSync) newPod(ord int) *corev1.Pod {
	set := s.set
	t, rev := s.updTmpl, s.update.Name
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		ru := set.Spec.UpdateStrategy.RollingUpdate
		if (ru == nil && ord < startOrdinal(set)+int(set.Status.CurrentReplicas)) ||
			(ru != nil && ru.Partition != nil && ord < startOrdinal(set)+int(*ru.Partition)) {
			t, rev = s.curTmpl, s.current.Name
		}
	}
	p := podFromTemplate(t, stsPodName(set, ord), controllerRef(set, statefulSetKind))
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[revisionHashLabel] = rev
	setIdentity(set, p, ord)
	setStorage(set, p, ord)
	return p
}

// setIdentity is upstream's updateIdentity and initIdentity.
func setIdentity(set *appsv1.StatefulSet, p *corev1.Pod, ord int) {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[appsv1.StatefulSetPodNameLabel] = p.Name
	p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
	p.Spec.Hostname = p.Name
	p.Spec.Subdomain = set.Spec.ServiceName
}

// setStorage is upstream's updateStorage: a volume per claim template, named after the
// template and bound to the ordinal's claim, replacing a template volume of that name.
func setStorage(set *appsv1.StatefulSet, p *corev1.Pod, ord int) {
	if len(set.Spec.VolumeClaimTemplates) == 0 {
		return
	}
	claims := map[string]bool{}
	var vols []corev1.Volume
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		claims[t.Name] = true
		vols = append(vols, corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(set, t, ord)},
		}})
	}
	for _, v := range p.Spec.Volumes {
		if !claims[v.Name] {
			vols = append(vols, v)
		}
	}
	p.Spec.Volumes = vols
}

// createPod is upstream's CreateStatefulPod: the claims first, then the pod, with
// upstream's events.
func (s *stsSync) createPod(ctx context.Context, p *corev1.Pod) error {
	_, ord := parentAndOrdinal(p)
	if err := s.ensureClaims(ctx, p, ord); err != nil {
		if isNamespaceTerminating(err) {
			return nil
		}
		s.c.rec.Eventf(ctx, s.set, corev1.EventTypeWarning, reasonFailedCreate, "create Pod %s in StatefulSet %s failed error: %s", p.Name, s.set.Name, err)
		return err
	}
	_, err := s.store.Create(ctx, s.store.Catalogue().Get(podGVR), s.set.Namespace, p, registry.WriteOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Another replica of this controller created it.
		return nil
	}
	if err != nil && isNamespaceTerminating(err) {
		return nil
	}
	if err != nil {
		s.c.rec.Eventf(ctx, s.set, corev1.EventTypeWarning, reasonFailedCreate, "create Pod %s in StatefulSet %s failed error: %s", p.Name, s.set.Name, err)
		return err
	}
	s.c.rec.Eventf(ctx, s.set, corev1.EventTypeNormal, reasonSuccessfulCreate, "create Pod %s in StatefulSet %s successful", p.Name, s.set.Name)
	return nil
}

// deletePod deletes a member pod with upstream's events.
func (s *stsSync) deletePod(ctx context.Context, p *corev1.Pod) error {
	uid := p.UID
	_, err := s.store.Delete(ctx, s.store.Catalogue().Get(podGVR), p.Namespace, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		s.c.rec.Eventf(ctx, s.set, corev1.EventTypeWarning, reasonFailedDelete, "delete Pod %s in StatefulSet %s failed error: %s", p.Name, s.set.Name, err)
		return err
	}
	s.c.rec.Eventf(ctx, s.set, corev1.EventTypeNormal, reasonSuccessfulDelete, "delete Pod %s in StatefulSet %s successful", p.Name, s.set.Name)
	return nil
}

// claimsOf is upstream's getPersistentVolumeClaims: one claim per template, named
// <template>-<set>-<ordinal>, labelled with the template's labels and the selector's
// matchLabels.
func claimsOf(set *appsv1.StatefulSet, ord int) []*corev1.PersistentVolumeClaim {
	var out []*corev1.PersistentVolumeClaim
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		c := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name: claimName(set, t, ord), Namespace: set.Namespace,
				Labels: copyMap(t.Labels), Annotations: copyMap(t.Annotations),
			},
			Spec: *t.Spec.DeepCopy(),
		}
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		for k, v := range set.Spec.Selector.MatchLabels {
			c.Labels[k] = v
		}
		out = append(out, c)
	}
	return out
}

// ensureClaims is upstream's createPersistentVolumeClaims and the retention
// policy's owner references for a pod within range: every missing claim is created (a
// refusal is a FailedCreate event with upstream's text), existing ones keep the refs the
// policy asks for.
func (s *stsSync) ensureClaims(ctx context.Context, p *corev1.Pod, ord int) error {
	var errs []error
	res := s.store.Catalogue().Get(pvcGVR)
	for _, claim := range claimsOf(s.set, ord) {
		cur, err := s.store.Get(ctx, res, claim.Namespace, claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			claim.OwnerReferences = claimRefs(nil, s.set, p, false)
			_, err := s.store.Create(ctx, res, claim.Namespace, claim, registry.WriteOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
				if !isNamespaceTerminating(err) {
					s.c.rec.Eventf(ctx, s.set, corev1.EventTypeWarning, reasonFailedCreate, "create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim.Name, p.Name, s.set.Name, err)
				}
				continue
			}
			s.c.rec.Eventf(ctx, s.set, corev1.EventTypeNormal, reasonSuccessfulCreate, "create Claim %s Pod %s in StatefulSet %s success", claim.Name, p.Name, s.set.Name)
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
		default:
			pvc, err := controller.As[*corev1.PersistentVolumeClaim](cur)
			if err != nil {
				return err
			}
			if pvc.DeletionTimestamp != nil {
				errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
				continue
			}
			if p.UID != "" {
				if err := s.setClaimRefs(ctx, pvc, p, false); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return aggregate(errs)
}

// retainClaims sets the owner references of a pod's existing claims as the retention
// policy asks for a pod scaled down (or not).
func (s *stsSync) retainClaims(ctx context.Context, p *corev1.Pod, ord int, scaledDown bool) error {
	res := s.store.Catalogue().Get(pvcGVR)
	for _, claim := range claimsOf(s.set, ord) {
		cur, err := s.store.Get(ctx, res, claim.Namespace, claim.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		pvc, err := controller.As[*corev1.PersistentVolumeClaim](cur)
		if err != nil {
			return err
		}
		if err := s.setClaimRefs(ctx, pvc, p, scaledDown); err != nil {
			return err
		}
	}
	return nil
}

func (s *stsSync) setClaimRefs(ctx context.Context, pvc *corev1.PersistentVolumeClaim, p *corev1.Pod, scaledDown bool) error {
	want := claimRefs(pvc.OwnerReferences, s.set, p, scaledDown)
	if apiequality.Semantic.DeepEqual(want, pvc.OwnerReferences) {
		return nil
	}
	if ref := metav1.GetControllerOf(pvc); ref != nil && ref.UID != s.set.UID && (p == nil || ref.UID != p.UID) {
		s.c.rec.Eventf(ctx, s.set, corev1.EventTypeWarning, "ConflictingController",
			"PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", pvc.Name)
	}
	rv := pvc.ResourceVersion
	_, err := s.store.Update(ctx, s.store.Catalogue().Get(pvcGVR), pvc.Namespace, pvc.Name, "", func(o runtime.Object) (runtime.Object, error) {
		c, err := controller.As[*corev1.PersistentVolumeClaim](o)
		if err != nil {
			return nil, err
		}
		c.ResourceVersion = rv
		c.OwnerReferences = want
		return c, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// claimRefs is upstream's updateClaimOwnerRefForSetAndPod: whenDeleted=Delete makes the
// set an owner of claims of pods in range; whenScaled=Delete makes a scaled-down pod the
// owner of its claims (so the garbage collector deletes them with it); Retain removes
// the refs.
func claimRefs(refs []metav1.OwnerReference, set *appsv1.StatefulSet, p *corev1.Pod, scaledDown bool) []metav1.OwnerReference {
	pol := set.Spec.PersistentVolumeClaimRetentionPolicy
	whenDeleted, whenScaled := appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if pol != nil {
		whenDeleted, whenScaled = pol.WhenDeleted, pol.WhenScaled
	}
	del := appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	setRef := *controllerRef(set, statefulSetKind)
	wantSet := whenDeleted == del && !(whenScaled == del && scaledDown)
	wantPod := whenScaled == del && scaledDown && p != nil && p.UID != ""
	var out []metav1.OwnerReference
	unexpected := false
	for _, r := range refs {
		ours := r.UID == set.UID || (p != nil && r.UID == p.UID && p.UID != "")
		if r.Controller != nil && *r.Controller && !ours {
			// Another controller owns the claim: upstream leaves it to that one.
			unexpected = true
		}
		if ours {
			continue
		}
		out = append(out, r)
	}
	if unexpected {
		wantSet, wantPod = false, false
	}
	if wantSet {
		out = append(out, setRef)
	}
	if wantPod {
		out = append(out, *controllerRef(p, podKind))
	}
	if len(out) == 0 && refs == nil {
		return nil
	}
	if out == nil {
		out = []metav1.OwnerReference{}
	}
	return out
}

// fixIdentity is upstream's update of a replica whose identity (labels, hostname,
// subdomain) or storage does not match its ordinal.
func (s *stsSync) fixIdentity(ctx context.Context, p *corev1.Pod, ord int) error {
	want := p.DeepCopy()
	setIdentity(s.set, want, ord)
	if apiequality.Semantic.DeepEqual(want.Labels, p.Labels) && want.Spec.Hostname == p.Spec.Hostname && want.Spec.Subdomain == p.Spec.Subdomain {
		return nil
	}
	rv := p.ResourceVersion
	_, err := s.store.Update(ctx, s.store.Catalogue().Get(podGVR), p.Namespace, p.Name, "", func(o runtime.Object) (runtime.Object, error) {
		cur, err := controller.As[*corev1.Pod](o)
		if err != nil {
			return nil, err
		}
		cur.ResourceVersion = rv
		cur.Labels = want.Labels
		return cur, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		s.c.rec.Eventf(ctx, s.set, corev1.EventTypeWarning, "FailedUpdate", "update Pod %s in StatefulSet %s failed error: %s", p.Name, s.set.Name, err)
		return err
	}
	s.c.rec.Eventf(ctx, s.set, corev1.EventTypeNormal, "SuccessfulUpdate", "update Pod %s in StatefulSet %s successful", p.Name, s.set.Name)
	return nil
}

// writeStatus is upstream's updateStatefulSetStatus with completeRollingUpdate.
func (s *stsSync) writeStatus(ctx context.Context) error {
	st := s.status
	set := s.set
	replicas := deref32(set.Spec.Replicas, 1)
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas && st.Replicas == replicas {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
	st.Conditions = set.Status.Conditions
	if apiequality.Semantic.DeepEqual(st, set.Status) {
		return nil
	}
	rv := set.ResourceVersion
	_, err := s.store.Update(ctx, s.store.Catalogue().Get(statefulSetGVR), set.Namespace, set.Name, "status", func(o runtime.Object) (runtime.Object, error) {
		cur, err := controller.As[*appsv1.StatefulSet](o)
		if err != nil {
			return nil, err
		}
		cur.ResourceVersion = rv
		cur.Status = st
		return cur, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// truncate keeps revisionHistoryLimit revisions besides the current, update and any
// revision a pod still runs.
func (s *stsSync) truncate(ctx context.Context, pods []*corev1.Pod) error {
	revs, err := ownedRevisions(ctx, s.store, s.set)
	if err != nil {
		return err
	}
	live := map[string]bool{s.current.Name: true, s.update.Name: true}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	limit := int32(defaultRevisionHistoryLimit)
	if s.set.Spec.RevisionHistoryLimit != nil {
		limit = *s.set.Spec.RevisionHistoryLimit
	}
	return truncateHistory(ctx, s.store, revs, live, limit)
}

// aggregate joins errors as upstream's utilerrors.NewAggregate prints them: one error
// as itself, several as "[a, b]".
func aggregate(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e.Error()
	}
	return &aggregateErr{msg: msg + "]", errs: errs}
}

type aggregateErr struct {
	msg  string
	errs []error
}

func (a *aggregateErr) Error() string   { return a.msg }
func (a *aggregateErr) Unwrap() []error { return a.errs }

func deref32(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
