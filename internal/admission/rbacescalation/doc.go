// Package rbacescalation is RBAC's escalation prevention, as kube-apiserver's RBAC storage
// applies it: a user may create or update a Role or ClusterRole only with permissions it
// already holds, unless it may "escalate" on that resource; a RoleBinding or
// ClusterRoleBinding only when it holds the permissions of the role it references, unless
// it may "bind" that role. Setting or changing a ClusterRole's aggregationRule needs every
// permission ("*" on everything). Refusals are 403s with upstream's exact texts.
//
// Invariants:
//   - Members of system:masters and in-process callers (a context the edge did not
//     authenticate, such as the aggregation controller's writes) are never checked.
//   - With no RuleResolver, nobody else holds any permission: only system:masters may
//     write RBAC objects.
//   - Writes that change nothing but metadata fields the garbage collector and finalizers
//     use (finalizers, ownerReferences, deletionTimestamp) and deletes are not checked.
//   - Covers and its helpers are pure; Validate reads only the role a binding references.
package rbacescalation
