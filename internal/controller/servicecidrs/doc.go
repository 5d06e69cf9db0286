// Package servicecidrs is upstream's service-cidr-controller (kube-controller-manager): it
// keeps every ServiceCIDR protected by a finalizer while it holds addresses in use, and
// reports its readiness.
//
// Invariants:
//   - A ServiceCIDR not being deleted carries the finalizer
//     `networking.k8s.io/service-cidr-finalizer` and a Ready=True condition with upstream's
//     message ("Kubernetes Service CIDR is ready", no reason); a Ready condition with
//     another status, reason or message is replaced (so the default ServiceCIDR's message
//     becomes this one, as on a cluster running kube-controller-manager).
//   - A ServiceCIDR being deleted keeps its finalizer while an IPAddress managed by the
//     allocator (`ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io`) lies in one of
//     its ranges and in no other ServiceCIDR, unless every one of its ranges lies inside
//     another ServiceCIDR's; meanwhile its Ready condition is False, reason Terminating,
//     with upstream's message. Once nothing blocks it, the finalizer is removed 10 seconds
//     after the deletion began (upstream's grace period, for allocations already under way).
//   - The allocator (package registry) gives no address from a ServiceCIDR being deleted
//     or not Ready, so an address cannot appear in a range after its check passed and the
//     grace period ended.
//   - Decisions are pure (Decide); Controller only reads its indexes and writes what
//     Decide returns. Nothing is decided before both indexes have listed.
package servicecidrs
