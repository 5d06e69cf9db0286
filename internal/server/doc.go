// Package server wires quotad together and runs it: storage (embedded or external etcd),
// certificates and credentials, the registry with its admission chain and quota accounting,
// the HTTP edge with its authenticators (and the watch-kept index of ServiceAccounts, Pods
// and Secrets that ServiceAccount tokens are checked against), bootstrap objects
// (namespaces, system priority classes, and upstream's default RBAC roles and bindings,
// reconciled at every start: rbacbootstrap.go), the in-process controllers, and the
// clustered embedded etcd (cluster.go, join.go, jointoken.go: --cluster-init writes a join
// token, printed by the start that makes it, `quotad token` later; --join fetches and checks
// the CA against the token, posts to a member's join endpoint and writes the shared secrets
// it receives; a member's advertise address and etcd ports are kept in etcd-member.json and
// reused on restarts, other flags refused; ports in use are refused before a join, naming
// the flags to set). kube-apiserver's own controllers run
// on every replica; kube-controller-manager's controllers and the scheduled etcd snapshots
// (snapshots.go) run on the leader only with leader election (leader.go, package election),
// constructed anew on each acquisition. Every replica keeps the status.typeChecking of
// ValidatingAdmissionPolicies (policy.go). Its Prometheus registry (metrics*.go) implements
// the observers the edge, the registry, the admission chain and the controllers are given,
// exporting kube-apiserver's request and admission metrics under upstream's names and
// buckets alongside quotad's own (docs/monitoring.md). It is the only package that imports
// every other one.
//
// Invariants: every long-running part is started with a context and stops when it ends;
// Run returns only after the HTTP server and storage are shut down. The join endpoint
// answers only on a cluster member (404 elsewhere), only with the join token's secret, and
// a joined replica shares the first one's API CA, admin token and ServiceAccount key. A
// replica that loses the Lease has stopped its leader-only controllers before it campaigns
// again (or releases the Lease on shutdown); it keeps serving the API.
package server
