// Package disruption is the disruption controller: it keeps every PodDisruptionBudget's
// status current from the pods its selector matches, as upstream's disruption controller
// (kube-controller-manager) does.
//
// For each budget it computes expectedPods (the matching pods, or the replicas of their
// controllers when the budget is a percentage or a maxUnavailable), desiredHealthy,
// currentHealthy (matching pods that are Ready and not being deleted, less those the
// eviction subresource recorded in disruptedPods in the last two minutes),
// disruptionsAllowed (never below 0), observedGeneration and the DisruptionAllowed
// condition. Compute is pure; the controller writes only a status that differs.
//
// Invariants: a policy/v1 budget with a nil selector matches no pod and one with an empty
// selector matches every pod of its namespace; the controller writes only /status.
package disruption
