package registry

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/registry/kinds/admissionregistration"
	"github.com/quotad/quotad/internal/registry/kinds/apiextensions"
	"github.com/quotad/quotad/internal/registry/kinds/apiregistration"
	"github.com/quotad/quotad/internal/registry/kinds/apps"
	"github.com/quotad/quotad/internal/registry/kinds/autoscaling"
	"github.com/quotad/quotad/internal/registry/kinds/batch"
	"github.com/quotad/quotad/internal/registry/kinds/certificates"
	"github.com/quotad/quotad/internal/registry/kinds/coordination"
	"github.com/quotad/quotad/internal/registry/kinds/core"
	"github.com/quotad/quotad/internal/registry/kinds/discovery"
	"github.com/quotad/quotad/internal/registry/kinds/flowcontrol"
	"github.com/quotad/quotad/internal/registry/kinds/networking"
	"github.com/quotad/quotad/internal/registry/kinds/node"
	"github.com/quotad/quotad/internal/registry/kinds/policy"
	"github.com/quotad/quotad/internal/registry/kinds/quotaopenshift"
	"github.com/quotad/quotad/internal/registry/kinds/rbac"
	"github.com/quotad/quotad/internal/registry/kinds/resource"
	"github.com/quotad/quotad/internal/registry/kinds/scheduling"
	"github.com/quotad/quotad/internal/registry/kinds/storage"
	"github.com/quotad/quotad/internal/registry/kinds/storagemigration"
)

// Resource describes one served resource.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	ListKind   string
	Singular   string
	Namespaced bool
	ShortNames []string
	Categories []string
	// Status and Scale report the /status and /scale subresources.
	Status bool
	Scale  bool
	// Type is the Go struct type of the object; nil for custom resources.
	Type reflect.Type
	// ListType is the Go struct type of the list; nil for custom resources.
	ListType reflect.Type
	// CRD is the definition serving a custom resource; nil for built-in kinds.
	CRD *apiextensionsv1.CustomResourceDefinition
	// Generation reports whether metadata.generation tracks spec changes.
	Generation bool
	// SharesWrites lets the watch hub hand out the object a writer of this replica just
	// committed instead of decoding the stored bytes (which are exactly that object encoded).
	// Only for high-volume kinds whose in-process consumers never hash or deep-compare them:
	// the shared object may differ from a decoded one in representation (a Quantity's cached
	// form, nil against empty), never in what it encodes to.
	SharesWrites bool
	// HubKeepsValues lets the watch hub keep every object's stored value and watch storage
	// without previous values, which etcd would otherwise read back for every update it
	// sends. For kinds with few objects updated often: each quota is rewritten by every
	// write it charges.
	HubKeepsValues bool
	// IndexedField is a field label whose equality lists are read through an index of the
	// keys by its value (fieldindexes.go), as kube-apiserver's watch cache indexes pods by
	// spec.nodeName; the index also keeps the labels, for cluster-wide label selectors.
	// "" for none.
	IndexedField string
	// Review marks a create-only resource that is never stored (TokenReview,
	// SubjectAccessReview and the like): a create is answered by the server's review
	// handler, which fills in the status; no other verb is served. Review resources are
	// not among All's (nothing lists, watches or deletes them).
	Review bool
	// Storage, when set, makes this resource another version of a stored one: upstream
	// serves one storage in several versions (events.k8s.io/v1 events are core/v1 events,
	// autoscaling/v1 horizontalpodautoscalers are autoscaling/v2 ones). The objects live
	// under the stored resource's keys in its form, converted on every read and write.
	Storage *StorageVersion
	// Synthesized marks a read-only resource whose objects the server computes on every
	// read and never stores (componentstatuses): only get and list are served.
	Synthesized bool
	// Strategy is the kind's behaviour (defaults, preparation, validation, warnings, field
	// labels, table); nil for custom resources (Config.CustomStrategy) and the review kinds.
	Strategy Strategy
	// AppliedView marks a namespaced read-only resource computed from cluster quotas
	// (AppliedClusterResourceQuota): get, list and watch only, served by the registry's
	// AppliedClusterQuotas and Watch, never stored.
	AppliedView bool
}

// StorageVersion ties a served version to the resource whose storage it shares.
type StorageVersion struct {
	// Resource is the stored resource: its group-resource names the keys, its kind is the
	// stored form.
	Resource *Resource
	// ToStorage converts an object of the served version into a new object of the stored
	// resource's type; FromStorage converts back. Neither changes its argument.
	ToStorage   func(runtime.Object) (runtime.Object, error)
	FromStorage func(runtime.Object) (runtime.Object, error)
}

// GVK returns the resource's group, version and kind.
func (r *Resource) GVK() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// GroupResource returns the resource's group and plural.
func (r *Resource) GroupResource() schema.GroupResource { return r.GVR.GroupResource() }

// New returns an empty object of the resource's kind.
func (r *Resource) New() runtime.Object {
	if r.Type == nil {
		u := &unstructured.Unstructured{Object: map[string]interface{}{}}
		u.SetGroupVersionKind(r.GVK())
		return u
	}
	return reflect.New(r.Type).Interface().(runtime.Object)
}

// NewList returns an empty list of the resource's kind.
func (r *Resource) NewList() runtime.Object {
	if r.ListType == nil {
		u := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
		u.SetGroupVersionKind(r.GVR.GroupVersion().WithKind(r.ListKind))
		return u
	}
	return reflect.New(r.ListType).Interface().(runtime.Object)
}

// KeyPrefix returns the etcd key prefix for the resource in namespace ns ("" for all
// namespaces or cluster-scoped). It ends with "/".
func (r *Resource) KeyPrefix(ns string) string {
	if r.Storage != nil {
		return r.Storage.Resource.KeyPrefix(ns)
	}
	return KeyPrefix(r.GVR.GroupResource(), ns)
}

// Key returns the etcd key of one object.
func (r *Resource) Key(ns, name string) string {
	if !r.Namespaced {
		ns = ""
	}
	return r.KeyPrefix(ns) + name
}

// KeyPrefix returns kube-apiserver's key prefix for a group-resource, ending with "/".
func KeyPrefix(gr schema.GroupResource, ns string) string {
	var b strings.Builder
	b.WriteString("/registry/")
	if gr.Group != "" {
		b.WriteString(gr.Group)
		b.WriteByte('/')
	}
	b.WriteString(gr.Resource)
	b.WriteByte('/')
	if ns != "" {
		b.WriteString(ns)
		b.WriteByte('/')
	}
	return b.String()
}

func builtin(gv schema.GroupVersion, plural, kind string, namespaced bool, obj, list interface{}, short []string, st Strategy, opts ...func(*Resource)) *Resource {
	r := &Resource{
		GVR:        gv.WithResource(plural),
		Kind:       kind,
		ListKind:   kind + "List",
		Singular:   strings.ToLower(kind),
		Namespaced: namespaced,
		ShortNames: short,
		Type:       reflect.TypeOf(obj),
		ListType:   reflect.TypeOf(list),
		Strategy:   st,
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func withStatus(r *Resource)       { r.Status = true }
func withScale(r *Resource)        { r.Scale = true }
func withGeneration(r *Resource)   { r.Generation = true }
func withAll(r *Resource)          { r.Categories = []string{"all"} }
func withSharedWrites(r *Resource) { r.SharesWrites = true }

func withKeptValues(r *Resource) { r.HubKeepsValues = true }

func withIndexedNodeName(r *Resource) { r.IndexedField = "spec.nodeName" }

func withAPIExtensions(r *Resource) { r.Categories = []string{"api-extensions"} }

// Builtins returns the built-in resources quotad serves.
func Builtins() []*Resource {
	coreGV := corev1.SchemeGroupVersion
	appsGV := appsv1.SchemeGroupVersion
	batchGV := batchv1.SchemeGroupVersion
	stored := []*Resource{
		builtin(coreGV, "namespaces", "Namespace", false, corev1.Namespace{}, corev1.NamespaceList{}, []string{"ns"}, core.Namespace{}, withStatus),
		builtin(coreGV, "nodes", "Node", false, corev1.Node{}, corev1.NodeList{}, []string{"no"}, core.Node{}, withStatus),
		builtin(coreGV, "pods", "Pod", true, corev1.Pod{}, corev1.PodList{}, []string{"po"}, core.Pod{}, withStatus, withGeneration, withAll, withSharedWrites, withIndexedNodeName),
		builtin(coreGV, "services", "Service", true, corev1.Service{}, corev1.ServiceList{}, []string{"svc"}, core.Service{}, withStatus, withAll),
		builtin(coreGV, "secrets", "Secret", true, corev1.Secret{}, corev1.SecretList{}, nil, core.Secret{}),
		builtin(coreGV, "configmaps", "ConfigMap", true, corev1.ConfigMap{}, corev1.ConfigMapList{}, []string{"cm"}, core.ConfigMap{}),
		builtin(coreGV, "persistentvolumeclaims", "PersistentVolumeClaim", true, corev1.PersistentVolumeClaim{}, corev1.PersistentVolumeClaimList{}, []string{"pvc"}, core.PersistentVolumeClaim{}, withStatus),
		builtin(coreGV, "replicationcontrollers", "ReplicationController", true, corev1.ReplicationController{}, corev1.ReplicationControllerList{}, []string{"rc"}, core.ReplicationController{}, withStatus, withScale, withGeneration, withAll),
		builtin(coreGV, "resourcequotas", "ResourceQuota", true, corev1.ResourceQuota{}, corev1.ResourceQuotaList{}, []string{"quota"}, core.ResourceQuota{}, withStatus, withSharedWrites, withKeptValues),
		builtin(coreGV, "limitranges", "LimitRange", true, corev1.LimitRange{}, corev1.LimitRangeList{}, []string{"limits"}, core.LimitRange{}),
		builtin(coreGV, "events", "Event", true, corev1.Event{}, corev1.EventList{}, []string{"ev"}, core.Event{}),
		builtin(coreGV, "serviceaccounts", "ServiceAccount", true, corev1.ServiceAccount{}, corev1.ServiceAccountList{}, []string{"sa"}, core.ServiceAccount{}),
		builtin(appsGV, "deployments", "Deployment", true, appsv1.Deployment{}, appsv1.DeploymentList{}, []string{"deploy"}, apps.Deployment{}, withStatus, withScale, withGeneration, withAll),
		builtin(appsGV, "replicasets", "ReplicaSet", true, appsv1.ReplicaSet{}, appsv1.ReplicaSetList{}, []string{"rs"}, apps.ReplicaSet{}, withStatus, withScale, withGeneration, withAll),
		builtin(appsGV, "statefulsets", "StatefulSet", true, appsv1.StatefulSet{}, appsv1.StatefulSetList{}, []string{"sts"}, apps.StatefulSet{}, withStatus, withScale, withGeneration, withAll),
		builtin(appsGV, "daemonsets", "DaemonSet", true, appsv1.DaemonSet{}, appsv1.DaemonSetList{}, []string{"ds"}, apps.DaemonSet{}, withStatus, withGeneration, withAll),
		builtin(appsGV, "controllerrevisions", "ControllerRevision", true, appsv1.ControllerRevision{}, appsv1.ControllerRevisionList{}, nil, apps.ControllerRevision{}),
		builtin(batchGV, "jobs", "Job", true, batchv1.Job{}, batchv1.JobList{}, nil, batch.Job{}, withStatus, withGeneration, withAll),
		builtin(batchGV, "cronjobs", "CronJob", true, batchv1.CronJob{}, batchv1.CronJobList{}, []string{"cj"}, batch.CronJob{}, withStatus, withGeneration, withAll),
		builtin(rbacv1.SchemeGroupVersion, "roles", "Role", true, rbacv1.Role{}, rbacv1.RoleList{}, nil, rbac.Role{}),
		builtin(rbacv1.SchemeGroupVersion, "rolebindings", "RoleBinding", true, rbacv1.RoleBinding{}, rbacv1.RoleBindingList{}, nil, rbac.RoleBinding{}),
		builtin(rbacv1.SchemeGroupVersion, "clusterroles", "ClusterRole", false, rbacv1.ClusterRole{}, rbacv1.ClusterRoleList{}, nil, rbac.ClusterRole{}),
		builtin(rbacv1.SchemeGroupVersion, "clusterrolebindings", "ClusterRoleBinding", false, rbacv1.ClusterRoleBinding{}, rbacv1.ClusterRoleBindingList{}, nil, rbac.ClusterRoleBinding{}),
		builtin(schedulingv1.SchemeGroupVersion, "priorityclasses", "PriorityClass", false, schedulingv1.PriorityClass{}, schedulingv1.PriorityClassList{}, []string{"pc"}, scheduling.PriorityClass{}),
		builtin(storagev1.SchemeGroupVersion, "storageclasses", "StorageClass", false, storagev1.StorageClass{}, storagev1.StorageClassList{}, []string{"sc"}, storage.StorageClass{}),
		builtin(clusterquota.SchemeGroupVersion, "clusterresourcequotas", "ClusterResourceQuota", false, clusterquota.ClusterResourceQuota{}, clusterquota.ClusterResourceQuotaList{}, []string{"clusterquota"}, quotaopenshift.ClusterResourceQuota{}, withStatus, withSharedWrites, withKeptValues),
		builtin(clusterquota.SchemeGroupVersion, "appliedclusterresourcequotas", "AppliedClusterResourceQuota", true, clusterquota.AppliedClusterResourceQuota{}, clusterquota.AppliedClusterResourceQuotaList{}, nil, quotaopenshift.AppliedClusterResourceQuota{}, func(r *Resource) { r.AppliedView = true }),
		builtin(apiextensionsv1.SchemeGroupVersion, "customresourcedefinitions", "CustomResourceDefinition", false, apiextensionsv1.CustomResourceDefinition{}, apiextensionsv1.CustomResourceDefinitionList{}, []string{"crd", "crds"}, apiextensions.CustomResourceDefinition{}, withStatus, withGeneration),
		builtin(coreGV, "endpoints", "Endpoints", true, corev1.Endpoints{}, corev1.EndpointsList{}, []string{"ep"}, core.Endpoints{}, func(r *Resource) { r.Singular = "endpoints" }),
		builtin(discoveryv1.SchemeGroupVersion, "endpointslices", "EndpointSlice", true, discoveryv1.EndpointSlice{}, discoveryv1.EndpointSliceList{}, nil, discovery.EndpointSlice{}),
		builtin(policyv1.SchemeGroupVersion, "poddisruptionbudgets", "PodDisruptionBudget", true, policyv1.PodDisruptionBudget{}, policyv1.PodDisruptionBudgetList{}, []string{"pdb"}, policy.PodDisruptionBudget{}, withStatus, withGeneration),
		// storage, certificates, admissionregistration, flowcontrol, apiregistration.
		builtin(storagev1.SchemeGroupVersion, "csidrivers", "CSIDriver", false, storagev1.CSIDriver{}, storagev1.CSIDriverList{}, nil, storage.CSIDriver{}),
		builtin(storagev1.SchemeGroupVersion, "csinodes", "CSINode", false, storagev1.CSINode{}, storagev1.CSINodeList{}, nil, storage.CSINode{}),
		builtin(storagev1.SchemeGroupVersion, "volumeattachments", "VolumeAttachment", false, storagev1.VolumeAttachment{}, storagev1.VolumeAttachmentList{}, nil, storage.VolumeAttachment{}, withStatus),
		builtin(storagev1.SchemeGroupVersion, "csistoragecapacities", "CSIStorageCapacity", true, storagev1.CSIStorageCapacity{}, storagev1.CSIStorageCapacityList{}, nil, storage.CSIStorageCapacity{}),
		builtin(storagev1.SchemeGroupVersion, "volumeattributesclasses", "VolumeAttributesClass", false, storagev1.VolumeAttributesClass{}, storagev1.VolumeAttributesClassList{}, []string{"vac"}, storage.VolumeAttributesClass{}),
		builtin(certificatesv1.SchemeGroupVersion, "certificatesigningrequests", "CertificateSigningRequest", false, certificatesv1.CertificateSigningRequest{}, certificatesv1.CertificateSigningRequestList{}, []string{"csr"}, certificates.CertificateSigningRequest{}, withStatus),
		builtin(certificatesv1.SchemeGroupVersion, "podcertificaterequests", "PodCertificateRequest", true, certificatesv1.PodCertificateRequest{}, certificatesv1.PodCertificateRequestList{}, nil, certificates.PodCertificateRequest{}, withStatus),
		builtin(admissionregistrationv1.SchemeGroupVersion, "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, admissionregistrationv1.MutatingWebhookConfiguration{}, admissionregistrationv1.MutatingWebhookConfigurationList{}, nil, admissionregistration.MutatingWebhookConfiguration{}, withGeneration, withAPIExtensions),
		builtin(admissionregistrationv1.SchemeGroupVersion, "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, admissionregistrationv1.ValidatingWebhookConfiguration{}, admissionregistrationv1.ValidatingWebhookConfigurationList{}, nil, admissionregistration.ValidatingWebhookConfiguration{}, withGeneration, withAPIExtensions),
		builtin(admissionregistrationv1.SchemeGroupVersion, "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false, admissionregistrationv1.ValidatingAdmissionPolicy{}, admissionregistrationv1.ValidatingAdmissionPolicyList{}, nil, admissionregistration.ValidatingAdmissionPolicy{}, withStatus, withGeneration, withAPIExtensions),
		builtin(admissionregistrationv1.SchemeGroupVersion, "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false, admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}, nil, admissionregistration.ValidatingAdmissionPolicyBinding{}, withGeneration, withAPIExtensions),
		builtin(admissionregistrationv1.SchemeGroupVersion, "mutatingadmissionpolicies", "MutatingAdmissionPolicy", false, admissionregistrationv1.MutatingAdmissionPolicy{}, admissionregistrationv1.MutatingAdmissionPolicyList{}, nil, admissionregistration.MutatingAdmissionPolicy{}, withGeneration, withAPIExtensions),
		builtin(admissionregistrationv1.SchemeGroupVersion, "mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false, admissionregistrationv1.MutatingAdmissionPolicyBinding{}, admissionregistrationv1.MutatingAdmissionPolicyBindingList{}, nil, admissionregistration.MutatingAdmissionPolicyBinding{}, withGeneration, withAPIExtensions),
		builtin(flowcontrolv1.SchemeGroupVersion, "flowschemas", "FlowSchema", false, flowcontrolv1.FlowSchema{}, flowcontrolv1.FlowSchemaList{}, nil, flowcontrol.FlowSchema{}, withStatus, withGeneration),
		builtin(apiregistrationv1.SchemeGroupVersion, "apiservices", "APIService", false, apiregistrationv1.APIService{}, apiregistrationv1.APIServiceList{}, nil, apiregistration.APIService{}, withStatus, withAPIExtensions),
		builtin(svmv1.SchemeGroupVersion, "storageversionmigrations", "StorageVersionMigration", false, svmv1.StorageVersionMigration{}, svmv1.StorageVersionMigrationList{}, nil, storagemigration.StorageVersionMigration{}, withStatus),
		builtin(flowcontrolv1.SchemeGroupVersion, "prioritylevelconfigurations", "PriorityLevelConfiguration", false, flowcontrolv1.PriorityLevelConfiguration{}, flowcontrolv1.PriorityLevelConfigurationList{}, nil, flowcontrol.PriorityLevelConfiguration{}, withStatus, withGeneration),
		builtin(coreGV, "podtemplates", "PodTemplate", true, corev1.PodTemplate{}, corev1.PodTemplateList{}, nil, core.PodTemplate{}, withGeneration),
		builtin(coreGV, "persistentvolumes", "PersistentVolume", false, corev1.PersistentVolume{}, corev1.PersistentVolumeList{}, []string{"pv"}, core.PersistentVolume{}, withStatus),
		builtin(coordinationv1.SchemeGroupVersion, "leases", "Lease", true, coordinationv1.Lease{}, coordinationv1.LeaseList{}, nil, coordination.Lease{}),
		builtin(networkingv1.SchemeGroupVersion, "networkpolicies", "NetworkPolicy", true, networkingv1.NetworkPolicy{}, networkingv1.NetworkPolicyList{}, []string{"netpol"}, networking.NetworkPolicy{}, withGeneration),
		builtin(networkingv1.SchemeGroupVersion, "ingresses", "Ingress", true, networkingv1.Ingress{}, networkingv1.IngressList{}, []string{"ing"}, networking.Ingress{}, withStatus, withGeneration),
		builtin(networkingv1.SchemeGroupVersion, "ingressclasses", "IngressClass", false, networkingv1.IngressClass{}, networkingv1.IngressClassList{}, nil, networking.IngressClass{}, withGeneration),
		builtin(nodev1.SchemeGroupVersion, "runtimeclasses", "RuntimeClass", false, nodev1.RuntimeClass{}, nodev1.RuntimeClassList{}, nil, node.RuntimeClass{}),
		builtin(autoscalingv2.SchemeGroupVersion, "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, autoscalingv2.HorizontalPodAutoscaler{}, autoscalingv2.HorizontalPodAutoscalerList{}, []string{"hpa"}, autoscaling.HorizontalPodAutoscaler{}, withStatus, withAll),
		// resource.k8s.io (DRA), ServiceCIDRs and IPAddresses.
		builtin(resourcev1.SchemeGroupVersion, "deviceclasses", "DeviceClass", false, resourcev1.DeviceClass{}, resourcev1.DeviceClassList{}, nil, resource.DeviceClass{}, withGeneration),
		builtin(resourcev1.SchemeGroupVersion, "resourceclaims", "ResourceClaim", true, resourcev1.ResourceClaim{}, resourcev1.ResourceClaimList{}, nil, resource.ResourceClaim{}, withStatus),
		builtin(resourcev1.SchemeGroupVersion, "resourceclaimtemplates", "ResourceClaimTemplate", true, resourcev1.ResourceClaimTemplate{}, resourcev1.ResourceClaimTemplateList{}, nil, resource.ResourceClaimTemplate{}),
		builtin(resourcev1.SchemeGroupVersion, "resourceslices", "ResourceSlice", false, resourcev1.ResourceSlice{}, resourcev1.ResourceSliceList{}, nil, resource.ResourceSlice{}, withGeneration),
		builtin(resourcev1.SchemeGroupVersion, "devicetaintrules", "DeviceTaintRule", false, resourcev1.DeviceTaintRule{}, resourcev1.DeviceTaintRuleList{}, nil, resource.DeviceTaintRule{}, withStatus, withGeneration),
		builtin(networkingv1.SchemeGroupVersion, "servicecidrs", "ServiceCIDR", false, networkingv1.ServiceCIDR{}, networkingv1.ServiceCIDRList{}, nil, networking.ServiceCIDR{}, withStatus),
		builtin(networkingv1.SchemeGroupVersion, "ipaddresses", "IPAddress", false, networkingv1.IPAddress{}, networkingv1.IPAddressList{}, []string{"ip"}, networking.IPAddress{}),
	}
	synthesized := func(r *Resource) { r.Synthesized = true }
	stored = append(stored, builtin(coreGV, "componentstatuses", "ComponentStatus", false, corev1.ComponentStatus{}, corev1.ComponentStatusList{}, []string{"cs"}, core.ComponentStatus{}, synthesized))
	return append(stored, convertedVersions(stored)...)
}

// Reviews returns the create-only review resources quotad serves.
func Reviews() []*Resource {
	review := func(r *Resource) { r.Review = true }
	authn := authenticationv1.SchemeGroupVersion
	authz := authorizationv1.SchemeGroupVersion
	return []*Resource{
		builtin(authn, "tokenreviews", "TokenReview", false, authenticationv1.TokenReview{}, nil, nil, nil, review),
		builtin(authn, "selfsubjectreviews", "SelfSubjectReview", false, authenticationv1.SelfSubjectReview{}, nil, nil, nil, review),
		builtin(authz, "selfsubjectaccessreviews", "SelfSubjectAccessReview", false, authorizationv1.SelfSubjectAccessReview{}, nil, nil, nil, review),
		builtin(authz, "selfsubjectrulesreviews", "SelfSubjectRulesReview", false, authorizationv1.SelfSubjectRulesReview{}, nil, nil, nil, review),
		builtin(authz, "localsubjectaccessreviews", "LocalSubjectAccessReview", true, authorizationv1.LocalSubjectAccessReview{}, nil, nil, nil, review),
		builtin(authz, "subjectaccessreviews", "SubjectAccessReview", false, authorizationv1.SubjectAccessReview{}, nil, nil, nil, review),
		// quotad's what-if review: will this object, and its replicas, fit the quotas?
		builtin(fit.SchemeGroupVersion, "quotareviews", "QuotaReview", true, fit.QuotaReview{}, nil, nil, nil, review),
		// core bindings: a create binds the pod the Binding names, as pods/binding.
		builtin(corev1.SchemeGroupVersion, "bindings", "Binding", true, corev1.Binding{}, nil, nil, nil, review),
	}
}

// ScaleGVK is the kind served by /scale subresources.
var ScaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// Catalogue is the live set of served resources: the built-ins plus the custom resources of
// Established CRDs. It is safe for concurrent use.
type Catalogue struct {
	mu        sync.RWMutex
	resources map[schema.GroupVersionResource]*Resource
	// reviews are the create-only review resources (fixed).
	reviews map[schema.GroupVersionResource]*Resource
	// generation increases on every change so discovery and OpenAPI documents can be rebuilt.
	generation int64
	// customRevs is, per CRD name, the revision of the CRD state last applied.
	customRevs map[string]int64
}

// NewCatalogue returns a catalogue holding the built-in resources.
func NewCatalogue() *Catalogue {
	c := &Catalogue{resources: map[schema.GroupVersionResource]*Resource{}, reviews: map[schema.GroupVersionResource]*Resource{}}
	for _, r := range Builtins() {
		c.resources[r.GVR] = r
	}
	for _, r := range Reviews() {
		c.reviews[r.GVR] = r
	}
	return c
}

// Get returns the resource served at gvr (a review resource too), or nil.
func (c *Catalogue) Get(gvr schema.GroupVersionResource) *Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r := c.resources[gvr]; r != nil {
		return r
	}
	return c.reviews[gvr]
}

// Reviews returns the create-only review resources, sorted as All sorts.
func (c *Catalogue) Reviews() []*Resource {
	out := make([]*Resource, 0, len(c.reviews))
	for _, r := range c.reviews {
		out = append(out, r)
	}
	sortResources(out)
	return out
}

// ForGroupResource returns the served resource of a group and plural in any version: a
// built-in one before a custom one, the stored version before one converted to it, else
// the smallest version.
func (c *Catalogue) ForGroupResource(gr schema.GroupResource) *Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	better := func(r, found *Resource) bool {
		switch {
		case found == nil:
			return true
		case (r.CRD == nil) != (found.CRD == nil):
			return r.CRD == nil
		case (r.Storage == nil) != (found.Storage == nil):
			return r.Storage == nil
		}
		return r.GVR.Version < found.GVR.Version
	}
	var found *Resource
	for gvr, r := range c.resources {
		if gvr.GroupResource() == gr && better(r, found) {
			found = r
		}
	}
	return found
}

// Default applies the defaults of obj's kind (its strategy's), for objects built outside a
// write (mutating admission policies' patches). Objects of other types are left untouched.
func (c *Catalogue) Default(obj runtime.Object) {
	if r := c.forType(obj); r != nil {
		if d, ok := r.Strategy.(Defaulter); ok {
			d.Default(obj)
		}
	}
}

// KindOf returns the group, version and kind of a typed object the catalogue serves (for
// objects whose type metadata is empty, as decoded ones are); false for other types.
func (c *Catalogue) KindOf(obj runtime.Object) (schema.GroupVersionKind, bool) {
	if r := c.forType(obj); r != nil {
		return r.GVK(), true
	}
	return schema.GroupVersionKind{}, false
}

// forType returns the resource whose objects have obj's Go type, or nil. Types are per
// version: one resource serves each (the first by group, version and plural if not).
func (c *Catalogue) forType(obj runtime.Object) *Resource {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil
	}
	t := reflect.TypeOf(obj).Elem()
	c.mu.RLock()
	defer c.mu.RUnlock()
	var found *Resource
	for _, r := range c.resources {
		if r.Type == t && (found == nil || r.GVR.String() < found.GVR.String()) {
			found = r
		}
	}
	return found
}

// ForKind returns the resource serving a group, version and kind, or nil.
func (c *Catalogue) ForKind(gvk schema.GroupVersionKind) *Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, r := range c.resources {
		if r.GVK() == gvk {
			return r
		}
	}
	return nil
}

// All returns every served resource sorted by group, version and plural.
func (c *Catalogue) All() []*Resource {
	c.mu.RLock()
	out := make([]*Resource, 0, len(c.resources))
	for _, r := range c.resources {
		out = append(out, r)
	}
	c.mu.RUnlock()
	sortResources(out)
	return out
}

// sortResources sorts by group, version and plural.
func sortResources(out []*Resource) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GVR, out[j].GVR
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Resource < b.Resource
	})
}

// Generation returns a number that changes whenever the served set changes.
func (c *Catalogue) Generation() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.generation
}

// SetCustom replaces the custom resources served for one CRD (by its name) with rs, as of
// the CRD's revision rev: rs empty removes them. A call older than one already applied for
// that name is ignored, so a late watch event of a deleted CRD cannot undo its re-creation.
func (c *Catalogue) SetCustom(crdName string, rev int64, rs []*Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.customRevs == nil {
		c.customRevs = map[string]int64{}
	}
	if rev < c.customRevs[crdName] {
		return
	}
	c.customRevs[crdName] = rev
	for gvr, r := range c.resources {
		if r.CRD != nil && r.CRD.Name == crdName {
			delete(c.resources, gvr)
		}
	}
	for _, r := range rs {
		c.resources[r.GVR] = r
	}
	c.generation++
}

// CustomResources builds the served resources of an Established CRD (one per served version).
func CustomResources(crd *apiextensionsv1.CustomResourceDefinition) []*Resource {
	var out []*Resource
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		r := &Resource{
			GVR:        schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural},
			Kind:       crd.Spec.Names.Kind,
			ListKind:   crd.Spec.Names.ListKind,
			Singular:   crd.Spec.Names.Singular,
			Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			ShortNames: crd.Spec.Names.ShortNames,
			Categories: crd.Spec.Names.Categories,
			CRD:        crd,
			Generation: true,
		}
		if r.ListKind == "" {
			r.ListKind = r.Kind + "List"
		}
		if r.Singular == "" {
			r.Singular = strings.ToLower(r.Kind)
		}
		if v.Subresources != nil {
			r.Status = v.Subresources.Status != nil
			r.Scale = v.Subresources.Scale != nil
		}
		out = append(out, r)
	}
	return out
}

// CRDVersion returns the CRD version a custom resource is served at, or nil.
func (r *Resource) CRDVersion() *apiextensionsv1.CustomResourceDefinitionVersion {
	if r.CRD == nil {
		return nil
	}
	for i := range r.CRD.Spec.Versions {
		if r.CRD.Spec.Versions[i].Name == r.GVR.Version {
			return &r.CRD.Spec.Versions[i]
		}
	}
	return nil
}
