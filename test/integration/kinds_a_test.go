package integration

import (
	"fmt"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

func hostPathPV(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: meta(name), Spec: corev1.PersistentVolumeSpec{
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
	}}
}

func webIngress(name string) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: meta(name), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
		Host: "example.com",
		IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
			Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
		}}}},
	}}}}
}

func webHPA(name string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta(name), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MaxReplicas:    5,
	}}
}

// TestKindsACRUD walks the kinds of slice A through their typed clients.
func TestKindsACRUD(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a"
	mkNamespace(t, s, ns)
	c := s.Client
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"podtemplates", kindCase[*corev1.PodTemplate, *corev1.PodTemplateList]{
			client: c.CoreV1().PodTemplates(ns), obj: &corev1.PodTemplate{ObjectMeta: meta("pt"), Template: podTemplate("web")},
			spec:       func(o *corev1.PodTemplate) { o.Template.Spec.Containers[0].Image = "nginx:2" },
			specOf:     func(o *corev1.PodTemplate) interface{} { return o.Template.Spec.Containers[0].Image },
			generation: true,
		}.run},
		{"persistentvolumes", kindCase[*corev1.PersistentVolume, *corev1.PersistentVolumeList]{
			client: c.CoreV1().PersistentVolumes(), obj: hostPathPV("pv1"),
			spec:     func(o *corev1.PersistentVolume) { o.Spec.StorageClassName = "fast" },
			specOf:   func(o *corev1.PersistentVolume) interface{} { return o.Spec.StorageClassName },
			status:   func(o *corev1.PersistentVolume) { o.Status.Phase = corev1.VolumeAvailable },
			statusOf: func(o *corev1.PersistentVolume) interface{} { return o.Status.Phase },
		}.run},
		{"leases", kindCase[*coordinationv1.Lease, *coordinationv1.LeaseList]{
			client: c.CoordinationV1().Leases(ns), obj: &coordinationv1.Lease{ObjectMeta: meta("l"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To(int32(15))}},
			spec:   func(o *coordinationv1.Lease) { o.Spec.HolderIdentity = ptr.To("b") },
			specOf: func(o *coordinationv1.Lease) interface{} { return *o.Spec.HolderIdentity },
		}.run},
		{"networkpolicies", kindCase[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList]{
			client: c.NetworkingV1().NetworkPolicies(ns), obj: &networkingv1.NetworkPolicy{ObjectMeta: meta("np"), Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			spec:       func(o *networkingv1.NetworkPolicy) { o.Spec.PodSelector.MatchLabels["tier"] = "db" },
			specOf:     func(o *networkingv1.NetworkPolicy) interface{} { return o.Spec.PodSelector.MatchLabels["tier"] },
			generation: true,
		}.run},
		{"ingresses", kindCase[*networkingv1.Ingress, *networkingv1.IngressList]{
			client: c.NetworkingV1().Ingresses(ns), obj: webIngress("ing"),
			spec:   func(o *networkingv1.Ingress) { o.Spec.Rules[0].Host = "example.org" },
			specOf: func(o *networkingv1.Ingress) interface{} { return o.Spec.Rules[0].Host },
			status: func(o *networkingv1.Ingress) {
				o.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.7"}}
			},
			statusOf:   func(o *networkingv1.Ingress) interface{} { return fmt.Sprint(o.Status.LoadBalancer.Ingress) },
			generation: true,
		}.run},
		{"ingressclasses", kindCase[*networkingv1.IngressClass, *networkingv1.IngressClassList]{
			client: c.NetworkingV1().IngressClasses(), obj: &networkingv1.IngressClass{ObjectMeta: meta("nginx"), Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}},
			spec: func(o *networkingv1.IngressClass) {
				o.Spec.Parameters = &networkingv1.IngressClassParametersReference{Kind: "Params", Name: "p"}
			},
			specOf: func(o *networkingv1.IngressClass) interface{} {
				return o.Spec.Parameters.Kind + "/" + o.Spec.Parameters.Name
			},
			generation: true,
		}.run},
		{"runtimeclasses", kindCase[*nodev1.RuntimeClass, *nodev1.RuntimeClassList]{
			client: c.NodeV1().RuntimeClasses(), obj: &nodev1.RuntimeClass{ObjectMeta: meta("gvisor"), Handler: "runsc"},
			spec: func(o *nodev1.RuntimeClass) {
				o.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}
			},
			specOf: func(o *nodev1.RuntimeClass) interface{} { return o.Overhead.PodFixed.Cpu().String() },
		}.run},
		{"horizontalpodautoscalers", kindCase[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList]{
			client: c.AutoscalingV2().HorizontalPodAutoscalers(ns), obj: webHPA("hpa"),
			spec:     func(o *autoscalingv2.HorizontalPodAutoscaler) { o.Spec.MaxReplicas = 7 },
			specOf:   func(o *autoscalingv2.HorizontalPodAutoscaler) interface{} { return o.Spec.MaxReplicas },
			status:   func(o *autoscalingv2.HorizontalPodAutoscaler) { o.Status.CurrentReplicas = 3 },
			statusOf: func(o *autoscalingv2.HorizontalPodAutoscaler) interface{} { return o.Status.CurrentReplicas },
		}.run},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// TestKindsADefaults checks the defaults upstream sets on the kinds of slice A.
func TestKindsADefaults(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	c := s.Client
	pv, err := c.CoreV1().PersistentVolumes().Create(ctx, hostPathPV("pv-defaults"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Status.Phase != corev1.VolumePending || pv.Spec.VolumeMode == nil || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pv.Status.LastPhaseTransitionTime == nil {
		t.Errorf("pv defaults: reclaim %q phase %q mode %v", pv.Spec.PersistentVolumeReclaimPolicy, pv.Status.Phase, pv.Spec.VolumeMode)
	}
	// A phase change through /status records its time.
	first := *pv.Status.LastPhaseTransitionTime
	pv.Status.Phase = corev1.VolumeAvailable
	pv.Status.LastPhaseTransitionTime = nil
	avail, err := c.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if avail.Status.LastPhaseTransitionTime == nil || avail.Status.LastPhaseTransitionTime.Before(&first) {
		t.Errorf("phase transition time %v after %v", avail.Status.LastPhaseTransitionTime, first)
	}
	np, err := c.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta("np"), Spec: networkingv1.NetworkPolicySpec{
		Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(np.Spec.PolicyTypes) != "[Ingress Egress]" || np.Spec.Egress[0].Ports[0].Protocol == nil || *np.Spec.Egress[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("networkpolicy defaults: policyTypes %v, egress %+v", np.Spec.PolicyTypes, np.Spec.Egress)
	}
	hpa, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, webHPA("hpa"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 1 || len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource == nil ||
		hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU || *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("hpa defaults: min %v metrics %+v", hpa.Spec.MinReplicas, hpa.Spec.Metrics)
	}
}

// TestKindsAValidation checks one refusal per kind with upstream's text, and that the
// refused write changed nothing.
func TestKindsAValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	c := s.Client
	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"podtemplate without containers", func() error {
			_, err := c.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: meta("pt")}, metav1.CreateOptions{})
			return err
		}, `PodTemplate "pt" is invalid: template.spec.containers: Required value`},
		{"persistentvolume without source", func() error {
			pv := hostPathPV("pv-bad")
			pv.Spec.HostPath = nil
			_, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
			return err
		}, `PersistentVolume "pv-bad" is invalid: spec: Required value: must specify a volume type`},
		{"lease with zero duration", func() error {
			_, err := c.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: meta("l"), Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To(int32(0))}}, metav1.CreateOptions{})
			return err
		}, `Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`},
		{"networkpolicy with an empty peer", func() error {
			_, err := c.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta("np"), Spec: networkingv1.NetworkPolicySpec{
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{}}}}}}, metav1.CreateOptions{})
			return err
		}, `NetworkPolicy.networking.k8s.io "np" is invalid: spec.ingress[0].from[0]: Required value: must specify a peer`},
		{"ingress without pathType", func() error {
			ing := webIngress("ing")
			ing.Spec.Rules[0].HTTP.Paths[0].PathType = nil
			_, err := c.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{})
			return err
		}, `Ingress.networking.k8s.io "ing" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified`},
		{"ingressclass without controller", func() error {
			_, err := c.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: meta("ic")}, metav1.CreateOptions{})
			return err
		}, `IngressClass.networking.k8s.io "ic" is invalid: spec.controller: Required value`},
		{"runtimeclass with a bad handler", func() error {
			_, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: meta("rc"), Handler: "Bad_Handler"}, metav1.CreateOptions{})
			return err
		}, `RuntimeClass.node.k8s.io "rc" is invalid: handler: Invalid value: "Bad_Handler": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"hpa with max below min", func() error {
			h := webHPA("hpa")
			h.Spec.MinReplicas = ptr.To(int32(6))
			_, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, h, metav1.CreateOptions{})
			return err
		}, "HorizontalPodAutoscaler.autoscaling \"hpa\" is invalid: spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if !apierrors.IsInvalid(err) || err.Error() != tc.want {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	// Updates: immutable fields.
	rc, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: meta("runc"), Handler: "runc"}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.Handler = "crun"
	_, err = c.NodeV1().RuntimeClasses().Update(ctx, rc, metav1.UpdateOptions{})
	if want := `RuntimeClass.node.k8s.io "runc" is invalid: handler: Invalid value: "crun": field is immutable`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("handler update: err = %v\nwant %s", err, want)
	}
	ic, err := c.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: meta("nginx"), Spec: networkingv1.IngressClassSpec{Controller: "example.com/a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ic.Spec.Controller = "example.com/b"
	_, err = c.NetworkingV1().IngressClasses().Update(ctx, ic, metav1.UpdateOptions{})
	if want := `IngressClass.networking.k8s.io "nginx" is invalid: spec.controller: Invalid value: "example.com/b": field is immutable`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("controller update: err = %v\nwant %s", err, want)
	}
	// Nothing refused was stored.
	if l, err := c.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("ingresses after refusals: %v, %v", l, err)
	}
}

// TestKindsACountQuota: count/<resource>.<group> quotas refuse the second object of a
// namespaced kind of each group, with upstream's text, and usage is exact.
func TestKindsACountQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a-quota"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	c := s.Client
	mkQuota(t, s, ns, "q", map[string]string{
		"count/podtemplates": "1", "count/leases.coordination.k8s.io": "1", "count/ingresses.networking.k8s.io": "1",
		"count/networkpolicies.networking.k8s.io": "1", "count/horizontalpodautoscalers.autoscaling": "1",
	})
	creates := []struct {
		resource string
		create   func(name string) error
	}{
		{"podtemplates", func(n string) error {
			_, err := c.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: meta(n), Template: podTemplate("web")}, metav1.CreateOptions{})
			return err
		}},
		{"leases.coordination.k8s.io", func(n string) error {
			_, err := c.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: meta(n)}, metav1.CreateOptions{})
			return err
		}},
		{"ingresses.networking.k8s.io", func(n string) error {
			_, err := c.NetworkingV1().Ingresses(ns).Create(ctx, webIngress(n), metav1.CreateOptions{})
			return err
		}},
		{"networkpolicies.networking.k8s.io", func(n string) error {
			_, err := c.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta(n)}, metav1.CreateOptions{})
			return err
		}},
		{"horizontalpodautoscalers.autoscaling", func(n string) error {
			_, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, webHPA(n), metav1.CreateOptions{})
			return err
		}},
	}
	for _, cr := range creates {
		if err := cr.create("one"); err != nil {
			t.Fatalf("%s: first create: %v", cr.resource, err)
		}
		err := cr.create("two")
		r := "count/" + cr.resource
		want := fmt.Sprintf(`%s "two" is forbidden: exceeded quota: q, requested: %s=1, used: %s=1, limited: %s=1`, cr.resource, r, r, r)
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("second create: err = %v\nwant %s", err, want)
		}
	}
	q, err := c.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range creates {
		if u := q.Status.Used[corev1.ResourceName("count/"+cr.resource)]; u.Value() != 1 {
			t.Errorf("used %s = %s, want 1", cr.resource, u.String())
		}
	}
	// Deleting credits at once: the second create now succeeds.
	if err := c.NetworkingV1().Ingresses(ns).Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := creates[2].create("two"); err != nil {
		t.Errorf("create after delete: %v", err)
	}
}

// TestKindsADiscoveryOpenAPI: the kinds of slice A are discovered with upstream's short
// names and categories, and their schemas are in the OpenAPI v3 documents of their groups.
func TestKindsADiscoveryOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	want := map[string]struct {
		gv, short, categories string
		namespaced            bool
	}{
		"podtemplates":             {"v1", "[]", "[]", true},
		"persistentvolumes":        {"v1", "[pv]", "[]", false},
		"leases":                   {"coordination.k8s.io/v1", "[]", "[]", true},
		"networkpolicies":          {"networking.k8s.io/v1", "[netpol]", "[]", true},
		"ingresses":                {"networking.k8s.io/v1", "[ing]", "[]", true},
		"ingressclasses":           {"networking.k8s.io/v1", "[]", "[]", false},
		"runtimeclasses":           {"node.k8s.io/v1", "[]", "[]", false},
		"horizontalpodautoscalers": {"autoscaling/v2", "[hpa]", "[all]", true},
		"componentstatuses":        {"v1", "[cs]", "[]", false},
		"events":                   {"events.k8s.io/v1", "[ev]", "[]", true},
	}
	for name, w := range want {
		l, err := s.Client.Discovery().ServerResourcesForGroupVersion(w.gv)
		if err != nil {
			t.Fatalf("%s: %v", w.gv, err)
		}
		found := false
		for _, r := range l.APIResources {
			if r.Name == name {
				found = true
				if fmt.Sprint(r.ShortNames) != w.short || fmt.Sprint(r.Categories) != w.categories || r.Namespaced != w.namespaced {
					t.Errorf("%s: short %v categories %v namespaced %v", name, r.ShortNames, r.Categories, r.Namespaced)
				}
			}
		}
		if !found {
			t.Errorf("%s not in %s discovery", name, w.gv)
		}
	}
	// autoscaling serves v2 (preferred) and v1.
	groups, err := s.Client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "autoscaling" && (g.PreferredVersion.Version != "v2" || len(g.Versions) != 2 || g.Versions[1].Version != "v1") {
			t.Errorf("autoscaling group: %+v", g)
		}
	}
	cs, err := s.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cs.APIResources {
		if r.Name == "componentstatuses" && fmt.Sprint(r.Verbs) != "[get list]" {
			t.Errorf("componentstatuses verbs %v", r.Verbs)
		}
	}
	for path, def := range map[string]string{
		"/openapi/v3/apis/networking.k8s.io/v1":   "io.k8s.api.networking.v1.Ingress",
		"/openapi/v3/apis/coordination.k8s.io/v1": "io.k8s.api.coordination.v1.Lease",
		"/openapi/v3/apis/node.k8s.io/v1":         "io.k8s.api.node.v1.RuntimeClass",
		"/openapi/v3/apis/autoscaling/v2":         "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
		"/openapi/v3/api/v1":                      "io.k8s.api.core.v1.PersistentVolume",
		"/openapi/v3/apis/events.k8s.io/v1":       "io.k8s.api.events.v1.Event",
		"/openapi/v3/apis/autoscaling/v1":         "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler",
	} {
		body, err := s.Client.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.Contains(string(body), `"`+def+`"`) {
			t.Errorf("%s lacks %s", path, def)
		}
	}
}

// TestKindsARuntimeClassOverheadQuota: a pod naming a RuntimeClass gets its overhead and
// scheduling, and quota charges the overhead on top of the containers' requests and limits;
// a missing class and a mismatched overhead are refused with upstream's texts.
func TestKindsARuntimeClassOverheadQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a-rc"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	c := s.Client
	if _, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: meta("gvisor"), Handler: "runsc",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "true"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mkQuota(t, s, ns, "q", map[string]string{"requests.cpu": "1", "limits.cpu": "2", "requests.memory": "1Gi"})
	pod := func(name string, class *string, overhead corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: meta(name), Spec: corev1.PodSpec{RuntimeClassName: class, Overhead: overhead, Containers: []corev1.Container{{
			Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	}
	got, err := c.CoreV1().Pods(ns).Create(ctx, pod("sandboxed", ptr.To("gvisor"), nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Overhead.Cpu().String() != "250m" || got.Spec.NodeSelector["sandbox"] != "true" {
		t.Errorf("pod overhead %v nodeSelector %v", got.Spec.Overhead, got.Spec.NodeSelector)
	}
	q, err := c.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	used := q.Status.Used
	if r, l, m := used[corev1.ResourceRequestsCPU], used[corev1.ResourceLimitsCPU], used[corev1.ResourceRequestsMemory]; r.String() != "750m" || l.String() != "1250m" || m.String() != "192Mi" {
		t.Errorf("used requests.cpu %s limits.cpu %s requests.memory %s, want 750m 1250m 192Mi", r.String(), l.String(), m.String())
	}
	// The overhead counts toward the limits: a second pod (750m and 1250m more) exceeds both.
	_, err = c.CoreV1().Pods(ns).Create(ctx, pod("second", ptr.To("gvisor"), nil), metav1.CreateOptions{})
	if want := `pods "second" is forbidden: exceeded quota: q, requested: limits.cpu=1250m,requests.cpu=750m, used: limits.cpu=1250m,requests.cpu=750m, limited: limits.cpu=2,requests.cpu=1`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("second pod: err = %v\nwant %s", err, want)
	}
	for _, tc := range []struct {
		name, want string
		p          *corev1.Pod
	}{
		{"missing", `pods "missing" is forbidden: pod rejected: RuntimeClass "kata" not found`, pod("missing", ptr.To("kata"), nil)},
		{"mismatch", `pods "mismatch" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
			pod("mismatch", ptr.To("gvisor"), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")})},
		{"no class", `pods "no-class" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`,
			pod("no-class", nil, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")})},
	} {
		if _, err := c.CoreV1().Pods(ns).Create(ctx, tc.p, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || err.Error() != tc.want {
			t.Errorf("%s: err = %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// Deleting the pod credits the overhead too.
	zero := int64(0)
	if err := c.CoreV1().Pods(ns).Delete(ctx, "sandboxed", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if q, err = c.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := q.Status.Used[corev1.ResourceRequestsCPU]; !r.IsZero() {
		t.Errorf("after delete: used requests.cpu %s", r.String())
	}
}

// TestKindsADefaultIngressClass: a new Ingress naming no class gets the default one.
func TestKindsADefaultIngressClass(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a-ingclass"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	c := s.Client.NetworkingV1()
	if _, err := c.IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx",
		Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Ingresses(ns).Create(ctx, webIngress("plain"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.IngressClassName == nil || *got.Spec.IngressClassName != "nginx" {
		t.Errorf("ingressClassName = %v, want nginx", got.Spec.IngressClassName)
	}
	// The class annotation is deprecated: a warning, and no default class.
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	wc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	annotated := webIngress("annotated")
	annotated.Annotations = map[string]string{"kubernetes.io/ingress.class": "legacy"}
	if got, err = wc.NetworkingV1().Ingresses(ns).Create(ctx, annotated, metav1.CreateOptions{}); err != nil || got.Spec.IngressClassName != nil {
		t.Errorf("annotated: %v %v", got.Spec.IngressClassName, err)
	}
	if w := ws.take(); fmt.Sprint(w) != `[annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead]` {
		t.Errorf("warnings %q", w)
	}
	named := webIngress("named")
	named.Spec.IngressClassName = ptr.To("other")
	if got, err = c.Ingresses(ns).Create(ctx, named, metav1.CreateOptions{}); err != nil || *got.Spec.IngressClassName != "other" {
		t.Errorf("named class: %v %v", got.Spec.IngressClassName, err)
	}
}
