package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/quota"
)

func TestServiceUsage(t *testing.T) {
	ports := func(nodePorts ...int32) []corev1.ServicePort {
		var out []corev1.ServicePort
		for i, np := range nodePorts {
			out = append(out, corev1.ServicePort{Port: int32(80 + i), NodePort: np})
		}
		return out
	}
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		want string
	}{
		{"ClusterIP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports(0, 0)},
			"count/services=1 services=1 services.loadbalancers=0 services.nodeports=0"},
		{"empty type", corev1.ServiceSpec{Ports: ports(0)},
			"count/services=1 services=1 services.loadbalancers=0 services.nodeports=0"},
		{"ExternalName", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName},
			"count/services=1 services=1 services.loadbalancers=0 services.nodeports=0"},
		{"NodePort counts every port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports(0, 30001)},
			"count/services=1 services=1 services.loadbalancers=0 services.nodeports=2"},
		{"LoadBalancer counts every port", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports(0, 0, 0)},
			"count/services=1 services=1 services.loadbalancers=1 services.nodeports=3"},
		{"LoadBalancer allocating node ports", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports(0, 0), AllocateLoadBalancerNodePorts: ptr.To(true)},
			"count/services=1 services=1 services.loadbalancers=1 services.nodeports=2"},
		{"LoadBalancer without node port allocation counts explicit node ports", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports(0, 30002, 0), AllocateLoadBalancerNodePorts: ptr.To(false)},
			"count/services=1 services=1 services.loadbalancers=1 services.nodeports=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Services{}.Usage(&corev1.Service{Spec: tt.spec})
			if err != nil {
				t.Fatal(err)
			}
			if s := show(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestServiceMatching(t *testing.T) {
	got := Services{}.MatchingResources([]corev1.ResourceName{"services.nodeports", "pods", "services", "count/services", "services.loadbalancers", "count/pods"})
	if s := names(got); s != "count/services services services.loadbalancers services.nodeports" {
		t.Errorf("got %s", s)
	}
	if _, ok := quota.Evaluator(Services{}).(quota.ScopeMatcher); ok {
		t.Error("services must not match scopes")
	}
	for sub, want := range map[string]bool{"": true, "status": true, "proxy": false} {
		if got := (Services{}).Handles(sub); got != want {
			t.Errorf("Handles(%q) = %v", sub, got)
		}
	}
	if _, err := (Services{}).Usage(&corev1.Pod{}); err == nil || err.Error() != "expect *v1.Service, got *v1.Pod" {
		t.Errorf("got %v", err)
	}
}

func names(list []corev1.ResourceName) string {
	s := ""
	for i, n := range list {
		if i > 0 {
			s += " "
		}
		s += string(n)
	}
	return s
}
