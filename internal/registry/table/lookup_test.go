package table

// The package's tests render objects of any kind through Convert and ConvertKind, which
// find the printer by Go type or group-kind. The server never does: each kind's strategy
// (internal/registry/kinds/<group>/<kind>.go) names its printer.

import (
	"fmt"
	"time"

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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/quota/clusterquota"
)

// Convert renders objects (all of one kind) as a Table. now is injected for
// AGE and every other time-dependent cell. includeObject selects what each
// row's Object holds: the object (Object), its PartialObjectMetadata
// (Metadata, also for ""), or nothing (None); any other value is a
// BadRequest error, as upstream. noHeaders leaves ColumnDefinitions nil.
//
// The kind is taken from the first object: typed k8s.io/api objects, or
// *unstructured.Unstructured carrying apiVersion/kind. Kinds without a
// printer get upstream's default columns (Name, Created At). With no objects
// the default columns are returned; use ConvertKind to get a kind's columns
// for an empty list. The caller sets the table's ListMeta.
func Convert(objs []runtime.Object, now time.Time, includeObject metav1.IncludeObjectPolicy, noHeaders bool) (*metav1.Table, error) {
	var gk schema.GroupKind
	if len(objs) > 0 {
		gk = kindOf(objs[0])
	}
	return ConvertKind(gk, objs, now, includeObject, noHeaders)
}

// ConvertKind is Convert for a kind known up front (so that an empty list
// still gets the kind's columns). Every object must be of kind gk.
func ConvertKind(gk schema.GroupKind, objs []runtime.Object, now time.Time, includeObject metav1.IncludeObjectPolicy, noHeaders bool) (*metav1.Table, error) {
	if err := checkIncludeObject(includeObject); err != nil {
		return nil, err
	}
	p, ok := printerFor(gk)
	if !ok {
		p = DefaultPrinter(schema.GroupVersionKind{})
	}
	for i, obj := range objs {
		if got := kindOf(obj); got != gk {
			return nil, fmt.Errorf("table: object %d is of kind %q, want %q", i, got, gk)
		}
	}
	return p.Convert(objs, now, includeObject, noHeaders)
}

// kindOf returns the group/kind of a typed or unstructured object; the zero
// GroupKind when it cannot be told.
func kindOf(obj runtime.Object) schema.GroupKind {
	if gk, ok := typedKind(obj); ok {
		return gk
	}
	return obj.GetObjectKind().GroupVersionKind().GroupKind()
}

// typedKind maps the k8s.io/api types this package knows to their kind.
func typedKind(obj runtime.Object) (schema.GroupKind, bool) {
	var gvk schema.GroupVersionKind
	switch obj.(type) {
	case *corev1.Pod:
		gvk = corev1.SchemeGroupVersion.WithKind("Pod")
	case *corev1.Service:
		gvk = corev1.SchemeGroupVersion.WithKind("Service")
	case *corev1.Namespace:
		gvk = corev1.SchemeGroupVersion.WithKind("Namespace")
	case *corev1.Node:
		gvk = corev1.SchemeGroupVersion.WithKind("Node")
	case *corev1.Secret:
		gvk = corev1.SchemeGroupVersion.WithKind("Secret")
	case *corev1.ConfigMap:
		gvk = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	case *corev1.PersistentVolumeClaim:
		gvk = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	case *corev1.PersistentVolume:
		gvk = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
	case *corev1.ReplicationController:
		gvk = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	case *corev1.ResourceQuota:
		gvk = corev1.SchemeGroupVersion.WithKind("ResourceQuota")
	case *corev1.LimitRange:
		gvk = corev1.SchemeGroupVersion.WithKind("LimitRange")
	case *corev1.Event:
		gvk = corev1.SchemeGroupVersion.WithKind("Event")
	case *corev1.ServiceAccount:
		gvk = corev1.SchemeGroupVersion.WithKind("ServiceAccount")
	case *corev1.Endpoints:
		gvk = corev1.SchemeGroupVersion.WithKind("Endpoints")
	case *appsv1.Deployment:
		gvk = appsv1.SchemeGroupVersion.WithKind("Deployment")
	case *appsv1.ReplicaSet:
		gvk = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	case *appsv1.StatefulSet:
		gvk = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	case *appsv1.DaemonSet:
		gvk = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	case *appsv1.ControllerRevision:
		gvk = appsv1.SchemeGroupVersion.WithKind("ControllerRevision")
	case *batchv1.Job:
		gvk = batchv1.SchemeGroupVersion.WithKind("Job")
	case *batchv1.CronJob:
		gvk = batchv1.SchemeGroupVersion.WithKind("CronJob")
	case *schedulingv1.PriorityClass:
		gvk = schedulingv1.SchemeGroupVersion.WithKind("PriorityClass")
	case *storagev1.StorageClass:
		gvk = storagev1.SchemeGroupVersion.WithKind("StorageClass")
	case *apiextensionsv1.CustomResourceDefinition:
		gvk = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	case *rbacv1.Role:
		gvk = rbacv1.SchemeGroupVersion.WithKind("Role")
	case *rbacv1.ClusterRole:
		gvk = rbacv1.SchemeGroupVersion.WithKind("ClusterRole")
	case *rbacv1.RoleBinding:
		gvk = rbacv1.SchemeGroupVersion.WithKind("RoleBinding")
	case *rbacv1.ClusterRoleBinding:
		gvk = rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")
	case *discoveryv1.EndpointSlice:
		gvk = discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")
	case *policyv1.PodDisruptionBudget:
		gvk = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	case *corev1.PodTemplate:
		gvk = corev1.SchemeGroupVersion.WithKind("PodTemplate")
	case *corev1.ComponentStatus:
		gvk = corev1.SchemeGroupVersion.WithKind("ComponentStatus")
	case *coordinationv1.Lease:
		gvk = coordinationv1.SchemeGroupVersion.WithKind("Lease")
	case *networkingv1.NetworkPolicy:
		gvk = networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy")
	case *networkingv1.Ingress:
		gvk = networkingv1.SchemeGroupVersion.WithKind("Ingress")
	case *networkingv1.IngressClass:
		gvk = networkingv1.SchemeGroupVersion.WithKind("IngressClass")
	case *nodev1.RuntimeClass:
		gvk = nodev1.SchemeGroupVersion.WithKind("RuntimeClass")
	case *autoscalingv2.HorizontalPodAutoscaler, *autoscalingv1.HorizontalPodAutoscaler:
		gvk = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	case *eventsv1.Event:
		gvk = eventsv1.SchemeGroupVersion.WithKind("Event")
	case *clusterquota.ClusterResourceQuota:
		gvk = clusterquota.SchemeGroupVersion.WithKind("ClusterResourceQuota")
	case *clusterquota.AppliedClusterResourceQuota:
		gvk = clusterquota.SchemeGroupVersion.WithKind("AppliedClusterResourceQuota")
	default:
		return storageAdmissionFlowControlKind(obj)
	}
	return gvk.GroupKind(), true
}

// printerFor returns the printer of a kind; false for kinds printed with the
// default convertor and unknown to this package.
func printerFor(gk schema.GroupKind) (Printer, bool) {
	switch gk {
	case corev1.SchemeGroupVersion.WithKind("Pod").GroupKind():
		return PodPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("Service").GroupKind():
		return ServicePrinter(), true
	case corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind():
		return NamespacePrinter(), true
	case corev1.SchemeGroupVersion.WithKind("Node").GroupKind():
		return NodePrinter(), true
	case corev1.SchemeGroupVersion.WithKind("Secret").GroupKind():
		return SecretPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind():
		return ConfigMapPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim").GroupKind():
		return PVCPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("PersistentVolume").GroupKind():
		return PVPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("ReplicationController").GroupKind():
		return ReplicationControllerPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("ResourceQuota").GroupKind():
		return ResourceQuotaPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("LimitRange").GroupKind():
		// No printer upstream: the default convertor (NAME CREATED AT).
		return DefaultPrinter(corev1.SchemeGroupVersion.WithKind("LimitRange")), true
	case corev1.SchemeGroupVersion.WithKind("Event").GroupKind():
		return EventPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("ServiceAccount").GroupKind():
		return ServiceAccountPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("Endpoints").GroupKind():
		return EndpointsPrinter(), true
	case appsv1.SchemeGroupVersion.WithKind("Deployment").GroupKind():
		return DeploymentPrinter(), true
	case appsv1.SchemeGroupVersion.WithKind("ReplicaSet").GroupKind():
		return ReplicaSetPrinter(), true
	case appsv1.SchemeGroupVersion.WithKind("StatefulSet").GroupKind():
		return StatefulSetPrinter(), true
	case appsv1.SchemeGroupVersion.WithKind("DaemonSet").GroupKind():
		return DaemonSetPrinter(), true
	case appsv1.SchemeGroupVersion.WithKind("ControllerRevision").GroupKind():
		return ControllerRevisionPrinter(), true
	case batchv1.SchemeGroupVersion.WithKind("Job").GroupKind():
		return JobPrinter(), true
	case batchv1.SchemeGroupVersion.WithKind("CronJob").GroupKind():
		return CronJobPrinter(), true
	case schedulingv1.SchemeGroupVersion.WithKind("PriorityClass").GroupKind():
		return PriorityClassPrinter(), true
	case storagev1.SchemeGroupVersion.WithKind("StorageClass").GroupKind():
		return StorageClassPrinter(), true
	case apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition").GroupKind():
		// Served by apiextensions-apiserver with the default convertor.
		return DefaultPrinter(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")), true
	case rbacKind("Role"):
		return RolePrinter(), true
	case rbacKind("ClusterRole"):
		return ClusterRolePrinter(), true
	case rbacKind("RoleBinding"):
		return RoleBindingPrinter(), true
	case rbacKind("ClusterRoleBinding"):
		return ClusterRoleBindingPrinter(), true
	case discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice").GroupKind():
		return EndpointSlicePrinter(), true
	case policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget").GroupKind():
		return PodDisruptionBudgetPrinter(), true
	case corev1.SchemeGroupVersion.WithKind("PodTemplate").GroupKind():
		return PodTemplatePrinter(), true
	case corev1.SchemeGroupVersion.WithKind("ComponentStatus").GroupKind():
		return ComponentStatusPrinter(), true
	case coordinationv1.SchemeGroupVersion.WithKind("Lease").GroupKind():
		return LeasePrinter(), true
	case networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy").GroupKind():
		return NetworkPolicyPrinter(), true
	case networkingv1.SchemeGroupVersion.WithKind("Ingress").GroupKind():
		return IngressPrinter(), true
	case networkingv1.SchemeGroupVersion.WithKind("IngressClass").GroupKind():
		return IngressClassPrinter(), true
	case nodev1.SchemeGroupVersion.WithKind("RuntimeClass").GroupKind():
		return RuntimeClassPrinter(), true
	case autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler").GroupKind():
		return HPAAnyVersionPrinter(), true
	case eventsv1.SchemeGroupVersion.WithKind("Event").GroupKind():
		return EventsV1Printer(), true
	case clusterquota.SchemeGroupVersion.WithKind("ClusterResourceQuota").GroupKind():
		return ClusterResourceQuotaPrinter(), true
	case clusterquota.SchemeGroupVersion.WithKind("AppliedClusterResourceQuota").GroupKind():
		return AppliedClusterResourceQuotaPrinter(), true
	}
	return storageAdmissionFlowControlPrinter(gk)
}

// storageAdmissionFlowControlKind maps the storage, certificates, admissionregistration and
// flowcontrol types to their kind.
func storageAdmissionFlowControlKind(obj runtime.Object) (schema.GroupKind, bool) {
	var gv schema.GroupVersion
	var kind string
	switch obj.(type) {
	case *storagev1.CSIDriver:
		gv, kind = storagev1.SchemeGroupVersion, "CSIDriver"
	case *storagev1.CSINode:
		gv, kind = storagev1.SchemeGroupVersion, "CSINode"
	case *storagev1.VolumeAttachment:
		gv, kind = storagev1.SchemeGroupVersion, "VolumeAttachment"
	case *storagev1.CSIStorageCapacity:
		gv, kind = storagev1.SchemeGroupVersion, "CSIStorageCapacity"
	case *storagev1.VolumeAttributesClass:
		gv, kind = storagev1.SchemeGroupVersion, "VolumeAttributesClass"
	case *certificatesv1.CertificateSigningRequest:
		gv, kind = certificatesv1.SchemeGroupVersion, "CertificateSigningRequest"
	case *certificatesv1.PodCertificateRequest:
		gv, kind = certificatesv1.SchemeGroupVersion, "PodCertificateRequest"
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		gv, kind = admissionGV, "MutatingWebhookConfiguration"
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		gv, kind = admissionGV, "ValidatingWebhookConfiguration"
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		gv, kind = admissionGV, "ValidatingAdmissionPolicy"
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		gv, kind = admissionGV, "ValidatingAdmissionPolicyBinding"
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		gv, kind = admissionGV, "MutatingAdmissionPolicy"
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		gv, kind = admissionGV, "MutatingAdmissionPolicyBinding"
	case *svmv1.StorageVersionMigration:
		gv, kind = svmv1.SchemeGroupVersion, "StorageVersionMigration"
	case *flowcontrolv1.FlowSchema:
		gv, kind = flowcontrolv1.SchemeGroupVersion, "FlowSchema"
	case *flowcontrolv1.PriorityLevelConfiguration:
		gv, kind = flowcontrolv1.SchemeGroupVersion, "PriorityLevelConfiguration"
	case *apiregistrationv1.APIService:
		gv, kind = apiregistrationv1.SchemeGroupVersion, "APIService"
	default:
		return resourceNetworkingKind(obj)
	}
	return gv.WithKind(kind).GroupKind(), true
}

// storageAdmissionFlowControlPrinter returns the printer of a storage, certificates,
// admissionregistration or flowcontrol kind.
func storageAdmissionFlowControlPrinter(gk schema.GroupKind) (Printer, bool) {
	var p func() Printer
	switch gk.Group {
	case storagev1.GroupName:
		p = map[string]func() Printer{"CSIDriver": CSIDriverPrinter, "CSINode": CSINodePrinter, "VolumeAttachment": VolumeAttachmentPrinter,
			"CSIStorageCapacity": CSIStorageCapacityPrinter, "VolumeAttributesClass": VolumeAttributesClassPrinter}[gk.Kind]
	case certificatesv1.GroupName:
		p = map[string]func() Printer{"CertificateSigningRequest": CSRPrinter, "PodCertificateRequest": PodCertificateRequestPrinter}[gk.Kind]
	case admissionregistrationv1.GroupName:
		p = map[string]func() Printer{"MutatingWebhookConfiguration": MutatingWebhookPrinter, "ValidatingWebhookConfiguration": ValidatingWebhookPrinter,
			"ValidatingAdmissionPolicy": ValidatingAdmissionPolicyPrinter, "ValidatingAdmissionPolicyBinding": ValidatingAdmissionPolicyBindingPrinter,
			"MutatingAdmissionPolicy": MutatingAdmissionPolicyPrinter, "MutatingAdmissionPolicyBinding": MutatingAdmissionPolicyBindingPrinter}[gk.Kind]
	case apiregistrationv1.GroupName:
		p = map[string]func() Printer{"APIService": APIServicePrinter}[gk.Kind]
	case flowcontrolv1.GroupName:
		p = map[string]func() Printer{"FlowSchema": FlowSchemaPrinter, "PriorityLevelConfiguration": PriorityLevelPrinter}[gk.Kind]
	case svmv1.GroupName:
		p = map[string]func() Printer{"StorageVersionMigration": StorageVersionMigrationPrinter}[gk.Kind]
	}
	if p == nil {
		return resourceNetworkingPrinter(gk)
	}
	return p(), true
}

// resourceNetworkingKind maps the resource.k8s.io kinds, ServiceCIDRs and IPAddresses to their kind.
func resourceNetworkingKind(obj runtime.Object) (schema.GroupKind, bool) {
	var gvk schema.GroupVersionKind
	switch obj.(type) {
	case *resourcev1.DeviceClass:
		gvk = resourcev1.SchemeGroupVersion.WithKind("DeviceClass")
	case *resourcev1.ResourceClaim:
		gvk = resourcev1.SchemeGroupVersion.WithKind("ResourceClaim")
	case *resourcev1.ResourceClaimTemplate:
		gvk = resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate")
	case *resourcev1.ResourceSlice:
		gvk = resourcev1.SchemeGroupVersion.WithKind("ResourceSlice")
	case *resourcev1.DeviceTaintRule:
		gvk = resourcev1.SchemeGroupVersion.WithKind("DeviceTaintRule")
	case *networkingv1.ServiceCIDR:
		gvk = networkingv1.SchemeGroupVersion.WithKind("ServiceCIDR")
	case *networkingv1.IPAddress:
		gvk = networkingv1.SchemeGroupVersion.WithKind("IPAddress")
	default:
		return schema.GroupKind{}, false
	}
	return gvk.GroupKind(), true
}

// resourceNetworkingPrinter returns the printer of a kind resourceNetworkingKind knows.
func resourceNetworkingPrinter(gk schema.GroupKind) (Printer, bool) {
	var p func() Printer
	switch gk.Group {
	case resourcev1.GroupName:
		p = map[string]func() Printer{"DeviceClass": DeviceClassPrinter, "ResourceClaim": ResourceClaimPrinter,
			"ResourceClaimTemplate": ResourceClaimTemplatePrinter, "ResourceSlice": ResourceSlicePrinter,
			"DeviceTaintRule": DeviceTaintRulePrinter}[gk.Kind]
	case networkingv1.GroupName:
		p = map[string]func() Printer{"ServiceCIDR": ServiceCIDRPrinter, "IPAddress": IPAddressPrinter}[gk.Kind]
	}
	if p == nil {
		return Printer{}, false
	}
	return p(), true
}

// rbacKind returns the kind of the RBAC types.
func rbacKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: rbacv1.GroupName, Kind: kind}
}
