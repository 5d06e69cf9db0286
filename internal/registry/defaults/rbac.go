package defaults

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// RoleBinding sets upstream's rbac/v1 defaults: roleRef.apiGroup and the apiGroup of User
// and Group subjects default to rbac.authorization.k8s.io.
func RoleBinding(rb *rbacv1.RoleBinding) {
	roleRef(&rb.RoleRef)
	subjects(rb.Subjects)
}

// ClusterRoleBinding sets the same defaults as RoleBinding.
func ClusterRoleBinding(crb *rbacv1.ClusterRoleBinding) {
	roleRef(&crb.RoleRef)
	subjects(crb.Subjects)
}

func roleRef(r *rbacv1.RoleRef) {
	if r.APIGroup == "" {
		r.APIGroup = rbacv1.GroupName
	}
}

func subjects(ss []rbacv1.Subject) {
	for i := range ss {
		if ss[i].APIGroup != "" {
			continue
		}
		switch ss[i].Kind {
		case rbacv1.UserKind, rbacv1.GroupKind:
			ss[i].APIGroup = rbacv1.GroupName
		}
	}
}
