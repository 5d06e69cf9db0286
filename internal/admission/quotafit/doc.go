// Package quotafit gives "will this fit?" answers from the live quotas of a namespace:
// the QuotaReview computation the server's review handler runs, and the validating step
// that warns the client of a workload write whose added replicas cannot all fit. Both are
// fit.Review over the same inputs, so a review and the warning of the same write agree.
//
// Invariants:
//   - It never refuses and never charges: a warning is a Warning header (admission.Warn),
//     the review only reads.
//   - Writes that are not a create or update of a Deployment, ReplicaSet, StatefulSet, Job
//     or ReplicationController adding replicas, writes of subresources, and writes whose
//     request carries no warning sink (in-process controllers) cost a type switch: no
//     read, no allocation. Pod creates never reach a read.
//   - The quotas are read at one revision through Source, as admission judges them;
//     template pods get the defaults and mutating admission their controller's creates
//     would get.
package quotafit
