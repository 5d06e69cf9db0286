// Package server wires quotad together and runs it: storage (embedded or external etcd),
// certificates and credentials, the registry with its admission chain and quota accounting,
// the HTTP edge with its authenticators (and the watch-kept index of ServiceAccounts, Pods
// and Secrets that ServiceAccount tokens are checked against), bootstrap objects
// (namespaces, system priority classes, and upstream's default RBAC roles and bindings,
// reconciled at every start: rbacbootstrap.go), the in-process controllers, and the
// status.typeChecking of ValidatingAdmissionPolicies (policy.go). It is the only package
// that imports every other one.
//
// Invariants: every long-running part is started with a context and stops when it ends;
// Run returns only after the HTTP server and storage are shut down.
package server
