// Package clusterquota is the pure core of quotad's ClusterResourceQuota
// (quota.openshift.io/v1): the API types (the same JSON shape as OpenShift's), which
// namespaces a cluster quota selects, and the arithmetic that keeps status.total and
// status.namespaces[] consistent as one namespace's usage moves.
//
// Invariants:
//   - No IO, no clocks, no package-level mutable state.
//   - status.total.used is the sum of status.namespaces[].status.used, and both are masked
//     to spec.quota.hard; status.total.hard and every namespace's hard equal
//     spec.quota.hard (as OpenShift's reconciliation controller writes them).
//   - status.namespaces[] is sorted by namespace name.
//   - Inputs are read-only: helpers return copies.
//
// +k8s:deepcopy-gen=package
package clusterquota

//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.37.0 --output-file zz_generated.deepcopy.go .
