package integration

import (
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestDeviceTaintRules walks resource.k8s.io/v1 DeviceTaintRules, which kube-scheduler
// v1.37 lists and watches before it schedules anything: status reset on create, the
// generation following the spec, timeAdded bumped when the effect changes, the status
// subresource keeping the spec, and upstream's validation errors.
func TestDeviceTaintRules(t *testing.T) {
	s := servertest.Start(t)
	ctx := ctxT(t)
	rules := s.Client.ResourceV1().DeviceTaintRules()
	driver := "gpu.example.com"
	r, err := rules.Create(ctx, &resourcev1.DeviceTaintRule{ObjectMeta: meta("maintenance"), Spec: resourcev1.DeviceTaintRuleSpec{
		DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: &driver},
		Taint:          resourcev1.DeviceTaint{Key: "example.com/maintenance", Value: "yes", Effect: resourcev1.DeviceTaintEffectNoSchedule},
	}, Status: resourcev1.DeviceTaintRuleStatus{Conditions: []metav1.Condition{{Type: "EvictionInProgress", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Now()}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Generation != 1 || len(r.Status.Conditions) != 0 {
		t.Fatalf("created: generation %d, status %+v; want 1 and no status", r.Generation, r.Status)
	}
	// The effect changes and timeAdded is left as it was: the server sets it.
	r.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	r, err = rules.Update(ctx, r, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Generation != 2 || r.Spec.Taint.TimeAdded == nil {
		t.Fatalf("updated: generation %d, timeAdded %v; want 2 and set", r.Generation, r.Spec.Taint.TimeAdded)
	}
	// Status writes keep the spec.
	r.Status.Conditions = []metav1.Condition{{Type: "EvictionInProgress", Status: metav1.ConditionFalse, Reason: "Completed", LastTransitionTime: metav1.Now()}}
	r.Spec.Taint.Value = "changed"
	r, err = rules.UpdateStatus(ctx, r, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Status.Conditions) != 1 || r.Spec.Taint.Value != "yes" || r.Generation != 2 {
		t.Fatalf("status update: %+v", r)
	}
	if l, err := rules.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v, %v", l, err)
	}
	// Upstream's errors.
	_, err = rules.Create(ctx, &resourcev1.DeviceTaintRule{ObjectMeta: meta("bad"), Spec: resourcev1.DeviceTaintRuleSpec{
		Taint: resourcev1.DeviceTaint{Key: "a/b/c", Effect: "Sometimes"}}}, metav1.CreateOptions{})
	want := `DeviceTaintRule.resource.k8s.io "bad" is invalid: [spec.taint.key: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName'), spec.taint.effect: Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"]`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("invalid rule: %v\nwant %s", err, want)
	}
}

// TestClusterFieldSelectors checks the field labels real components select with: a
// kubelet's and kube-proxy's Services informer (spec.clusterIP!=None), spec.type, and
// kube-controller-manager's CSR informers (spec.signerName).
func TestClusterFieldSelectors(t *testing.T) {
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "fields"
	mkNamespace(t, s, ns)
	svcs := s.Client.CoreV1().Services(ns)
	port := []corev1.ServicePort{{Port: 80}}
	for _, svc := range []*corev1.Service{
		{ObjectMeta: meta("cluster"), Spec: corev1.ServiceSpec{Ports: port}},
		{ObjectMeta: meta("headless"), Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: port}},
		{ObjectMeta: meta("nodeport"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: port}},
	} {
		if _, err := svcs.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ sel, want string }{
		{"spec.clusterIP!=None", "cluster,nodeport"},
		{"spec.clusterIP=None", "headless"},
		{"spec.type=NodePort", "nodeport"},
		{"spec.type=ClusterIP,spec.clusterIP!=None", "cluster"},
	} {
		l, err := svcs.List(ctx, metav1.ListOptions{FieldSelector: tc.sel})
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		var n []string
		for _, e := range l.Items {
			n = append(n, e.Name)
		}
		if got := strings.Join(n, ","); got != tc.want {
			t.Errorf("services %s = %q, want %q", tc.sel, got, tc.want)
		}
	}
	// A watch with the kubelet's selector is served.
	w, err := svcs.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.clusterIP!=None"})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	if _, err := svcs.List(ctx, metav1.ListOptions{FieldSelector: "spec.ports=80"}); !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: spec.ports" {
		t.Fatalf("unknown service field: %v", err)
	}
	l, err := s.Client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + certificatesv1.KubeAPIServerClientKubeletSignerName})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("CSRs by signer: %v, %v", l, err)
	}
}
