package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetDisruptionTarget puts the DisruptionTarget condition (True, reason, message) on pod
// as upstream's UpdatePodCondition followed by the pod status strategy's
// preserveOldObservedGeneration: it replaces a condition of that type, keeping its
// transition time when its status does not change and its observedGeneration; it reports
// whether that changed the pod.
func SetDisruptionTarget(pod *corev1.Pod, reason, message string, now metav1.Time) bool {
	cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now}
	for i := range pod.Status.Conditions {
		old := &pod.Status.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		cond.ObservedGeneration = old.ObservedGeneration
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.LastProbeTime.Equal(&cond.LastProbeTime) {
			return false
		}
		*old = cond
		return true
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
	return true
}
