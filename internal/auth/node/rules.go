package node

import rbacv1 "k8s.io/api/rbac/v1"

func rule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

// Rules are upstream's NodeRules (bootstrappolicy.NodeRules with v1.37's default feature
// gates): the rules of the system:node ClusterRole, and what the Node authorizer allows
// every node beyond the objects it relates to it. Verbs and resources are sorted as
// upstream's policy testdata has them.
func Rules() []rbacv1.PolicyRule {
	core := []string{""}
	g := func(s string) []string { return []string{s} }
	return []rbacv1.PolicyRule{
		rule([]string{"create"}, g("authentication.k8s.io"), "tokenreviews"),
		rule([]string{"create"}, g("authorization.k8s.io"), "localsubjectaccessreviews", "subjectaccessreviews"),
		rule([]string{"get", "list", "watch"}, core, "services"),
		rule([]string{"create", "get", "list", "watch"}, core, "nodes"),
		rule([]string{"patch", "update"}, core, "nodes/status"),
		rule([]string{"patch", "update"}, core, "nodes"),
		rule([]string{"create", "patch", "update"}, []string{"", "events.k8s.io"}, "events"),
		rule([]string{"get", "list", "watch"}, core, "pods"),
		rule([]string{"create", "delete"}, core, "pods"),
		rule([]string{"patch", "update"}, core, "pods/status"),
		rule([]string{"create"}, core, "pods/eviction"),
		rule([]string{"get", "list", "watch"}, core, "configmaps", "secrets"),
		rule([]string{"get"}, core, "persistentvolumeclaims", "persistentvolumes"),
		rule([]string{"get"}, core, "endpoints"),
		rule([]string{"create", "get", "list", "watch"}, g("certificates.k8s.io"), "certificatesigningrequests"),
		rule([]string{"create", "delete", "get", "patch", "update"}, g("coordination.k8s.io"), "leases"),
		rule([]string{"get"}, g("storage.k8s.io"), "volumeattachments"),
		rule([]string{"create"}, core, "serviceaccounts/token"),
		rule([]string{"get", "patch", "update"}, core, "persistentvolumeclaims/status"),
		rule([]string{"get", "list", "watch"}, g("storage.k8s.io"), "csidrivers"),
		rule([]string{"create", "delete", "get", "patch", "update"}, g("storage.k8s.io"), "csinodes"),
		rule([]string{"get", "list", "watch"}, g("node.k8s.io"), "runtimeclasses"),
		rule([]string{"get"}, g("resource.k8s.io"), "resourceclaims"),
		rule([]string{"deletecollection"}, g("resource.k8s.io"), "resourceslices"),
		rule([]string{"get", "list", "watch"}, g("certificates.k8s.io"), "clustertrustbundles"),
		rule([]string{"get"}, core, "serviceaccounts"),
		rule([]string{"create", "get", "list", "watch"}, g("certificates.k8s.io"), "podcertificaterequests"),
	}
}
