package integration

import (
	"net"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

func simplePod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
}

// TestPodBinding binds a pod as a scheduler does and is refused a second binding with
// upstream's 409.
func TestPodBinding(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "binding"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	pods := s.Client.CoreV1().Pods(ns)
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("q"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourcePods: resource.MustParse("5")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, simplePod("p", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"scheduled-by": "test"}}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	if err := pods.Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	p, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := false
	for _, c := range p.Status.Conditions {
		scheduled = scheduled || (c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue)
	}
	if p.Spec.NodeName != "n1" || p.Annotations["scheduled-by"] != "test" || !scheduled {
		t.Errorf("bound pod: node %q annotations %v conditions %v", p.Spec.NodeName, p.Annotations, p.Status.Conditions)
	}
	b.Target.Name = "n2"
	err = pods.Bind(ctx, b, metav1.CreateOptions{})
	if want := `Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"`; !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("second bind:\n got %v\nwant %s", err, want)
	}
	b.Name = "other"
	err = s.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("binding").Body(b).Do(ctx).Error()
	if !apierrors.IsBadRequest(err) || err.Error() != "name in URL does not match name in Binding object" {
		t.Errorf("bind with another name: %v", err)
	}
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Target: corev1.ObjectReference{Name: "n1"}}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("bind of a missing pod: %v", err)
	}
	s.CheckInvariant()
}

// TestPodStreamsWithoutNode checks log, exec, attach, portforward and proxy of a pod no
// node runs: upstream's answers.
func TestPodStreamsWithoutNode(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "streams"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, simplePod("p", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	body, err := s.Client.CoreV1().Pods(ns).GetLogs("p", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || len(body) != 0 {
		t.Errorf("logs of an unscheduled pod: %q %v", body, err)
	}
	_, err = s.Client.CoreV1().Pods(ns).GetLogs("p", &corev1.PodLogOptions{Container: "nope"}).Stream(ctx)
	if !apierrors.IsBadRequest(err) || err.Error() != "container nope is not valid for pod p" {
		t.Errorf("logs of a missing container: %v", err)
	}
	tail := int64(-1)
	_, err = s.Client.CoreV1().Pods(ns).GetLogs("p", &corev1.PodLogOptions{TailLines: &tail}).Stream(ctx)
	if want := `PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("logs with negative tailLines:\n got %v\nwant %s", err, want)
	}
	rc := s.Client.CoreV1().RESTClient()
	for _, sub := range []string{"exec", "attach", "portforward"} {
		err := rc.Post().Namespace(ns).Resource("pods").Name("p").SubResource(sub).Param("stdout", "true").Param("command", "ls").Do(ctx).Error()
		if !apierrors.IsBadRequest(err) || err.Error() != "pod p does not have a host assigned" {
			t.Errorf("%s: %v", sub, err)
		}
	}
	err = rc.Get().Namespace(ns).Resource("pods").Name("p").SubResource("proxy").Suffix("healthz").Do(ctx).Error()
	if !apierrors.IsBadRequest(err) || err.Error() != "address not allowed" {
		t.Errorf("proxy: %v", err)
	}
	err = rc.Get().Namespace(ns).Resource("pods").Name("missing").SubResource("exec").Do(ctx).Error()
	if !apierrors.IsNotFound(err) {
		t.Errorf("exec of a missing pod: %v", err)
	}
}

// TestServiceAndNodeProxy: services/proxy without endpoints and nodes/proxy without a
// reachable kubelet answer as upstream.
func TestServiceAndNodeProxy(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "proxies"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	if _, err := s.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := s.Client.CoreV1().RESTClient()
	err := rc.Get().Namespace(ns).Resource("services").Name("web:http").SubResource("proxy").Suffix("x").Do(ctx).Error()
	if !apierrors.IsServiceUnavailable(err) || err.Error() != `no endpoints available for service "web:http"` {
		t.Errorf("service proxy without endpoints: %v", err)
	}
	err = rc.Get().Namespace(ns).Resource("services").Name("web:81").SubResource("proxy").Do(ctx).Error()
	if !apierrors.IsServiceUnavailable(err) || err.Error() != `no service port 81 found for service "web"` {
		t.Errorf("service proxy to a missing port: %v", err)
	}
	if _, err := s.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: meta("n1")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = rc.Get().Resource("nodes").Name("n1").SubResource("proxy").Suffix("healthz").Do(ctx).Error()
	if err == nil || err.Error() != "no preferred addresses found; known addresses: []" {
		t.Errorf("node proxy without an address: %v", err)
	}
}

// TestPodStreamsUnreachableKubelet: a pod bound to a node whose kubelet address refuses
// connections gets upstream's dial errors.
func TestPodStreamsUnreachableKubelet(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kubelet"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	// A port nothing listens on: bind one, then close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	node := &corev1.Node{ObjectMeta: meta("n1"), Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}}}}
	if _, err := s.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := simplePod("p", nil)
	p.Spec.NodeName = "n1"
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	_, err = s.Client.CoreV1().Pods(ns).GetLogs("p", &corev1.PodLogOptions{}).Stream(ctx)
	if want := `Get "https://` + addr + `/containerLogs/kubelet/p/c": dial tcp ` + addr + `: connect: connection refused`; err == nil || err.Error() != want {
		t.Errorf("logs:\n got %v\nwant %s", err, want)
	}
	err = s.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("exec").Param("command", "ls").Do(ctx).Error()
	if want := `error dialing backend: dial tcp ` + addr + `: connect: connection refused`; err == nil || err.Error() != want {
		t.Errorf("exec:\n got %v\nwant %s", err, want)
	}
}

// TestPodSubresourceDiscovery: the pod, service and node subresources are listed as
// upstream lists them (kubectl drain looks for pods/eviction in policy/v1).
func TestPodSubresourceDiscovery(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	list, err := s.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	var pods []string
	found := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		found[r.Name] = r
		if r.Name == "pods" || strings.HasPrefix(r.Name, "pods/") {
			pods = append(pods, r.Name)
		}
	}
	want := []string{"pods", "pods/attach", "pods/binding", "pods/ephemeralcontainers", "pods/eviction", "pods/exec", "pods/log", "pods/portforward", "pods/proxy", "pods/resize", "pods/status"}
	if strings.Join(pods, ",") != strings.Join(want, ",") {
		t.Errorf("pod resources %v, want %v", pods, want)
	}
	if ev := found["pods/eviction"]; ev.Group != "policy" || ev.Version != "v1" || ev.Kind != "Eviction" {
		t.Errorf("pods/eviction %+v", ev)
	}
	for _, name := range []string{"services/proxy", "nodes/proxy", "endpoints"} {
		if _, ok := found[name]; !ok {
			t.Errorf("%s not listed", name)
		}
	}
}
