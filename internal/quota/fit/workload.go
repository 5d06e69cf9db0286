package fit

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Workload reports whether obj is a kind whose writes make pods from a template:
// Deployment, ReplicaSet, StatefulSet, ReplicationController or Job (apps/v1, batch/v1,
// core/v1 typed objects). A Pod is not a workload: it is its own pod.
func Workload(obj runtime.Object) bool {
	switch obj.(type) {
	case *appsv1.Deployment, *appsv1.ReplicaSet, *appsv1.StatefulSet, *corev1.ReplicationController, *batchv1.Job:
		return true
	}
	return false
}

// PodsOf returns the pod template of a workload and how many pods it runs: spec.replicas
// (1 when unset) for a Deployment, ReplicaSet, StatefulSet or ReplicationController; for a
// Job its parallelism (1 when unset) capped by its completions, and 0 while it is
// suspended. ok is false for any other object, and for a ReplicationController without a
// template.
func PodsOf(obj runtime.Object) (template *corev1.PodTemplateSpec, replicas int32, ok bool) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template, orOne(o.Spec.Replicas), true
	case *appsv1.ReplicaSet:
		return &o.Spec.Template, orOne(o.Spec.Replicas), true
	case *appsv1.StatefulSet:
		return &o.Spec.Template, orOne(o.Spec.Replicas), true
	case *corev1.ReplicationController:
		if o.Spec.Template == nil {
			return nil, 0, false
		}
		return o.Spec.Template, orOne(o.Spec.Replicas), true
	case *batchv1.Job:
		n := orOne(o.Spec.Parallelism)
		if o.Spec.Completions != nil && *o.Spec.Completions < n {
			n = *o.Spec.Completions
		}
		if o.Spec.Suspend != nil && *o.Spec.Suspend {
			n = 0
		}
		return &o.Spec.Template, max(n, 0), true
	}
	return nil, 0, false
}

func orOne(p *int32) int32 {
	if p == nil {
		return 1
	}
	return max(*p, 0)
}

// Added returns how many pods a write of obj adds: for a create (old nil) all of them,
// for an update the difference with the stored object, never negative. override, when
// set, replaces obj's own count (a Pod counts as one copy of itself unless overridden).
func Added(obj, old runtime.Object, override *int32) int32 {
	count := func(o runtime.Object) int32 {
		if _, isPod := o.(*corev1.Pod); isPod {
			return 1
		}
		_, n, _ := PodsOf(o)
		return n
	}
	n := count(obj)
	if override != nil {
		n = max(*override, 0)
	}
	if old == nil {
		return n
	}
	return max(n-count(old), 0)
}

// TemplatePod returns the pod a workload's controller creates from template in namespace
// ns, as upstream's GetPodFromTemplate builds it (the template's labels, annotations,
// finalizers and spec) with generateName. Defaults and mutating admission are the
// caller's to apply, as the controller's create would get them.
func TemplatePod(t *corev1.PodTemplateSpec, ns, generateName string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    ns,
			GenerateName: generateName,
			Labels:       copyMap(t.Labels),
			Annotations:  copyMap(t.Annotations),
			Finalizers:   append([]string(nil), t.Finalizers...),
		},
		Spec: *t.Spec.DeepCopy(),
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

// TemplateClaims returns the claims a StatefulSet's controller creates for each replica
// (one per volumeClaimTemplate, named as the controller names the first one's), nil for
// any other object. A replica whose claims remain from an earlier scale-down reuses them,
// so for a scale-up they are what the added replicas consume at most.
func TemplateClaims(obj runtime.Object, ns string) []*corev1.PersistentVolumeClaim {
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		return nil
	}
	var out []*corev1.PersistentVolumeClaim
	for i := range sts.Spec.VolumeClaimTemplates {
		t := &sts.Spec.VolumeClaimTemplates[i]
		c := &corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: metav1.ObjectMeta{Name: t.Name + "-" + sts.Name + "-0", Namespace: ns, Labels: copyMap(t.Labels), Annotations: copyMap(t.Annotations)},
			Spec:       *t.Spec.DeepCopy(),
		}
		out = append(out, c)
	}
	return out
}
