// Package clusterroleaggregation is upstream's ClusterRole aggregation controller: the rules
// of a ClusterRole with an aggregationRule are the union of the rules of the ClusterRoles
// its selectors match (itself excluded), in selector order, then by role name, without
// duplicates, kept current as ClusterRoles change.
//
// Invariants:
//   - Every ClusterRole change recomputes every aggregated ClusterRole (the queue holds one
//     key, so bursts collapse); chains (view → edit → admin) converge because each
//     aggregated role's own update is a change.
//   - SyncAll aggregates to a fixed point; the server runs it at start, before serving, so
//     the default admin, edit and view roles are never seen empty.
//   - Writes run as quotad itself (no request user), so escalation checks do not apply, and
//     are made only when the rules differ; nothing else of the role is changed.
package clusterroleaggregation
