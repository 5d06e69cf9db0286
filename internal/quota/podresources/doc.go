// Package podresources owns the one aggregation of a pod's container resources that the
// quota evaluator, the LimitRanger admission plugin and pod defaulting all share: regular
// containers and sidecars (restartable init containers) add up, each other init container
// needs its own list plus the sidecars declared before it, and the pod needs the larger of
// the two per name. It also says which names pod-level resources (spec.resources) may set.
//
// Invariants:
//   - Pure functions of the pod: no IO, no package-level mutable state; the pod's
//     status, ephemeral containers, spec.overhead and spec.resources are never read by
//     Aggregate. ChargedRequests and ChargedLimits (what quota charges a pod whose node
//     reports allocated and actual resources, in-place resize) read the container
//     statuses and the PodResizePending condition, never pod-level status. What each caller does with overhead and pod-level values is its own
//     policy and stays in the caller.
//   - Inputs are read-only: every returned list is a fresh map of deep copies.
//   - Quantities are added and compared by package quantity (never scaling by a huge
//     exponent, whatever a stored pod holds).
//   - Imports only k8s.io/api and package quantity, so registry, admission and quota
//     packages may all import it.
package podresources
