package defaults

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// NetworkPolicy sets upstream's networking/v1 defaults: ports default to TCP;
// without policyTypes, Ingress always and Egress when egress rules are given.
func NetworkPolicy(np *networkingv1.NetworkPolicy) {
	tcp := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				p := corev1.ProtocolTCP
				ports[i].Protocol = &p
			}
		}
	}
	for i := range np.Spec.Ingress {
		tcp(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		tcp(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

// IngressClass sets upstream's default parameters scope, Cluster.
func IngressClass(ic *networkingv1.IngressClass) {
	if ic.Spec.Parameters != nil && ic.Spec.Parameters.Scope == nil {
		s := networkingv1.IngressClassParametersReferenceScopeCluster
		ic.Spec.Parameters.Scope = &s
	}
}
