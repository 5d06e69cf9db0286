package registry

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// preparePVStatus is upstream's PersistentVolume status strategy: a phase change written
// through /status records its time in status.lastPhaseTransitionTime, unless the writer
// set a new one.
func preparePVStatus(pv, old *corev1.PersistentVolume, now metav1.Time) {
	if pv.Status.Phase == old.Status.Phase {
		return
	}
	if t := pv.Status.LastPhaseTransitionTime; t != nil && !t.Equal(old.Status.LastPhaseTransitionTime) {
		return
	}
	pv.Status.LastPhaseTransitionTime = &now
}
