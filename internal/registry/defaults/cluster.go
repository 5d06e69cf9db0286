package defaults

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// PriorityClass sets the defaults of a PriorityClass (preemptionPolicy
// PreemptLowerPriority).
func PriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		p := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

// StorageClass sets the defaults of a StorageClass (reclaimPolicy Delete,
// volumeBindingMode Immediate).
func StorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		p := corev1.PersistentVolumeReclaimDelete
		sc.ReclaimPolicy = &p
	}
	if sc.VolumeBindingMode == nil {
		m := storagev1.VolumeBindingImmediate
		sc.VolumeBindingMode = &m
	}
}
