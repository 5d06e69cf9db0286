package validation

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestServiceAnswers: a Service's create and update are answered as upstream, on a
// cluster of IPv4 service addresses, answers them: its allocator checks the cluster IPs,
// IP families and family policy before the Service is validated and answers with those
// errors alone (an IPv6 family or dual-stack asked of an IPv4 cluster; released secondary
// addresses or families without SingleStack); a headless Service without a selector may
// change its families.
func TestServiceAnswers(t *testing.T) {
	single := corev1.IPFamilyPolicySingleStack
	require := corev1.IPFamilyPolicyRequireDualStack
	svc := func(name string, ips []string, fams []corev1.IPFamily, pol *corev1.IPFamilyPolicy) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "web"},
				Ports:      []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
				ClusterIPs: ips, IPFamilies: fams, IPFamilyPolicy: pol, SessionAffinity: corev1.ServiceAffinityNone,
				InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicy)}}
		*s.Spec.InternalTrafficPolicy = corev1.ServiceInternalTrafficPolicyCluster
		if len(ips) > 0 {
			s.Spec.ClusterIP = ips[0]
		}
		return s
	}
	selectorless := func(s *corev1.Service) *corev1.Service { s.Spec.Selector = nil; return s }
	v4 := []corev1.IPFamily{corev1.IPv4Protocol}
	v6 := []corev1.IPFamily{corev1.IPv6Protocol}
	dual := []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	if errs := ServiceCreate(svc("web", []string{"10.0.0.10"}, v4, &single)); len(errs) != 0 {
		t.Fatalf("a valid service: %v", errs)
	}
	tests := []struct {
		name     string
		old, new *corev1.Service
		want     string
	}{
		{"create: an invalid name and an invalid cluster IP, the allocator's error alone", nil,
			svc("Bad_Name", []string{"10.0.0.300"}, v4, &single),
			`[spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)]`},
		{"update: the family changed under the same cluster IP, the allocator's error alone",
			svc("web", []string{"10.0.0.10"}, v4, &single), svc("web", []string{"10.0.0.10"}, v6, &single),
			"[spec.clusterIPs[0]: Invalid value: \"10.0.0.10\": expected an IPv6 value as indicated by `ipFamilies[0]`]"},
		{"update: a headless service with a selector may not take a family this cluster lacks",
			svc("web", []string{"None"}, v4, &single), svc("web", []string{"None"}, v6, &single),
			`[spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster]`},
		{"update: a headless service without a selector changes its family",
			selectorless(svc("web", []string{"None"}, v4, &single)), selectorless(svc("web", []string{"None"}, v6, &single)), "[]"},
		{"update: the secondary cluster IP released without SingleStack",
			svc("web", []string{"10.0.0.10", "fd00::10"}, dual, &require), svc("web", []string{"10.0.0.10"}, dual, &require),
			`[spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be 'SingleStack' to release the secondary cluster IP]`},
		{"update: the secondary family released without SingleStack",
			svc("web", []string{"10.0.0.10", "fd00::10"}, dual, &require), svc("web", []string{"10.0.0.10", "fd00::10"}, v4, &require),
			"[spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": must be 'SingleStack' to release the secondary IP family" +
				` spec.clusterIPs[1]: Invalid value: ["10.0.0.10","fd00::10"]: IPv6 is not configured on this cluster]`},
		{"create: dual-stack required of a cluster of IPv4 services",
			nil, svc("web", nil, nil, &require), `[spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := ServiceCreate(tc.new)
			if tc.old != nil {
				errs = ServiceUpdate(tc.new, tc.old)
			}
			if got := fmt.Sprint(errs); got != tc.want {
				t.Errorf("errors = %s\nwant     %s", got, tc.want)
			}
		})
	}
}
