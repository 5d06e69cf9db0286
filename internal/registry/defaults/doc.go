// Package defaults applies kube-apiserver's API defaulting to typed
// k8s.io/api objects before the registry validates and stores them.
//
// It owns the defaulting rules of the kinds quotad serves (core/v1 Pod,
// PodTemplate, Service, PersistentVolumeClaim, PersistentVolume,
// ReplicationController, Namespace, Secret, ConfigMap, LimitRange,
// ResourceQuota, Node, Endpoints; apps/v1 workloads; batch/v1 Job and
// CronJob; scheduling/v1 PriorityClass; storage/v1 StorageClass and
// CSIDriver; rbac/v1 RoleBinding and ClusterRoleBinding;
// admissionregistration/v1 webhook configurations and admission policies;
// flowcontrol/v1 FlowSchema and PriorityLevelConfiguration; apiregistration/v1
// APIService; discovery/v1 EndpointSlice; networking/v1 NetworkPolicy and
// IngressClass; autoscaling/v2 and v1 HorizontalPodAutoscaler; certificates/v1
// PodCertificateRequest), written
// after upstream's SetDefaults_* functions and their generated callers
// (defaulter-gen, including declarative +default markers).
//
// Invariants:
//   - Every function is pure: it mutates only the object it is given and
//     reads nothing else (no clock, no feature gates, no package state).
//     Feature-gated upstream defaults are applied as with the gates' default
//     values of the API version this module is built against.
//   - Applying defaults twice gives the same object as applying them once.
//   - Defaulting never fails and never panics, whatever the input; invalid
//     input is left for validation to report.
//   - Server-side allocation (cluster IPs, node ports, generated names, UIDs)
//     and registry strategy steps are not defaults; the few strategy steps
//     that are pure functions of the object (PrepareNamespaceForCreate,
//     JobSelector) are offered as separate functions for the registry.
package defaults
