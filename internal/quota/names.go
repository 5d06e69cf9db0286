package quota

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Resource-name classification, as upstream's pkg/apis/core/helper defines it.

// ObjectCountPrefix starts every generic object-count quota name ("count/pods").
const ObjectCountPrefix = "count/"

// StorageClassSuffix joins a storage class to a PVC quota name:
// "<class>.storageclass.storage.k8s.io/requests.storage".
const StorageClassSuffix = ".storageclass.storage.k8s.io/"

// ObjectCountName returns the object-count quota name of a group-resource:
// count/<resource> for the core group, count/<resource>.<group> otherwise.
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName(ObjectCountPrefix + gr.Resource)
	}
	return corev1.ResourceName(ObjectCountPrefix + gr.Resource + "." + gr.Group)
}

// ParseObjectCountName is the inverse of ObjectCountName; ok is false when name does not
// start with "count/" or names no resource.
func ParseObjectCountName(name corev1.ResourceName) (gr schema.GroupResource, ok bool) {
	rest, found := strings.CutPrefix(string(name), ObjectCountPrefix)
	if !found || rest == "" {
		return schema.GroupResource{}, false
	}
	resource, group, _ := strings.Cut(rest, ".")
	if resource == "" {
		return schema.GroupResource{}, false
	}
	return schema.GroupResource{Group: group, Resource: resource}, true
}

// standardQuotaResources are the names accepted in hard without a "/" (besides hugepages).
func isStandardQuotaResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
		corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas,
		corev1.ResourceServices, corev1.ResourceReplicationControllers, corev1.ResourceSecrets,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers:
		return true
	}
	return false
}

// IsQuotaHugePageResourceName reports whether name starts with hugepages- or
// requests.hugepages-.
func IsQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// IsStandardQuotaResourceName reports whether name is known to the quota system without
// qualification (validation's "must be a standard resource for quota").
func IsStandardQuotaResourceName(name corev1.ResourceName) bool {
	return isStandardQuotaResource(name) || IsQuotaHugePageResourceName(name)
}

// IsStandardResourceName reports whether name is a standard resource name (validation's
// "must be a standard resource type or fully qualified"): the quota names plus storage.
func IsStandardResourceName(name corev1.ResourceName) bool {
	return isStandardQuotaResource(name) || name == corev1.ResourceStorage || IsQuotaHugePageResourceName(name)
}

// IsNativeResource reports whether name is in the kubernetes.io/ namespace; unqualified
// names implicitly are.
func IsNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// IsExtendedResourceName reports whether name is an extended resource: qualified, outside
// kubernetes.io/, not starting with "requests.", and "requests."+name is a qualified name.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	if IsNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// IsIntegerResourceName reports whether values of name must be whole numbers.
func IsIntegerResourceName(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts,
		corev1.ResourceServicesLoadBalancers:
		return true
	}
	return IsExtendedResourceName(name)
}
