package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

func strp(s string) *string { return &s }

// TestPodsSliceKindsCRUD walks core/v1 endpoints, discovery.k8s.io/v1 endpointslices and
// policy/v1 poddisruptionbudgets through their typed clients.
func TestPodsSliceKindsCRUD(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "slice-kinds"
	mkNamespace(t, s, ns)
	port := int32(80)
	minAvailable := intstr.FromInt32(1)
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"endpoints", kindCase[*corev1.Endpoints, *corev1.EndpointsList]{
			client: s.Client.CoreV1().Endpoints(ns), obj: &corev1.Endpoints{ObjectMeta: meta("ep"), Subsets: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}},
			spec:   func(o *corev1.Endpoints) { o.Subsets[0].Addresses[0].IP = "10.1.2.4" },
			specOf: func(o *corev1.Endpoints) interface{} { return o.Subsets[0].Addresses[0].IP },
		}.run},
		{"endpointslices", kindCase[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]{
			client: s.Client.DiscoveryV1().EndpointSlices(ns), obj: &discoveryv1.EndpointSlice{ObjectMeta: meta("es"), AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}}}, Ports: []discoveryv1.EndpointPort{{Port: &port}}},
			spec:   func(o *discoveryv1.EndpointSlice) { o.Endpoints[0].Addresses[0] = "10.1.2.4" },
			specOf: func(o *discoveryv1.EndpointSlice) interface{} { return o.Endpoints[0].Addresses[0] },
		}.run},
		{"poddisruptionbudgets", kindCase[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList]{
			client: s.Client.PolicyV1().PodDisruptionBudgets(ns), obj: &policyv1.PodDisruptionBudget{ObjectMeta: meta("pdb"), Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}}},
			spec: func(o *policyv1.PodDisruptionBudget) {
				o.Spec.MinAvailable = &intstr.IntOrString{Type: intstr.String, StrVal: "50%"}
			},
			specOf:     func(o *policyv1.PodDisruptionBudget) interface{} { return o.Spec.MinAvailable.String() },
			generation: true,
		}.run},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
	// Defaults: an EndpointSlice port gets protocol TCP and name "".
	es, err := s.Client.DiscoveryV1().EndpointSlices(ns).Create(ctxT(t), &discoveryv1.EndpointSlice{ObjectMeta: meta("defaults"), AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Port: &port}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := es.Ports[0]; p.Protocol == nil || *p.Protocol != corev1.ProtocolTCP || p.Name == nil || *p.Name != "" {
		t.Errorf("endpointslice port defaults: %+v", p)
	}
}

// TestPodsSliceKindsValidation checks upstream's field errors for the three kinds.
func TestPodsSliceKindsValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "slice-invalid"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	one, pct := intstr.FromInt32(1), intstr.FromString("150%")
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	_, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: meta("both"),
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, MaxUnavailable: &one, Selector: sel}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.HasPrefix(err.Error(), `PodDisruptionBudget.policy "both" is invalid: spec: Invalid value: `) || !strings.HasSuffix(err.Error(), ": minAvailable and maxUnavailable cannot be both set") {
		t.Errorf("pdb with both: %v", err)
	}
	_, err = s.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: meta("pct"),
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &pct, Selector: sel}}, metav1.CreateOptions{})
	if want := `PodDisruptionBudget.policy "pct" is invalid: spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%`; err == nil || err.Error() != want {
		t.Errorf("pdb 150%%:\n got %v\nwant %s", err, want)
	}
	_, err = s.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: meta("notype"),
		Endpoints: []discoveryv1.Endpoint{{}}}, metav1.CreateOptions{})
	if want := `EndpointSlice.discovery.k8s.io "notype" is invalid: [addressType: Required value, endpoints[0].addresses: Required value]`; err == nil || err.Error() != want {
		t.Errorf("endpointslice:\n got %v\nwant %s", err, want)
	}
	_, err = s.Client.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta("ep"), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}}, Ports: []corev1.EndpointPort{{Port: 70000}}}}}, metav1.CreateOptions{})
	if want := `Endpoints "ep" is invalid: [subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128), subsets[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive]`; err == nil || err.Error() != want {
		t.Errorf("endpoints:\n got %v\nwant %s", err, want)
	}
}

// TestPodsSliceKindsCountQuota checks count/<resource>.<group> quotas of the three kinds.
func TestPodsSliceKindsCountQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "slice-quota"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	_, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("q"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"count/poddisruptionbudgets.policy":     resource.MustParse("1"),
		"count/endpointslices.discovery.k8s.io": resource.MustParse("1"),
		"count/endpoints":                       resource.MustParse("1"),
	}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	pdb := func(name string) error {
		_, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: meta(name), Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}, metav1.CreateOptions{})
		return err
	}
	es := func(name string) error {
		_, err := s.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: meta(name), AddressType: discoveryv1.AddressTypeIPv4}, metav1.CreateOptions{})
		return err
	}
	ep := func(name string) error {
		_, err := s.Client.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta(name)}, metav1.CreateOptions{})
		return err
	}
	for _, c := range []struct {
		create   func(string) error
		resource string
		name     string
	}{{pdb, "poddisruptionbudgets.policy", "count/poddisruptionbudgets.policy"}, {es, "endpointslices.discovery.k8s.io", "count/endpointslices.discovery.k8s.io"}, {ep, "endpoints", "count/endpoints"}} {
		if err := c.create("a"); err != nil {
			t.Fatalf("%s: %v", c.resource, err)
		}
		err := c.create("b")
		want := `` + c.resource + ` "b" is forbidden: exceeded quota: q, requested: ` + c.name + `=1, used: ` + c.name + `=1, limited: ` + c.name + `=1`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("second %s:\n got %v\nwant %s", c.resource, err, want)
		}
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, used := range q.Status.Used {
		if used.Value() != 1 {
			t.Errorf("used %s = %s, want 1", name, used.String())
		}
	}
	s.CheckInvariant()
}

// TestEndpointsDeprecationWarning: every request to core/v1 Endpoints carries upstream's
// deprecation warning; EndpointSlices do not.
func TestEndpointsDeprecationWarning(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	const want = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
	if _, err := client.CoreV1().Endpoints("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ws.take(); len(got) != 1 || got[0] != want {
		t.Errorf("list endpoints warnings %q", got)
	}
	if _, err := client.CoreV1().Endpoints("default").Create(ctx, &corev1.Endpoints{ObjectMeta: meta("x")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ws.take(); len(got) != 1 || got[0] != want {
		t.Errorf("create endpoints warnings %q", got)
	}
	if _, err := client.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ws.take(); len(got) != 0 {
		t.Errorf("endpointslices warnings %q", got)
	}
}
