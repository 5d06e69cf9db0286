package fit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of quotad's own quota APIs.
const GroupName = "quota.quotad.io"

// SchemeGroupVersion is quota.quotad.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// QuotaReview asks whether an object (and, for a workload, its replicas) fits the quotas
// of the review's namespace. It is create-only and namespaced; nothing is stored or
// charged. The answer is computed as admission would decide a create of the object (an
// update when an object of that kind and name exists: a workload's replicas are then the
// ones it would add).
// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type QuotaReview struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   QuotaReviewSpec   `json:"spec"`
	Status QuotaReviewStatus `json:"status,omitempty"`
}

// QuotaReviewSpec is the question.
// +k8s:deepcopy-gen=true
type QuotaReviewSpec struct {
	// Object is the object to evaluate, of any namespaced kind the server serves; its
	// namespace, when set, must be the review's. For a Pod, Deployment, ReplicaSet,
	// StatefulSet, Job or ReplicationController its pods are evaluated too (a Pod counts
	// as one replica of itself).
	Object runtime.RawExtension `json:"object"`
	// Replicas overrides the object's replica count (spec.replicas, or a Job's
	// parallelism; for a Pod, how many copies); nil: the object's own.
	Replicas *int32 `json:"replicas,omitempty"`
}

// QuotaReviewStatus is the answer.
// +k8s:deepcopy-gen=true
type QuotaReviewStatus struct {
	// Operation is how the object was evaluated: CREATE, or UPDATE when it exists.
	Operation string `json:"operation,omitempty"`
	// Allowed reports whether admission would admit the object itself (a Warn or Audit
	// quota never refuses).
	Allowed bool `json:"allowed"`
	// Reason is the refusal admission would give the object, its 403 message.
	Reason string `json:"reason,omitempty"`
	// Fits reports whether the object and every replica fit every matching quota, in every
	// enforcement mode.
	Fits bool `json:"fits"`
	// Replicas is how many pods the object would add (0 when it makes none).
	Replicas int32 `json:"replicas,omitempty"`
	// ReplicasFit is how many of them fit every Enforce quota, after the object itself.
	ReplicasFit int32 `json:"replicasFit,omitempty"`
	// Warnings are the Warning headers the write would get (Warn quotas, thresholds,
	// replicas that do not fit).
	Warnings []string `json:"warnings,omitempty"`
	// Quotas holds one entry per quota that matches the object or its pods, ResourceQuotas
	// in name order, then cluster quotas in name order.
	Quotas []QuotaFit `json:"quotas,omitempty"`
}

// QuotaFit is one quota's part of the answer.
// +k8s:deepcopy-gen=true
type QuotaFit struct {
	// Kind is ResourceQuota or ClusterResourceQuota.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Enforcement is the quota's mode (quota.quotad.io/enforcement).
	Enforcement string `json:"enforcement"`
	// WarnAt is the quota's warn-at annotation as parsed, when set.
	WarnAt string `json:"warnAt,omitempty"`
	// Fits reports whether the object and every replica fit this quota.
	Fits bool `json:"fits"`
	// ReplicasFit is how many replicas fit this quota after the object (nil when the
	// object makes no pods, or neither its pods nor their claims match this quota). A
	// quota that refuses every pod (a "must specify" constraint) fits none.
	ReplicasFit *int32 `json:"replicasFit,omitempty"`
	// Resources holds each resource of the quota's hard the request consumes, in name order.
	Resources []ResourceFit `json:"resources,omitempty"`
}

// ResourceFit is one resource of one quota.
// +k8s:deepcopy-gen=true
type ResourceFit struct {
	Name corev1.ResourceName `json:"name"`
	// Used is the quota's usage now.
	Used resource.Quantity `json:"used"`
	// Requested is what the object and all its replicas would add (a decrease is negative).
	Requested resource.Quantity `json:"requested"`
	// PerReplica is what one replica adds (its pod and a StatefulSet's claims), for
	// objects that make pods.
	PerReplica *resource.Quantity `json:"perReplica,omitempty"`
	Hard       resource.Quantity  `json:"hard"`
	// Remaining is hard − used, never below zero.
	Remaining resource.Quantity `json:"remaining"`
	// Fits reports whether used + requested ≤ hard.
	Fits bool `json:"fits"`
}
