// Package validation checks typed k8s.io/api objects the way kube-apiserver
// does before it stores them, with upstream's field paths and messages, so
// that clients see the same 422 errors from quotad.
//
// It owns create and update validation of the kinds quotad serves, written
// after upstream's pkg/apis/{core,apps,batch,scheduling,storage,rbac}/validation:
// Pod, PodTemplate, Service, PersistentVolumeClaim, ReplicationController,
// Namespace, Secret, ConfigMap, LimitRange, ServiceAccount, Event, Node,
// Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
// PriorityClass, StorageClass, Role, ClusterRole, RoleBinding and
// ClusterRoleBinding (rbac.go); storage.k8s.io CSIDriver, CSINode,
// VolumeAttachment, CSIStorageCapacity and VolumeAttributesClass
// (storage.go); CertificateSigningRequest with its /status and /approval
// rules (certificates.go, ValidateSubresourceUpdate) and PodCertificateRequest with its
// /status rules (podcertificaterequest.go; the status rules take the server's time as an
// argument); admissionregistration
// webhook configurations and admission policies and bindings
// (admissionregistration.go; CEL expressions are checked for presence, not
// compiled); FlowSchema and PriorityLevelConfiguration with upstream's
// mandatory objects (flowcontrol.go); APIService (apiregistration.go);
// Endpoints, EndpointSlice and PodDisruptionBudget; PersistentVolume
// (persistentvolume.go), Lease (coordination.go), NetworkPolicy, Ingress and
// IngressClass (networking.go), RuntimeClass (node.go), HorizontalPodAutoscaler
// v2 and v1 (autoscaling.go) and events.k8s.io/v1 Event (events.go), the
// converted versions validated in their stored form as upstream does.
// ResourceQuota is validated by
// internal/quota. Custom resources are validated by Custom (custom.go) as
// upstream's customresource strategy does: ObjectMeta, the CRD version's
// OpenAPI v3 schema (with ratcheting on update), scale paths, embedded
// resources and list types; CEL rules (x-kubernetes-validations) are not
// evaluated. It also owns the CronJob schedule grammar (cron.go), which the CronJob
// controller uses to compute activations.
//
// Invariants:
//   - Functions are pure: they never modify their arguments and read nothing
//     but them (no clock, no feature gates, no package state). Feature-gated
//     upstream rules follow the gates' defaults for the API version this
//     module is built against.
//   - Objects are expected to have had defaults.Apply (and the registry's
//     create-time steps such as name generation and Job selector
//     generation) applied first, as upstream validates defaulted objects.
//   - Every error is a *field.Error built with the field constructors, so its
//     Error() text is upstream's byte for byte; no function panics, whatever
//     the input.
//   - A namespaced object must carry its namespace when validated; the
//     caller fills it from the request before calling.
package validation
