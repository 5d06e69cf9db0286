package defaults

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func int32Ptr(v int32) *int32 { return &v }

// Deployment sets the defaults of a Deployment: replicas 1, RollingUpdate
// strategy with maxUnavailable and maxSurge 25%, revisionHistoryLimit 10,
// progressDeadlineSeconds 600, and the pod template defaults.
func Deployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = int32Ptr(1)
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			v := intstr.FromString("25%")
			st.RollingUpdate.MaxUnavailable = &v
		}
		if st.RollingUpdate.MaxSurge == nil {
			v := intstr.FromString("25%")
			st.RollingUpdate.MaxSurge = &v
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = int32Ptr(10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = int32Ptr(600)
	}
	PodSpec(&d.Spec.Template.Spec)
}

// ReplicaSet sets the defaults of a ReplicaSet: replicas 1 and the pod
// template defaults.
func ReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = int32Ptr(1)
	}
	PodSpec(&rs.Spec.Template.Spec)
}

// DaemonSet sets the defaults of a DaemonSet: RollingUpdate strategy with
// maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10, and the pod
// template defaults.
func DaemonSet(ds *appsv1.DaemonSet) {
	st := &ds.Spec.UpdateStrategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if st.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			v := intstr.FromInt32(1)
			st.RollingUpdate.MaxUnavailable = &v
		}
		if st.RollingUpdate.MaxSurge == nil {
			v := intstr.FromInt32(0)
			st.RollingUpdate.MaxSurge = &v
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = int32Ptr(10)
	}
	PodSpec(&ds.Spec.Template.Spec)
}

// StatefulSet sets the defaults of a StatefulSet: OrderedReady pod
// management, RollingUpdate with partition 0, Retain PVC retention policies,
// replicas 1, revisionHistoryLimit 10, and the defaults of the pod template
// and of the volume claim templates.
func StatefulSet(ss *appsv1.StatefulSet) {
	sp := &ss.Spec
	if sp.PodManagementPolicy == "" {
		sp.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if sp.UpdateStrategy.Type == "" {
		sp.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if sp.UpdateStrategy.RollingUpdate == nil {
			sp.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if sp.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		sp.UpdateStrategy.RollingUpdate != nil && sp.UpdateStrategy.RollingUpdate.Partition == nil {
		sp.UpdateStrategy.RollingUpdate.Partition = int32Ptr(0)
	}
	if sp.PersistentVolumeClaimRetentionPolicy == nil {
		sp.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if sp.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		sp.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if sp.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		sp.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if sp.Replicas == nil {
		sp.Replicas = int32Ptr(1)
	}
	if sp.RevisionHistoryLimit == nil {
		sp.RevisionHistoryLimit = int32Ptr(10)
	}
	PodSpec(&sp.Template.Spec)
	for i := range sp.VolumeClaimTemplates {
		t := &sp.VolumeClaimTemplates[i]
		if t.Status.Phase == "" {
			t.Status.Phase = corev1.ClaimPending
		}
		pvcSpec(&t.Spec)
		resourceList(t.Status.Capacity)
		resourceList(t.Status.AllocatedResources)
	}
}
