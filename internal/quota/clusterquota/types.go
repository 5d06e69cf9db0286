package clusterquota

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of cluster quotas.
const GroupName = "quota.openshift.io"

// SchemeGroupVersion is quota.openshift.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// ClusterResourceQuota mirrors a ResourceQuota at cluster scope: it limits the summed usage
// of every namespace its selector selects.
type ClusterResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// Spec defines the desired quota
	Spec ClusterResourceQuotaSpec `json:"spec"`

	// Status defines the actual enforced quota and its current usage
	Status ClusterResourceQuotaStatus `json:"status,omitempty"`
}

// ClusterResourceQuotaSpec defines the desired quota restrictions.
type ClusterResourceQuotaSpec struct {
	// Selector is the selector used to match projects.
	// It should only select active projects on the scale of dozens (though it can select
	// many more less active projects).  These projects will contend on object creation through
	// this resource.
	Selector ClusterResourceQuotaSelector `json:"selector"`

	// Quota defines the desired quota
	Quota corev1.ResourceQuotaSpec `json:"quota"`
}

// ClusterResourceQuotaSelector is used to select projects. At least one of LabelSelector
// or AnnotationSelector must present. If only one is present, it is the only selection
// criteria. If both are specified, the project must match both restrictions.
type ClusterResourceQuotaSelector struct {
	// LabelSelector is used to select projects by label.
	LabelSelector *metav1.LabelSelector `json:"labels"`

	// AnnotationSelector is used to select projects by annotation.
	AnnotationSelector map[string]string `json:"annotations"`
}

// ClusterResourceQuotaStatus defines the actual enforced quota and its current usage.
type ClusterResourceQuotaStatus struct {
	// Total defines the actual enforced quota and its current usage across all projects
	Total corev1.ResourceQuotaStatus `json:"total"`

	// Namespaces slices the usage by project.  This division allows for quick resolution of
	// deletion reconciliation inside of a single project without requiring a recalculation
	// across all projects.  This can be used to pull the deltas for a given project.
	Namespaces ResourceQuotasStatusByNamespace `json:"namespaces"`
}

// ResourceQuotasStatusByNamespace bundles multiple ResourceQuotaStatusByNamespace.
type ResourceQuotasStatusByNamespace []ResourceQuotaStatusByNamespace

// ResourceQuotaStatusByNamespace gives status for a particular project.
type ResourceQuotaStatusByNamespace struct {
	// Namespace the project this status applies to
	Namespace string `json:"namespace"`

	// Status indicates how many resources have been consumed by this project
	Status corev1.ResourceQuotaStatus `json:"status"`
}

// ClusterResourceQuotaList is a collection of ClusterResourceQuotas.
type ClusterResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`

	// Items is a list of ClusterResourceQuotas
	Items []ClusterResourceQuota `json:"items"`
}

// AppliedClusterResourceQuota mirrors ClusterResourceQuota at project scope, for projects
// that a user may see but whose cluster quotas the user may not read.
type AppliedClusterResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	// Spec defines the desired quota
	Spec ClusterResourceQuotaSpec `json:"spec"`

	// Status defines the actual enforced quota and its current usage
	Status ClusterResourceQuotaStatus `json:"status"`
}

// AppliedClusterResourceQuotaList is a collection of AppliedClusterResourceQuotas.
type AppliedClusterResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`

	// Items is a list of AppliedClusterResourceQuota
	Items []AppliedClusterResourceQuota `json:"items"`
}

// DeepCopyInto copies in into out.
func (in *ClusterResourceQuotaSelector) DeepCopyInto(out *ClusterResourceQuotaSelector) {
	*out = *in
	if in.LabelSelector != nil {
		out.LabelSelector = in.LabelSelector.DeepCopy()
	}
	if in.AnnotationSelector != nil {
		out.AnnotationSelector = make(map[string]string, len(in.AnnotationSelector))
		for k, v := range in.AnnotationSelector {
			out.AnnotationSelector[k] = v
		}
	}
}

// DeepCopy returns a deep copy.
func (in *ClusterResourceQuotaSelector) DeepCopy() *ClusterResourceQuotaSelector {
	if in == nil {
		return nil
	}
	out := new(ClusterResourceQuotaSelector)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies in into out.
func (in *ClusterResourceQuotaSpec) DeepCopyInto(out *ClusterResourceQuotaSpec) {
	in.Selector.DeepCopyInto(&out.Selector)
	in.Quota.DeepCopyInto(&out.Quota)
}

// DeepCopy returns a deep copy.
func (in *ClusterResourceQuotaSpec) DeepCopy() *ClusterResourceQuotaSpec {
	if in == nil {
		return nil
	}
	out := new(ClusterResourceQuotaSpec)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies in into out.
func (in *ClusterResourceQuotaStatus) DeepCopyInto(out *ClusterResourceQuotaStatus) {
	in.Total.DeepCopyInto(&out.Total)
	out.Namespaces = in.Namespaces.DeepCopy()
}

// DeepCopy returns a deep copy.
func (in *ClusterResourceQuotaStatus) DeepCopy() *ClusterResourceQuotaStatus {
	if in == nil {
		return nil
	}
	out := new(ClusterResourceQuotaStatus)
	in.DeepCopyInto(out)
	return out
}

// DeepCopy returns a deep copy.
func (in ResourceQuotasStatusByNamespace) DeepCopy() ResourceQuotasStatusByNamespace {
	if in == nil {
		return nil
	}
	out := make(ResourceQuotasStatusByNamespace, len(in))
	for i := range in {
		out[i].Namespace = in[i].Namespace
		in[i].Status.DeepCopyInto(&out[i].Status)
	}
	return out
}

// DeepCopyInto copies in into out.
func (in *ClusterResourceQuota) DeepCopyInto(out *ClusterResourceQuota) {
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a deep copy.
func (in *ClusterResourceQuota) DeepCopy() *ClusterResourceQuota {
	if in == nil {
		return nil
	}
	out := new(ClusterResourceQuota)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *ClusterResourceQuota) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *ClusterResourceQuotaList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &ClusterResourceQuotaList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]ClusterResourceQuota, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// DeepCopyInto copies in into out.
func (in *AppliedClusterResourceQuota) DeepCopyInto(out *AppliedClusterResourceQuota) {
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a deep copy.
func (in *AppliedClusterResourceQuota) DeepCopy() *AppliedClusterResourceQuota {
	if in == nil {
		return nil
	}
	out := new(AppliedClusterResourceQuota)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *AppliedClusterResourceQuota) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *AppliedClusterResourceQuotaList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &AppliedClusterResourceQuotaList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]AppliedClusterResourceQuota, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
