// Package resourceclaim is kube-controller-manager's ResourceClaim controller: for every
// entry of a pod's spec.resourceClaims that names a ResourceClaimTemplate it creates a
// ResourceClaim from the template (generateName "<pod>-<claim>-", annotated
// resource.kubernetes.io/pod-claim-name, controlled by the pod) and records its name in
// the pod's status.resourceClaimStatuses. The claim goes through admission like any
// write, so it is charged to quota like any claim; a refusal is reported as upstream
// reports it, a Warning Event FailedResourceClaimCreation on the pod, and retried with
// backoff. Claims are deleted with their pod by the garbage collector (owner reference),
// and a done pod's unallocated claims are deleted at once, as upstream.
//
// Invariants: the controller only writes claims it generated for a pod (controlled by the
// pod's UID and annotated with the pod claim's name) and the pod's
// status.resourceClaimStatuses; it reads everything from storage at sync time.
package resourceclaim
