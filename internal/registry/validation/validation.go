package validation

import (
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate returns the errors upstream reports when obj is created. Objects
// of kinds this package does not know return no errors.
func Validate(obj runtime.Object) field.ErrorList {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil
	}
	if errs, ok := validateGroupKinds(obj, nil); ok {
		return errs
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return Pod(o)
	case *corev1.PodTemplate:
		return PodTemplate(o)
	case *corev1.Service:
		return Service(o)
	case *corev1.PersistentVolumeClaim:
		return PersistentVolumeClaim(o)
	case *corev1.ReplicationController:
		return ReplicationController(o)
	case *corev1.Namespace:
		return Namespace(o)
	case *corev1.Secret:
		return Secret(o)
	case *corev1.ConfigMap:
		return ConfigMap(o)
	case *corev1.LimitRange:
		return LimitRange(o)
	case *corev1.ServiceAccount:
		return ServiceAccount(o)
	case *corev1.Event:
		return Event(o)
	case *corev1.Node:
		return Node(o)
	case *appsv1.Deployment:
		return Deployment(o)
	case *appsv1.ReplicaSet:
		return ReplicaSet(o)
	case *appsv1.StatefulSet:
		return StatefulSet(o)
	case *appsv1.DaemonSet:
		return DaemonSet(o)
	case *appsv1.ControllerRevision:
		return ControllerRevision(o)
	case *batchv1.Job:
		return Job(o)
	case *batchv1.CronJob:
		return CronJob(o)
	case *schedulingv1.PriorityClass:
		return PriorityClass(o)
	case *storagev1.StorageClass:
		return StorageClass(o)
	case *rbacv1.Role:
		return Role(o)
	case *rbacv1.ClusterRole:
		return ClusterRole(o, false)
	case *rbacv1.RoleBinding:
		return RoleBinding(o)
	case *rbacv1.ClusterRoleBinding:
		return ClusterRoleBinding(o)
	case *corev1.Endpoints:
		return Endpoints(o)
	case *discoveryv1.EndpointSlice:
		return EndpointSlice(o)
	case *policyv1.PodDisruptionBudget:
		return PodDisruptionBudget(o)
	case *corev1.PersistentVolume:
		return PersistentVolume(o)
	case *coordinationv1.Lease:
		return Lease(o)
	case *networkingv1.NetworkPolicy:
		return NetworkPolicy(o)
	case *networkingv1.Ingress:
		return Ingress(o)
	case *networkingv1.IngressClass:
		return IngressClass(o)
	case *nodev1.RuntimeClass:
		return RuntimeClass(o)
	case *autoscalingv2.HorizontalPodAutoscaler:
		return HorizontalPodAutoscaler(o)
	case *autoscalingv1.HorizontalPodAutoscaler:
		return HorizontalPodAutoscalerV1(o)
	case *eventsv1.Event:
		return EventV1(o)
	}
	return nil
}

// ValidateUpdate returns the errors upstream reports when oldObj is replaced
// by newObj: the new object's own validity plus the update rules
// (immutable fields, allowed transitions). Both must be of the same kind.
func ValidateUpdate(newObj, oldObj runtime.Object) field.ErrorList {
	mismatch := func() field.ErrorList {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate an update from %T to %T", oldObj, newObj))}
	}
	if newObj != nil && !reflect.ValueOf(newObj).IsNil() && oldObj != nil {
		if errs, ok := validateGroupKinds(newObj, oldObj); ok {
			return errs
		}
	}
	switch n := newObj.(type) {
	case *corev1.Pod:
		if o, ok := oldObj.(*corev1.Pod); ok && n != nil && o != nil {
			return PodUpdate(n, o)
		}
	case *corev1.PodTemplate:
		if o, ok := oldObj.(*corev1.PodTemplate); ok && n != nil && o != nil {
			return PodTemplateUpdate(n, o)
		}
	case *corev1.Service:
		if o, ok := oldObj.(*corev1.Service); ok && n != nil && o != nil {
			return ServiceUpdate(n, o)
		}
	case *corev1.PersistentVolumeClaim:
		if o, ok := oldObj.(*corev1.PersistentVolumeClaim); ok && n != nil && o != nil {
			return PersistentVolumeClaimUpdate(n, o)
		}
	case *corev1.ReplicationController:
		if o, ok := oldObj.(*corev1.ReplicationController); ok && n != nil && o != nil {
			return ReplicationControllerUpdate(n, o)
		}
	case *corev1.Namespace:
		if o, ok := oldObj.(*corev1.Namespace); ok && n != nil && o != nil {
			return NamespaceUpdate(n, o)
		}
	case *corev1.Secret:
		if o, ok := oldObj.(*corev1.Secret); ok && n != nil && o != nil {
			return SecretUpdate(n, o)
		}
	case *corev1.ConfigMap:
		if o, ok := oldObj.(*corev1.ConfigMap); ok && n != nil && o != nil {
			return ConfigMapUpdate(n, o)
		}
	case *corev1.LimitRange:
		if o, ok := oldObj.(*corev1.LimitRange); ok && n != nil && o != nil {
			return LimitRangeUpdate(n, o)
		}
	case *corev1.ServiceAccount:
		if o, ok := oldObj.(*corev1.ServiceAccount); ok && n != nil && o != nil {
			return ServiceAccountUpdate(n, o)
		}
	case *corev1.Event:
		if o, ok := oldObj.(*corev1.Event); ok && n != nil && o != nil {
			return EventUpdate(n, o)
		}
	case *corev1.Node:
		if o, ok := oldObj.(*corev1.Node); ok && n != nil && o != nil {
			return NodeUpdate(n, o)
		}
	case *appsv1.Deployment:
		if o, ok := oldObj.(*appsv1.Deployment); ok && n != nil && o != nil {
			return DeploymentUpdate(n, o)
		}
	case *appsv1.ReplicaSet:
		if o, ok := oldObj.(*appsv1.ReplicaSet); ok && n != nil && o != nil {
			return ReplicaSetUpdate(n, o)
		}
	case *appsv1.StatefulSet:
		if o, ok := oldObj.(*appsv1.StatefulSet); ok && n != nil && o != nil {
			return StatefulSetUpdate(n, o)
		}
	case *appsv1.DaemonSet:
		if o, ok := oldObj.(*appsv1.DaemonSet); ok && n != nil && o != nil {
			return DaemonSetUpdate(n, o)
		}
	case *appsv1.ControllerRevision:
		if o, ok := oldObj.(*appsv1.ControllerRevision); ok && n != nil && o != nil {
			return ControllerRevisionUpdate(n, o)
		}
	case *batchv1.Job:
		if o, ok := oldObj.(*batchv1.Job); ok && n != nil && o != nil {
			return JobUpdate(n, o)
		}
	case *batchv1.CronJob:
		if o, ok := oldObj.(*batchv1.CronJob); ok && n != nil && o != nil {
			return CronJobUpdate(n, o)
		}
	case *schedulingv1.PriorityClass:
		if o, ok := oldObj.(*schedulingv1.PriorityClass); ok && n != nil && o != nil {
			return PriorityClassUpdate(n, o)
		}
	case *storagev1.StorageClass:
		if o, ok := oldObj.(*storagev1.StorageClass); ok && n != nil && o != nil {
			return StorageClassUpdate(n, o)
		}
	case *rbacv1.Role:
		if o, ok := oldObj.(*rbacv1.Role); ok && n != nil && o != nil {
			return RoleUpdate(n, o)
		}
	case *rbacv1.ClusterRole:
		if o, ok := oldObj.(*rbacv1.ClusterRole); ok && n != nil && o != nil {
			return ClusterRoleUpdate(n, o)
		}
	case *rbacv1.RoleBinding:
		if o, ok := oldObj.(*rbacv1.RoleBinding); ok && n != nil && o != nil {
			return RoleBindingUpdate(n, o)
		}
	case *rbacv1.ClusterRoleBinding:
		if o, ok := oldObj.(*rbacv1.ClusterRoleBinding); ok && n != nil && o != nil {
			return ClusterRoleBindingUpdate(n, o)
		}
	case *corev1.Endpoints:
		if o, ok := oldObj.(*corev1.Endpoints); ok && n != nil && o != nil {
			return EndpointsUpdate(n, o)
		}
	case *discoveryv1.EndpointSlice:
		if o, ok := oldObj.(*discoveryv1.EndpointSlice); ok && n != nil && o != nil {
			return EndpointSliceUpdate(n, o)
		}
	case *policyv1.PodDisruptionBudget:
		if o, ok := oldObj.(*policyv1.PodDisruptionBudget); ok && n != nil && o != nil {
			return PodDisruptionBudgetUpdate(n, o)
		}
	case *corev1.PersistentVolume:
		if o, ok := oldObj.(*corev1.PersistentVolume); ok && n != nil && o != nil {
			return PersistentVolumeUpdate(n, o)
		}
	case *coordinationv1.Lease:
		if o, ok := oldObj.(*coordinationv1.Lease); ok && n != nil && o != nil {
			return LeaseUpdate(n, o)
		}
	case *networkingv1.NetworkPolicy:
		if o, ok := oldObj.(*networkingv1.NetworkPolicy); ok && n != nil && o != nil {
			return NetworkPolicyUpdate(n, o)
		}
	case *networkingv1.Ingress:
		if o, ok := oldObj.(*networkingv1.Ingress); ok && n != nil && o != nil {
			return IngressUpdate(n, o)
		}
	case *networkingv1.IngressClass:
		if o, ok := oldObj.(*networkingv1.IngressClass); ok && n != nil && o != nil {
			return IngressClassUpdate(n, o)
		}
	case *nodev1.RuntimeClass:
		if o, ok := oldObj.(*nodev1.RuntimeClass); ok && n != nil && o != nil {
			return RuntimeClassUpdate(n, o)
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		if o, ok := oldObj.(*autoscalingv2.HorizontalPodAutoscaler); ok && n != nil && o != nil {
			return HorizontalPodAutoscalerUpdate(n, o)
		}
	case *autoscalingv1.HorizontalPodAutoscaler:
		if o, ok := oldObj.(*autoscalingv1.HorizontalPodAutoscaler); ok && n != nil && o != nil {
			return HorizontalPodAutoscalerV1Update(n, o)
		}
	case *eventsv1.Event:
		if o, ok := oldObj.(*eventsv1.Event); ok && n != nil && o != nil {
			return EventV1Update(n, o)
		}
	default:
		return nil
	}
	return mismatch()
}

// Name rules of the served kinds (upstream ValidateXxxName).
var (
	nameIsDNSSubdomain = apimachineryvalidation.NameIsDNSSubdomain
	nameIsDNSLabel     = apimachineryvalidation.NameIsDNSLabel
	nameIsDNS1035Label = apimachineryvalidation.NameIsDNS1035Label
)

// NameFunc validates an object name; prefix is true for generateName
// prefixes, which may end in a dash.
type NameFunc func(name string, prefix bool) []string

// NameRule returns the name rule upstream applies to the kind of obj:
// DNS-1035 label for Services, DNS-1123 label for Namespaces and
// StatefulSets, DNS-1123 subdomain otherwise. Name generation uses it to
// check generateName.
func NameRule(obj runtime.Object) NameFunc {
	switch obj.(type) {
	case *corev1.Service:
		return nameIsDNS1035Label
	case *corev1.Namespace, *appsv1.StatefulSet:
		return nameIsDNSLabel
	case *rbacv1.Role, *rbacv1.ClusterRole, *rbacv1.RoleBinding, *rbacv1.ClusterRoleBinding:
		return rbacName
	}
	return nameIsDNSSubdomain
}

// standardFinalizers are the finalizer names allowed without a "/".
var standardFinalizers = map[string]bool{
	string(corev1.FinalizerKubernetes): true,
	metav1.FinalizerOrphanDependents:   true,
	metav1.FinalizerDeleteDependents:   true,
}

// kubeFinalizerName is upstream's validateKubeFinalizerName.
func kubeFinalizerName(s string, p *field.Path) field.ErrorList {
	if !strings.Contains(s, "/") && !standardFinalizers[s] {
		return field.ErrorList{field.Invalid(p, s, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// objectMeta is upstream core ValidateObjectMeta: the generic metadata
// rules plus the Kubernetes finalizer-name rule.
func objectMeta(m *metav1.ObjectMeta, namespaced bool, nameFn NameFunc, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(m, namespaced, apimachineryvalidation.ValidateNameFunc(nameFn), p)
	for i := range m.Finalizers {
		errs = append(errs, kubeFinalizerName(m.Finalizers[i], p.Child("finalizers").Index(i))...)
	}
	return errs
}

// objectMetaUpdate is upstream core ValidateObjectMetaUpdate.
func objectMetaUpdate(n, o *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(n, o, p)
	for i := range n.Finalizers {
		errs = append(errs, kubeFinalizerName(n.Finalizers[i], p.Child("finalizers").Index(i))...)
	}
	return errs
}

var metaPath = field.NewPath("metadata")
