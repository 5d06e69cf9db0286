// Package rbac is quotad's authorizer: an in-memory index of Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings, evaluated with kube-apiserver's RBAC semantics.
//
// It owns no IO. Its owner feeds it every object of the four kinds (Update), from lists and
// watches kept by the server; each Update builds a new immutable Policy indexed by subject
// (user name, group) and by namespace, and publishes it atomically, so Authorize and
// RulesFor never read storage and never lock.
//
// Semantics, as upstream's RBAC authorizer with its privileged-group authorizer in front:
//   - members of system:masters are allowed everything;
//   - ClusterRoleBindings grant their ClusterRole's rules cluster-wide (and are the only way to
//     grant non-resource URLs); RoleBindings grant their Role's or ClusterRole's rules in
//     their own namespace only;
//   - subjects match by User name, Group membership or ServiceAccount
//     (system:serviceaccount:<ns>:<name>, the namespace defaulting to a RoleBinding's own);
//   - a binding whose role does not exist grants nothing and, when nothing allows the request,
//     is reported in the reason as upstream reports it ("RBAC: role.rbac.authorization.k8s.io
//     \"x\" not found").
package rbac
