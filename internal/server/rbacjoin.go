package server

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// joinClusterRoleBindings let nodes join with the tokens `quotad token create` makes, as
// kubeadm's bindings do for its default node token: the token's group may ask for a
// kubelet client certificate (system:node-bootstrapper) and have it approved
// (…:nodeclient), and nodes may have their renewals approved (…:selfnodeclient). The
// roles are upstream's bootstrap roles.
func joinClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	bind := func(name, role string, subject rbacv1.Subject) rbacv1.ClusterRoleBinding {
		b := defaultBinding(role, subject)
		b.ObjectMeta = metav1.ObjectMeta{Name: name, Labels: map[string]string{bootstrapLabel: "quotad-join"},
			Annotations: map[string]string{autoUpdateAnnotation: "true"}}
		return b
	}
	return []rbacv1.ClusterRoleBinding{
		bind("quotad:kubelet-bootstrap", "system:node-bootstrapper", groupSubject(NodeBootstrapGroup)),
		bind("quotad:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", groupSubject(NodeBootstrapGroup)),
		bind("quotad:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", groupSubject("system:nodes")),
	}
}
