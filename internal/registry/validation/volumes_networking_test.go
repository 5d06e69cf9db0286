package validation

import (
	"reflect"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	kptr "k8s.io/utils/ptr"
)

func TestValidateVolumesAndNetworking(t *testing.T) {
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }
	cm := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
	svcBackend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	tests := []struct {
		name string
		obj  runtime.Object
		want []string
	}{
		{"pv ok", &corev1.PersistentVolume{ObjectMeta: cm("pv"), Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			Capacity: corev1.ResourceList{"storage": resource.MustParse("1Gi")}, PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/x"}}}}, nil},
		{"pv empty", &corev1.PersistentVolume{ObjectMeta: cm("pv")}, []string{
			"spec.accessModes: Required value", "spec.capacity: Required value", `spec.capacity: Unsupported value: null: supported values: "storage"`,
			"spec: Required value: must specify a volume type"}},
		{"pv two sources", &corev1.PersistentVolume{ObjectMeta: cm("pv"), Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			Capacity: corev1.ResourceList{"storage": resource.MustParse("1Gi")}, PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/"}, NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/x"}}, PersistentVolumeReclaimPolicy: "Recycle"}}, []string{
			"spec.nfs: Forbidden: may not specify more than 1 volume type", "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"}},
		{"lease negative transitions", &coordinationv1.Lease{ObjectMeta: om("l"), Spec: coordinationv1.LeaseSpec{LeaseTransitions: kptr.To(int32(-1))}},
			[]string{"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"}},
		{"netpol bad port and policy type", &networkingv1.NetworkPolicy{ObjectMeta: om("np"), Spec: networkingv1.NetworkPolicySpec{
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: kptr.To(intstr.FromInt32(80)), EndPort: kptr.To(int32(79))}}}},
			PolicyTypes: []networkingv1.PolicyType{"Sideways"}}}, []string{
			"spec.ingress[0].ports[0].endPort: Invalid value: 79: must be greater than or equal to `port`",
			`spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"`}},
		{"netpol ipBlock with another peer", &networkingv1.NetworkPolicy{ObjectMeta: om("np"), Spec: networkingv1.NetworkPolicySpec{
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"11.0.0.0/16"}},
				PodSelector: &metav1.LabelSelector{}}}}}}}, []string{
			"spec.egress[0].to[0].ipBlock.except[0]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`",
			"spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"}},
		{"ingress without rules or backend", &networkingv1.Ingress{ObjectMeta: om("i")}, []string{
			"spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"}},
		{"ingress bad host and path", &networkingv1.Ingress{ObjectMeta: om("i"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "10.0.0.1",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "a/../b", PathType: kptr.To(networkingv1.PathTypeExact), Backend: svcBackend}}}}}}}}, []string{
			`spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
			`spec.rules[0].http.paths[0].path: Invalid value: "a/../b": must be an absolute path`,
			`spec.rules[0].http.paths[0].path: Invalid value: "a/../b": must not contain '/../'`}},
		{"ingress backend without port", &networkingv1.Ingress{ObjectMeta: om("i"), Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "web"}}}}, []string{"spec.defaultBackend: Required value: port name or number is required"}},
		{"ingressclass namespace scope without namespace", &networkingv1.IngressClass{ObjectMeta: cm("ic"), Spec: networkingv1.IngressClassSpec{Controller: "example.com/c",
			Parameters: &networkingv1.IngressClassParametersReference{Kind: "K", Name: "n", Scope: kptr.To("Namespace")}}}, []string{
			"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"}},
		{"runtimeclass bad overhead", &nodev1.RuntimeClass{ObjectMeta: cm("rc"), Handler: "runc", Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{"cpu": resource.MustParse("-1")}}},
			[]string{"overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"}},
		{"hpa bad metric", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("h"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 1,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType}}}}, []string{
			`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`,
			"spec.metrics[0].resource: Required value: must populate information for the given metric source"}},
		{"hpa without target", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("h"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 0}}, []string{
			"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
			"spec.scaleTargetRef.kind: Required value", "spec.scaleTargetRef.name: Required value",
			`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`, "spec.maxReplicas: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errStrings(Validate(prepare(tt.obj)))
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestValidateUpdateVolumesAndNetworking(t *testing.T) {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", ResourceVersion: "1"}, Spec: corev1.PersistentVolumeSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"}, Capacity: corev1.ResourceList{"storage": resource.MustParse("1Gi")},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a"}}}}
	moved := pv.DeepCopy()
	moved.Spec.HostPath.Path = "/b"
	errs := ValidateUpdate(moved, pv)
	if len(errs) != 1 || errs[0].Field != "spec.persistentvolumesource" || errs[0].Type != "FieldValueForbidden" {
		t.Errorf("pv source update: %v", errs)
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "i", Namespace: "ns", ResourceVersion: "1"}, Spec: networkingv1.IngressSpec{
		DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
	st := ing.DeepCopy()
	st.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "10.1.2.3"}}
	if got := errStrings(ValidateUpdate(st, ing)); !reflect.DeepEqual(got, []string{`status.loadBalancer.ingress[0].hostname: Invalid value: "10.1.2.3": must be a DNS name, not an IP address`}) {
		t.Errorf("ingress status: %q", got)
	}
}
