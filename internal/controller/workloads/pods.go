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
	c := podReadyCondition(p)
	if minReadySeconds == 0 {
		return true
	}
	min := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(min).Before(now)
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

// podRank orders pods for deletion as upstream's ActivePods: unassigned before assigned,
// Pending before Unknown before Running, not ready before ready, ready for a shorter time
// before longer, more restarts before fewer, newer before older; ties by name.
func sortPodsForDeletion(pods []*corev1.Pod) {
	phaseRank := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}
	restarts := func(p *corev1.Pod) int32 {
		var n int32
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount > n {
				n = c.RestartCount
			}
		}
		return n
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
			return a.Spec.NodeName == ""
		}
		if phaseRank[a.Status.Phase] != phaseRank[b.Status.Phase] {
			return phaseRank[a.Status.Phase] < phaseRank[b.Status.Phase]
		}
		if isPodReady(a) != isPodReady(b) {
			return !isPodReady(a)
		}
		if isPodReady(a) && isPodReady(b) {
			ta, tb := podReadyCondition(a).LastTransitionTime, podReadyCondition(b).LastTransitionTime
			if !ta.Equal(&tb) {
				return tb.Before(&ta)
			}
		}
		if restarts(a) != restarts(b) {
			return restarts(a) > restarts(b)
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return b.CreationTimestamp.Before(&a.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

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

// childPods returns the index of a workload controller's pods: those an owner of kind
// controls, as own makes them (nil: their views), and the labelled orphans a selector may
// adopt, as views (a selector selects nothing unlabelled: validation refuses an empty
// one); other pods are not kept.
func childPods(views *controller.PodViews, kind schema.GroupVersionKind, own func(*corev1.Pod) *corev1.Pod) *controller.Index {
	return controller.NewIndex(func(obj runtime.Object) runtime.Object {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		ref := metav1.GetControllerOfNoCopy(p)
		switch {
		case ref == nil && len(p.Labels) > 0:
			return views.View(p)
		case ref != nil && ref.Kind == kind.Kind && ref.APIVersion == kind.GroupVersion().String():
			if own != nil {
				return own(p)
			}
			return views.View(p)
		}
		return nil
	})
}
