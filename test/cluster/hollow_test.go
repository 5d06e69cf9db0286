package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestHollowKubelets runs hollow kubelets (kubemark --morph=kubelet: the kubelet's own code
// with a fake container runtime) that join with a bootstrap token from `quotad token
// create`: their client certificates are asked for, approved and issued through the CSR
// flow, they register their Nodes and heartbeat under their node identity (the Node
// authorizer and NodeRestriction), and run the pods the scheduler binds to them: a
// Deployment under a compute quota rolls out, and a deleted pod goes once its kubelet
// confirms.
func TestHollowKubelets(t *testing.T) {
	requireKubectl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := startCluster(ctx, t)
	cs := c.client

	// 1. A bootstrap token and its kubeconfig.
	out, err := exec.CommandContext(ctx, quotadBin, "token", "create", "--data-dir", filepath.Join(c.dir, "data")).Output()
	if err != nil {
		t.Fatalf("quotad token create: %v", err)
	}
	bootstrap := filepath.Join(c.dir, "bootstrap.kubeconfig")
	if err := os.WriteFile(bootstrap, out, 0o600); err != nil {
		t.Fatal(err)
	}

	// 2. Hollow kubelets, each in a directory of its own.
	const hollow = 2
	var names []string
	for i := range hollow {
		name := fmt.Sprintf("hollow-node-%d", i)
		names = append(names, name)
		dir := filepath.Join(c.dir, name)
		if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
			t.Fatal(err)
		}
		p := startProc(t, c.dir, name, filepath.Join(components, "kubemark"), []string{"TMPDIR=" + filepath.Join(dir, "tmp")},
			"--morph=kubelet", "--name="+name,
			"--bootstrap-kubeconfig="+bootstrap, "--kubeconfig="+filepath.Join(dir, "kubelet.kubeconfig"), "--cert-dir="+filepath.Join(dir, "pki"),
			fmt.Sprintf("--kubelet-port=%d", freePort(t)), "--kubelet-read-only-port=0",
			"--use-host-image-service=false", "--node-labels=type=hollow", "--max-pods=30")
		c.extra = append(c.extra, p)
	}

	// 3. Their client certificates were issued through the CSR flow, and their Nodes are Ready.
	until(ctx, t, "the hollow nodes to be Ready", c.listWatch(cs.CoreV1().RESTClient(), "nodes", "", fields.Everything()), &corev1.Node{},
		func(os []runtime.Object) bool {
			ready := 0
			for _, o := range os {
				if n := o.(*corev1.Node); slices.Contains(names, n.Name) && nodeReady(n) {
					ready++
				}
			}
			return ready == hollow
		})
	csrs, err := cs.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + certificatesv1.KubeAPIServerClientKubeletSignerName})
	if err != nil {
		t.Fatal(err)
	}
	issued := 0
	for _, csr := range csrs.Items {
		if len(csr.Status.Certificate) > 0 && strings.HasPrefix(csr.Spec.Username, "system:bootstrap:") {
			issued++
		}
	}
	if issued < hollow {
		t.Errorf("kubelet client CSRs issued to bootstrappers: %d, want %d", issued, hollow)
	}
	// They heartbeat through their Leases in kube-node-lease, written as their nodes.
	until(ctx, t, "the hollow nodes' Leases", c.listWatch(cs.CoordinationV1().RESTClient(), "leases", "kube-node-lease", fields.Everything()), &coordinationv1.Lease{},
		func(os []runtime.Object) bool {
			held := 0
			for _, o := range os {
				if l := asLease(o); slices.Contains(names, l.Name) && ptr.Deref(l.Spec.HolderIdentity, "") == l.Name {
					held++
				}
			}
			return held == hollow
		})
	t.Logf("kubectl get nodes -o wide:\n%s", c.must(ctx, "get", "nodes", "-o", "wide"))

	// 4. A Deployment under a compute quota runs on them.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hard := corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("10"),
		corev1.ResourceRequestsMemory: resource.MustParse("4Gi"), corev1.ResourceLimitsCPU: resource.MustParse("4"), corev1.ResourceLimitsMemory: resource.MustParse("8Gi")}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := podTemplate(map[string]string{"app": "hollow"}, "100m", "64Mi", corev1.RestartPolicyAlways)
	tmpl.Spec.NodeSelector = map[string]string{"type": "hollow"}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "hollow"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hollow"}}, Template: tmpl,
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out2 := c.must(ctx, "rollout", "status", "deployment/hollow", "-n", ns, "--timeout=5m")
	if !strings.Contains(out2, `deployment "hollow" successfully rolled out`) {
		t.Errorf("kubectl rollout status: %s", out2)
	}
	// A hollow kubelet reports a container Ready a moment before it reports it running:
	// rollout status may return first.
	until(ctx, t, "the hollow pods to be Running", c.listWatch(cs.CoreV1().RESTClient(), "pods", ns, fields.Everything()), &corev1.Pod{},
		func(os []runtime.Object) bool {
			running := 0
			for _, o := range os {
				if p := o.(*corev1.Pod); p.Status.Phase == corev1.PodRunning && podReady(p) {
					running++
				}
			}
			return running == 4
		})
	wide := c.must(ctx, "get", "pods", "-n", ns, "-o", "wide")
	for _, p := range c.pods(ctx, "app=hollow") {
		if !slices.Contains(names, p.Spec.NodeName) || p.Status.Phase != corev1.PodRunning || !podReady(&p) {
			t.Errorf("pod %s: node %q phase %s ready %v", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p))
		}
		if !regexp.MustCompile(`(?m)^` + p.Name + `\s+1/1\s+Running\s.*\s` + p.Spec.NodeName + `\s`).MatchString(wide) {
			t.Errorf("kubectl get pods -o wide: no line showing %s Running on %s", p.Name, p.Spec.NodeName)
		}
	}
	t.Logf("kubectl get pods -o wide:\n%s", wide)
	// kubectl describe node lists the node's pods by spec.nodeName (with phase selectors),
	// as each kubelet lists its own: the pods index serves it once loaded (the kubelets'
	// lists at their start loaded it).
	for _, p := range c.pods(ctx, "app=hollow") {
		desc := c.must(ctx, "describe", "node", p.Spec.NodeName)
		if !regexp.MustCompile(`(?m)^\s+` + ns + `\s+` + p.Name + `\s+100m \(`).MatchString(desc) {
			t.Errorf("kubectl describe node %s: no line for pod %s:\n%s", p.Spec.NodeName, p.Name, desc)
		}
	}
	if m := c.must(ctx, "get", "--raw", "/metrics"); !regexp.MustCompile(`(?m)^quotad_field_index_lists_total\{outcome="indexed",resource="pods"\} [1-9]`).MatchString(m) {
		t.Errorf("no list of a node's pods served by the index:\n%s", regexp.MustCompile(`(?m)^quotad_field_index.*$`).FindAllString(m, -1))
	}
	c.quotaMatchesPods(ctx, "with the hollow pods running", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "400m", corev1.ResourcePods: "4"})

	// 5. kubectl delete pod waits for the kubelet: it stops the pod's containers and confirms
	// with a zero-grace delete, as the node it is; the quota follows exactly.
	victim := c.deleteThroughNode(ctx, c.pods(ctx, "app=hollow")[0].Name, 30)
	until(ctx, t, "the hollow pod's replacement", c.listWatch(cs.CoreV1().RESTClient(), "pods", ns, fields.Everything()), &corev1.Pod{},
		func(os []runtime.Object) bool {
			running := 0
			for _, o := range os {
				if p := o.(*corev1.Pod); p.UID != victim.UID && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					running++
				}
			}
			return running == 4
		})
	c.quotaMatchesPods(ctx, "after the replacement", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "400m", corev1.ResourcePods: "4"})
	c.alive()
	c.noRefusals()
}

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
