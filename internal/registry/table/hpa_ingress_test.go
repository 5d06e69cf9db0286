package table

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kptr "k8s.io/utils/ptr"
)

func TestHPAMetrics(t *testing.T) {
	cpu := func(u int32) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}}}
	}
	mem := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: kptr.To(resource.MustParse("1Gi"))}}}
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Target: autoscalingv2.MetricTarget{AverageValue: kptr.To(resource.MustParse("10"))}}}
	tests := []struct {
		name   string
		specs  []autoscalingv2.MetricSpec
		status []autoscalingv2.MetricStatus
		want   string
	}{
		{"none", nil, nil, "<none>"},
		{"cpu unknown", []autoscalingv2.MetricSpec{cpu(80)}, nil, "cpu: <unknown>/80%"},
		{"cpu current", []autoscalingv2.MetricSpec{cpu(80)}, []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: kptr.To(int32(42))}}}}, "cpu: 42%/80%"},
		{"value and pods", []autoscalingv2.MetricSpec{mem, pods}, nil, "memory: <unknown>/1Gi, <unknown>/10"},
		{"more than two", []autoscalingv2.MetricSpec{cpu(50), mem, pods}, nil, "cpu: <unknown>/50%, memory: <unknown>/1Gi + 1 more..."},
		{"type without source", []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType}}, nil, "<unknown type>"},
	}
	for _, tt := range tests {
		if got := hpaMetrics(tt.specs, tt.status); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestIngressCells(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		var out []networkingv1.IngressRule
		for _, h := range hosts {
			out = append(out, networkingv1.IngressRule{Host: h})
		}
		return out
	}
	for _, tt := range []struct {
		rules []networkingv1.IngressRule
		want  string
	}{
		{nil, "*"},
		{rules(""), "*"},
		{rules("a", "b"), "a,b"},
		{rules("a", "b", "c", "d", "e"), "a,b,c + 2 more..."},
	} {
		if got := ingressHosts(tt.rules); got != tt.want {
			t.Errorf("hosts %v: %q, want %q", tt.rules, got, tt.want)
		}
	}
	lb := networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.2"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"}}}
	if got := ingressAddress(lb); got != "10.0.0.1,10.0.0.2,lb.example.com" {
		t.Errorf("address: %q", got)
	}
}
