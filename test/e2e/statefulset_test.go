package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const stsManifest = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: held
spec:
  serviceName: nginx
  replicas: 3
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
`

// TestStatefulSetHeldAtStorageQuota: a StatefulSet with volumeClaimTemplates applied with
// kubectl stops at its storage quota, and kubectl describe statefulset says why in
// upstream's event texts; get controllerrevisions prints upstream's columns.
func TestStatefulSetHeldAtStorageQuota(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "held")
	c.must("create", "quota", "storage", "--hard=requests.storage=2Gi", "--namespace=held")
	if r := c.kubectlIn(stsManifest, "apply", "-f", "-"); r.code != 0 || r.stdout != "statefulset.apps/web created\n" {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := c.waitFor("failed to create PVC data-web-2", "describe", "statefulset", "web", "--namespace=held")
	forbidden := `persistentvolumeclaims "data-web-2" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=2Gi, limited: requests.storage=2Gi`
	for _, want := range []string{
		"create Claim data-web-2 for Pod web-2 in StatefulSet web failed error: " + forbidden,
		"create Pod web-2 in StatefulSet web failed error: failed to create PVC data-web-2: " + forbidden,
		"FailedCreate",
		"create Claim data-web-0 Pod web-0 in StatefulSet web success",
		"Pods Status:        0 Running / 2 Waiting / 0 Succeeded / 0 Failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe statefulset lacks %q:\n%s", want, out)
		}
	}
	q := c.must("describe", "quota", "storage", "--namespace=held")
	if !regexp.MustCompile(`requests\.storage\s+2Gi\s+2Gi`).MatchString(q) {
		t.Errorf("describe quota:\n%s", q)
	}
	revs := c.must("get", "controllerrevisions", "--namespace=held")
	lines := strings.Split(strings.TrimSpace(revs), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME CONTROLLER REVISION AGE" || !strings.Contains(lines[1], "statefulset.apps/web") {
		t.Errorf("get controllerrevisions:\n%s", revs)
	}
}

// kubelet marks every Pending pod of ns Running and Ready as it appears, as a kubelet
// would, until the test ends.
func (c *cluster) kubelet(ns string) {
	c.t.Helper()
	cs := c.client()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted || p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
				continue
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}) //nolint:errcheck // a conflict means a newer event follows
		}
	}()
}

// TestStatefulSetRollout: kubectl rollout status, history and undo of a StatefulSet work
// on its status and ControllerRevisions.
func TestStatefulSetRollout(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "roll")
	c.kubelet("roll")
	manifest := strings.Replace(strings.Replace(stsManifest, "namespace: held", "namespace: roll", 1), "replicas: 3", "replicas: 2", 1)
	manifest = manifest[:strings.Index(manifest, "  volumeClaimTemplates:")]
	if r := c.kubectlIn(manifest, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := c.must("rollout", "status", "statefulset/web", "--namespace=roll", "--timeout=60s")
	if !strings.Contains(out, "partitioned roll out complete: 2 new pods have been updated...") {
		t.Errorf("rollout status printed %q", out)
	}
	c.must("set", "image", "statefulset/web", "nginx=nginx:2", "--namespace=roll")
	out = c.must("rollout", "status", "statefulset/web", "--namespace=roll", "--timeout=60s")
	if !strings.Contains(out, "partitioned roll out complete: 2 new pods have been updated...") {
		t.Errorf("rollout status printed %q", out)
	}
	hist := c.must("rollout", "history", "statefulset/web", "--namespace=roll")
	if !regexp.MustCompile(`(?s)REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>`).MatchString(hist) {
		t.Errorf("rollout history printed %q", hist)
	}
	if got := c.must("rollout", "undo", "statefulset/web", "--namespace=roll"); got != "statefulset.apps/web rolled back\n" {
		t.Errorf("rollout undo printed %q", got)
	}
	c.must("rollout", "status", "statefulset/web", "--namespace=roll", "--timeout=60s")
	img := c.must("get", "pods", "--namespace=roll", "-o", "jsonpath={range .items[*]}{.metadata.name}={.spec.containers[0].image} {end}")
	if img != "web-0=nginx web-1=nginx " {
		t.Errorf("images after undo: %q", img)
	}
	hist = c.must("rollout", "history", "statefulset/web", "--namespace=roll")
	if !regexp.MustCompile(`(?s)REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>`).MatchString(hist) {
		t.Errorf("rollout history after undo printed %q", hist)
	}
}

const dsManifest = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: nodes
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      nodeSelector:
        role: worker
      containers:
      - name: agent
        image: agent:1
`

// TestDaemonSetRollout: a DaemonSet applied with kubectl runs on the Nodes it selects and
// tolerates; kubectl get, rollout status and rollout history see it as upstream's.
func TestDaemonSetRollout(t *testing.T) {
	t.Parallel()
	c := start(t)
	cs := c.client()
	for _, n := range []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "w1", Labels: map[string]string{"role": "worker"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "w2", Labels: map[string]string{"role": "worker"}}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cp", Labels: map[string]string{"role": "control-plane"}}},
	} {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), &n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.must("create", "namespace", "nodes")
	c.kubelet("nodes")
	if r := c.kubectlIn(dsManifest, "apply", "-f", "-"); r.code != 0 || r.stdout != "daemonset.apps/agent created\n" {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := c.must("rollout", "status", "daemonset/agent", "--namespace=nodes", "--timeout=60s"); out != "daemon set \"agent\" successfully rolled out\n" {
		t.Errorf("rollout status printed %q", out)
	}
	got := normalizeTable(c.must("get", "daemonset", "agent", "--namespace=nodes"))
	want := "NAME  DESIRED  CURRENT  READY  UP-TO-DATE  AVAILABLE  NODE SELECTOR  AGE\nagent  1  1  1  1  1  role=worker  <age>\n"
	if got != want {
		t.Errorf("get daemonset:\n%s\nwant\n%s", got, want)
	}
	c.must("patch", "daemonset", "agent", "--namespace=nodes", "-p", `{"spec":{"template":{"spec":{"tolerations":[{"key":"gpu","operator":"Exists"}]}}}}`)
	c.must("rollout", "status", "daemonset/agent", "--namespace=nodes", "--timeout=60s")
	nodes := c.must("get", "pods", "--namespace=nodes", "-o", "jsonpath={range .items[*]}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]} {end}")
	if f := strings.Fields(nodes); len(f) != 2 || !(f[0] == "w1" && f[1] == "w2" || f[0] == "w2" && f[1] == "w1") {
		t.Errorf("pods bound to nodes %q, want w1 and w2", nodes)
	}
	hist := c.must("rollout", "history", "daemonset/agent", "--namespace=nodes")
	if !regexp.MustCompile(`(?s)REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>`).MatchString(hist) {
		t.Errorf("rollout history printed %q", hist)
	}
}
