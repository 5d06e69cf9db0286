package defaults

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Apply sets upstream's defaults on obj in place. Objects of kinds that have
// no defaults, and nil pointers, are left untouched.
func Apply(obj runtime.Object) {
	if obj == nil || reflect.ValueOf(obj).IsNil() || applyStorageAdmissionFlowControl(obj) || applyResource(obj) {
		return
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if o != nil {
			Pod(o)
		}
	case *corev1.PodTemplate:
		if o != nil {
			PodTemplate(o)
		}
	case *corev1.Service:
		if o != nil {
			Service(o)
		}
	case *corev1.PersistentVolumeClaim:
		if o != nil {
			PersistentVolumeClaim(o)
		}
	case *corev1.PersistentVolume:
		if o != nil {
			PersistentVolume(o)
		}
	case *corev1.ReplicationController:
		if o != nil {
			ReplicationController(o)
		}
	case *corev1.Namespace:
		if o != nil {
			Namespace(o)
		}
	case *corev1.Secret:
		if o != nil {
			Secret(o)
		}
	case *corev1.ConfigMap:
		if o != nil {
			ConfigMap(o)
		}
	case *corev1.LimitRange:
		if o != nil {
			LimitRange(o)
		}
	case *corev1.ResourceQuota:
		if o != nil {
			ResourceQuota(o)
		}
	case *corev1.Node:
		if o != nil {
			Node(o)
		}
	case *corev1.Endpoints:
		if o != nil {
			Endpoints(o)
		}
	case *appsv1.Deployment:
		if o != nil {
			Deployment(o)
		}
	case *appsv1.ReplicaSet:
		if o != nil {
			ReplicaSet(o)
		}
	case *appsv1.StatefulSet:
		if o != nil {
			StatefulSet(o)
		}
	case *appsv1.DaemonSet:
		if o != nil {
			DaemonSet(o)
		}
	case *batchv1.Job:
		if o != nil {
			Job(o)
		}
	case *batchv1.CronJob:
		if o != nil {
			CronJob(o)
		}
	case *schedulingv1.PriorityClass:
		if o != nil {
			PriorityClass(o)
		}
	case *storagev1.StorageClass:
		if o != nil {
			StorageClass(o)
		}
	case *rbacv1.RoleBinding:
		if o != nil {
			RoleBinding(o)
		}
	case *rbacv1.ClusterRoleBinding:
		if o != nil {
			ClusterRoleBinding(o)
		}
	case *discoveryv1.EndpointSlice:
		if o != nil {
			EndpointSlice(o)
		}
	case *networkingv1.NetworkPolicy:
		if o != nil {
			NetworkPolicy(o)
		}
	case *networkingv1.IngressClass:
		if o != nil {
			IngressClass(o)
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		if o != nil {
			HorizontalPodAutoscaler(o)
		}
	case *autoscalingv1.HorizontalPodAutoscaler:
		if o != nil {
			HorizontalPodAutoscalerV1(o)
		}
	}
}
