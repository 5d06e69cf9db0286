package workloads

import (
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/quotad/quotad/internal/controller"
)

// Kinds of the controllers in this package.
var (
	replicaSetKind   = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	rcKind           = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	deploymentKind   = appsv1.SchemeGroupVersion.WithKind("Deployment")
	jobKind          = batchv1.SchemeGroupVersion.WithKind("Job")
	cronJobKind      = batchv1.SchemeGroupVersion.WithKind("CronJob")
	podGVR           = corev1.SchemeGroupVersion.WithResource("pods")
	quotaGVR         = corev1.SchemeGroupVersion.WithResource("resourcequotas")
	replicaSetGVR    = appsv1.SchemeGroupVersion.WithResource("replicasets")
	rcGVR            = corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	deploymentGVR    = appsv1.SchemeGroupVersion.WithResource("deployments")
	jobGVR           = batchv1.SchemeGroupVersion.WithResource("jobs")
	cronJobGVR       = batchv1.SchemeGroupVersion.WithResource("cronjobs")
	podTemplateLabel = appsv1.DefaultDeploymentUniqueLabelKey
)

// Upstream PodControl reasons (pkg/controller/controller_utils.go).
const (
	reasonFailedCreate     = "FailedCreate"
	reasonSuccessfulCreate = "SuccessfulCreate"
	reasonFailedDelete     = "FailedDelete"
	reasonSuccessfulDelete = "SuccessfulDelete"
	slowStartInitialBatch  = 1
	burstReplicas          = 500
	maxGeneratedNameLength = validation.DNS1123SubdomainMaxLength - randomLength
	randomLength           = 5
)

// isPodActive is upstream's controller.IsPodActive: not finished and not being deleted.
func isPodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// isPodReady is upstream's podutil.IsPodReady: the Ready condition is True. No kubelet runs
// here, so a client sets it (with phase Running) through pods/status.
func isPodReady(p *corev1.Pod) bool {
	c := podReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

func podReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// isPodAvailable is upstream's podutil.IsPodAvailable: ready for at least minReadySeconds.
func isPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !isPodReady(p) {
		return false
	}
	return readyFor(podReadyCondition(p).LastTransitionTime, minReadySeconds, now)
}

// readyFor reports whether a pod ready since since (its Ready condition's last transition)
// has been ready for minReadySeconds at now.
func readyFor(since metav1.Time, minReadySeconds int32, now time.Time) bool {
	if minReadySeconds == 0 {
		return true
	}
	min := time.Duration(minReadySeconds) * time.Second
	return !since.IsZero() && since.Add(min).Before(now)
}

// viewActive is isPodActive of a pod's view.
func viewActive(v *controller.PodView) bool {
	return v.Phase != corev1.PodSucceeded && v.Phase != corev1.PodFailed && v.DeletionTimestamp == nil
}

// viewPods makes the pods of views (read-only).
func viewPods(views []*controller.PodView) []*corev1.Pod {
	out := make([]*corev1.Pod, len(views))
	for i, v := range views {
		out[i] = v.Pod()
	}
	return out
}

// podsPrefix is upstream's getPodsPrefix: "<owner>-" unless that is not a valid generateName.
func podsPrefix(controllerName string) string {
	prefix := controllerName + "-"
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	return prefix
}

// podFromTemplate is upstream's GetPodFromTemplate with a fixed name.
func podFromTemplate(t *corev1.PodTemplateSpec, name string, ref *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      copyMap(t.Labels),
			Annotations: copyMap(t.Annotations),
			Finalizers:  append([]string(nil), t.Finalizers...),
		},
		Spec: *t.Spec.DeepCopy(),
	}
	if ref != nil {
		p.OwnerReferences = append(p.OwnerReferences, *ref)
	}
	return p
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// controllerRef is upstream's metav1.NewControllerRef.
func controllerRef(owner metav1.Object, gvk schema.GroupVersionKind) *metav1.OwnerReference {
	t := true
	return &metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: &t, BlockOwnerDeletion: &t,
	}
}

// deletionRank is what orders a pod for deletion (sortForDeletion).
type deletionRank struct {
	unassigned bool
	phase      int // Pending 0, Unknown 1, Running 2, others 0
	ready      bool
	readySince metav1.Time
	restarts   int32 // the most of any container
	created    metav1.Time
	name       string
}

var deletionPhaseRank = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// podRank is a pod's deletionRank.
func podRank(p *corev1.Pod) deletionRank {
	r := deletionRank{unassigned: p.Spec.NodeName == "", phase: deletionPhaseRank[p.Status.Phase], created: p.CreationTimestamp, name: p.Name}
	if c := podReadyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
		r.ready, r.readySince = true, c.LastTransitionTime
	}
	for _, c := range p.Status.ContainerStatuses {
		r.restarts = max(r.restarts, c.RestartCount)
	}
	return r
}

// viewRank is a pod view's deletionRank.
func viewRank(v *controller.PodView) deletionRank {
	r := deletionRank{unassigned: v.NodeName == "", phase: deletionPhaseRank[v.Phase], restarts: v.Restarts, created: v.CreationTimestamp, name: v.Name}
	if v.Ready == corev1.ConditionTrue {
		r.ready, r.readySince = true, v.ReadySince
	}
	return r
}

// before reports whether the pod ranked a goes before the one ranked b, as upstream's
// ActivePods orders them for deletion: unassigned before assigned, Pending before Unknown
// before Running, not ready before ready, ready for a shorter time before longer, more
// restarts before fewer, newer before older; ties by name.
func (a deletionRank) before(b deletionRank) bool {
	switch {
	case a.unassigned != b.unassigned:
		return a.unassigned
	case a.phase != b.phase:
		return a.phase < b.phase
	case a.ready != b.ready:
		return !a.ready
	case a.ready && !a.readySince.Equal(&b.readySince):
		return b.readySince.Before(&a.readySince)
	case a.restarts != b.restarts:
		return a.restarts > b.restarts
	case !a.created.Equal(&b.created):
		return b.created.Before(&a.created)
	}
	return a.name < b.name
}

// sortForDeletion orders xs for deletion, first to go first, each ranked once by rank.
func sortForDeletion[P any](xs []P, rank func(P) deletionRank) {
	ranks := make([]deletionRank, len(xs))
	order := make([]int, len(xs))
	for i, x := range xs {
		ranks[i], order[i] = rank(x), i
	}
	sort.SliceStable(order, func(i, j int) bool { return ranks[order[i]].before(ranks[order[j]]) })
	sorted := make([]P, len(xs))
	for i, k := range order {
		sorted[i] = xs[k]
	}
	copy(xs, sorted)
}

// sortPodsForDeletion orders pods for deletion (sortForDeletion).
func sortPodsForDeletion(pods []*corev1.Pod) { sortForDeletion(pods, podRank) }

// cachedPods returns the pods an index holds in objs (made of views where it keeps views:
// read-only).
func cachedPods(objs []runtime.Object) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p := controller.CachedPod(o); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// ownedPods is the pods of a workload controller that reads views: those an owner of kind
// controls, and the labelled orphans a selector may adopt (a selector selects nothing
// unlabelled: validation refuses an empty one).
func ownedPods(kind schema.GroupVersionKind) controller.PodFilter {
	return controller.PodFilter{ControlledBy: []schema.GroupVersionKind{kind}, LabelledOrphans: true}
}

// detailedPods is ownedPods for a controller reading its pods in more detail than a view
// holds (PodFilter.Detailed).
func detailedPods(kind schema.GroupVersionKind) controller.PodFilter {
	f := ownedPods(kind)
	f.Detailed = true
	return f
}
