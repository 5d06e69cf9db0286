package validation

// The package's tests validate objects of any kind through Validate and ValidateUpdate, a
// dispatch by Go type. The server never does: each kind's strategy
// (internal/registry/kinds/<group>/<kind>.go) calls its kind's functions.

import (
	"fmt"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
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

// validateGroupKinds runs the per-group dispatcher that knows obj's kind
// (kinds validated outside the main switches); false for other kinds. old is
// nil on create. Each dispatcher returns false for kinds it does not know.
func validateGroupKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	if old != nil && reflect.ValueOf(old).IsNil() {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate an update from %T to %T", old, obj))}, true
	}
	for _, f := range []func(obj, old runtime.Object) (field.ErrorList, bool){
		storageKinds, admissionKinds, flowcontrolKinds, certificatesKinds, apiregistrationKinds, storagemigrationKinds,
		resourceKinds, serviceCIDRKinds,
	} {
		if errs, ok := f(obj, old); ok {
			return errs, true
		}
	}
	return nil, false
}

// dispatch calls create(n) when old is nil, else update(n, old) when old is
// of n's type (an internal error otherwise).
func dispatch[T runtime.Object](n T, old runtime.Object, create func(T) field.ErrorList, update func(n, o T) field.ErrorList) (field.ErrorList, bool) {
	if old == nil {
		return create(n), true
	}
	o, ok := old.(T)
	if !ok {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate an update from %T to %T", old, n))}, true
	}
	return update(n, o), true
}

// storageKinds dispatches the storage.k8s.io kinds of Validate and
// ValidateUpdate (old nil on create); false for other kinds.
func storageKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	switch n := obj.(type) {
	case *storagev1.CSIDriver:
		return dispatch(n, old, CSIDriver, CSIDriverUpdate)
	case *storagev1.CSINode:
		return dispatch(n, old, CSINode, CSINodeUpdate)
	case *storagev1.VolumeAttachment:
		return dispatch(n, old, VolumeAttachment, VolumeAttachmentUpdate)
	case *storagev1.CSIStorageCapacity:
		return dispatch(n, old, CSIStorageCapacity, CSIStorageCapacityUpdate)
	case *storagev1.VolumeAttributesClass:
		return dispatch(n, old, VolumeAttributesClass, VolumeAttributesClassUpdate)
	}
	return nil, false
}

// admissionKinds dispatches the admissionregistration.k8s.io kinds.
func admissionKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	switch n := obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		return dispatch(n, old, ValidatingWebhookConfiguration, ValidatingWebhookConfigurationUpdate)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		return dispatch(n, old, MutatingWebhookConfiguration, MutatingWebhookConfigurationUpdate)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		return dispatch(n, old, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyUpdate)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		return dispatch(n, old, ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingUpdate)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		return dispatch(n, old, MutatingAdmissionPolicy, MutatingAdmissionPolicyUpdate)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		return dispatch(n, old, MutatingAdmissionPolicyBinding, MutatingAdmissionPolicyBindingUpdate)
	}
	return nil, false
}

// flowcontrolKinds dispatches the flowcontrol kinds: updates are validated as creates.
func flowcontrolKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	switch n := obj.(type) {
	case *flowcontrolv1.FlowSchema:
		return dispatch(n, old, FlowSchema, func(n, o *flowcontrolv1.FlowSchema) field.ErrorList {
			return append(FlowSchema(n), objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
		})
	case *flowcontrolv1.PriorityLevelConfiguration:
		return dispatch(n, old, PriorityLevelConfiguration, func(n, o *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
			return append(PriorityLevelConfiguration(n), objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
		})
	}
	return nil, false
}

// certificatesKinds dispatches certificates.k8s.io kinds (main resource).
func certificatesKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	if n, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
		return dispatch(n, old, CertificateSigningRequest, func(n, o *certificatesv1.CertificateSigningRequest) field.ErrorList {
			return CertificateSigningRequestUpdate(n, o, "")
		})
	}
	return nil, false
}

// apiregistrationKinds dispatches the apiregistration.k8s.io kinds.
func apiregistrationKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	if n, ok := obj.(*apiregistrationv1.APIService); ok {
		return dispatch(n, old, APIService, func(n, o *apiregistrationv1.APIService) field.ErrorList {
			return append(objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath), APIService(n)...)
		})
	}
	return nil, false
}

// storagemigrationKinds dispatches storagemigration.k8s.io kinds (main resource).
func storagemigrationKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	if n, ok := obj.(*svmv1.StorageVersionMigration); ok {
		return dispatch(n, old, StorageVersionMigration, StorageVersionMigrationUpdate)
	}
	return nil, false
}

// resourceKinds dispatches the resource.k8s.io (DRA) kinds.
func resourceKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	switch n := obj.(type) {
	case *resourcev1.DeviceClass:
		return dispatch(n, old, DeviceClass, DeviceClassUpdate)
	case *resourcev1.ResourceClaim:
		return dispatch(n, old, ResourceClaim, ResourceClaimUpdate)
	case *resourcev1.ResourceClaimTemplate:
		return dispatch(n, old, ResourceClaimTemplate, ResourceClaimTemplateUpdate)
	case *resourcev1.ResourceSlice:
		return dispatch(n, old, ResourceSlice, ResourceSliceUpdate)
	case *resourcev1.DeviceTaintRule:
		return dispatch(n, old, DeviceTaintRule, DeviceTaintRuleUpdate)
	}
	return nil, false
}

// serviceCIDRKinds dispatches networking.k8s.io ServiceCIDRs and IPAddresses.
func serviceCIDRKinds(obj, old runtime.Object) (field.ErrorList, bool) {
	switch n := obj.(type) {
	case *networkingv1.ServiceCIDR:
		return dispatch(n, old, ServiceCIDR, ServiceCIDRUpdate)
	case *networkingv1.IPAddress:
		return dispatch(n, old, IPAddress, IPAddressUpdate)
	}
	return nil, false
}

// ValidateSubresourceUpdate validates a write through a subresource whose rules
// differ from the main resource's (a CertificateSigningRequest's /status and
// /approval); false when the main resource's rules apply.
func ValidateSubresourceUpdate(subresource string, newObj, oldObj runtime.Object) (field.ErrorList, bool) {
	if n, ok := newObj.(*svmv1.StorageVersionMigration); ok && subresource == "status" {
		if o, ok := oldObj.(*svmv1.StorageVersionMigration); ok && n != nil && o != nil {
			return StorageVersionMigrationStatusUpdate(n, o), true
		}
	}
	n, ok1 := newObj.(*certificatesv1.CertificateSigningRequest)
	o, ok2 := oldObj.(*certificatesv1.CertificateSigningRequest)
	if !ok1 || !ok2 || n == nil || o == nil {
		return nil, false
	}
	return CertificateSigningRequestUpdate(n, o, subresource), true
}
