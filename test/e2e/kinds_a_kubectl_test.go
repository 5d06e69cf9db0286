package e2e

import (
	"strings"
	"testing"
)

// kindsAManifest holds one object of each kind of slice A.
const kindsAManifest = `apiVersion: v1
kind: PodTemplate
metadata:
  name: web
  namespace: web
template:
  metadata:
    labels: {app: web}
  spec:
    containers:
    - name: nginx
      image: nginx:1.27
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv1
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: slow
  hostPath: {path: /data/pv1}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: leader
  namespace: web
spec:
  holderIdentity: web-0
  leaseDurationSeconds: 15
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web-only
  namespace: web
spec:
  podSelector:
    matchLabels: {app: web}
  ingress:
  - from:
    - podSelector: {}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
spec:
  controller: k8s.io/ingress-nginx
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: web
spec:
  ingressClassName: nginx
  tls:
  - hosts: [shop.example.com]
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: web, port: {number: 80}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: runsc
overhead:
  podFixed: {cpu: 250m, memory: 64Mi}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: web-v1
  namespace: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
  targetCPUUtilizationPercentage: 50
---
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web-scaled
  namespace: web
eventTime: "2026-01-02T03:04:05.000000Z"
reportingController: example.com/scaler
reportingInstance: scaler-0
action: Scale
reason: Scaled
note: scaled web to 2
type: Normal
regarding: {apiVersion: apps/v1, kind: Deployment, namespace: web, name: web}
`

const secondIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: second
  namespace: web
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
`

const helloEvent = `apiVersion: v1
kind: Event
metadata:
  name: hello
  namespace: web
involvedObject: {kind: Ingress, namespace: web, name: web}
reason: Hello
message: hello world
type: Normal
count: 1
`

// TestKindsAKubectl applies a manifest with one object of each kind of slice A with the
// real kubectl, prints them as kubectl get does, and has a count/ingresses quota refuse a
// second Ingress with upstream's text.
func TestKindsAKubectl(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	c := start(t)
	c.expectOut("", "namespace/web created\n", "create", "namespace", "web")
	c.expectOut(kindsAManifest, strings.Join([]string{
		"podtemplate/web created", "persistentvolume/pv1 created", "lease.coordination.k8s.io/leader created",
		"networkpolicy.networking.k8s.io/web-only created", "ingressclass.networking.k8s.io/nginx created",
		"ingress.networking.k8s.io/web created", "runtimeclass.node.k8s.io/gvisor created",
		"horizontalpodautoscaler.autoscaling/web created", "horizontalpodautoscaler.autoscaling/web-v1 created",
		"event.events.k8s.io/web-scaled created",
	}, "\n")+"\n", "apply", "-f", "-")
	// Applying again changes nothing.
	if r := c.kubectlIn(kindsAManifest, "apply", "-f", "-"); r.code != 0 || strings.Count(r.stdout, "unchanged") != 10 {
		t.Errorf("second apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	var tables strings.Builder
	for _, args := range [][]string{
		{"get", "podtemplates", "-n", "web"},
		{"get", "pv"},
		{"get", "leases", "-n", "web"},
		{"get", "netpol", "-n", "web"},
		{"get", "ingressclasses"},
		{"get", "ing", "-n", "web"},
		{"get", "runtimeclasses"},
		{"get", "hpa", "-n", "web"},
	} {
		tables.WriteString("$ kubectl " + strings.Join(args, " ") + "\n" + c.must(args...) + "\n")
	}
	golden(t, "kinds_a_get.golden", normalizeTable(tables.String()))
	// kubectl describe reads each of them.
	for _, args := range [][]string{
		{"describe", "podtemplate", "web", "-n", "web"}, {"describe", "pv", "pv1"}, {"describe", "lease", "leader", "-n", "web"},
		{"describe", "netpol", "web-only", "-n", "web"}, {"describe", "ingressclass", "nginx"}, {"describe", "ingress", "web", "-n", "web"},
		{"describe", "runtimeclass", "gvisor"}, {"describe", "hpa", "web", "-n", "web"},
	} {
		if r := c.kubectl(args...); r.code != 0 || !strings.Contains(r.stdout, "Name:") {
			t.Errorf("kubectl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}

	// A count quota on ingresses: the existing one uses it up, the second is refused.
	c.expectOut("", "resourcequota/ing created\n", "create", "quota", "ing", "-n", "web", "--hard=count/ingresses.networking.k8s.io=1")
	r := c.kubectlIn(secondIngress, "create", "-f", "-")
	want := `Error from server (Forbidden): error when creating "STDIN": ingresses.networking.k8s.io "second" is forbidden: exceeded quota: ing, requested: count/ingresses.networking.k8s.io=1, used: count/ingresses.networking.k8s.io=1, limited: count/ingresses.networking.k8s.io=1` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("second ingress: exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}
	c.expectOut("", "ingress.networking.k8s.io \"web\" deleted\n", "delete", "ingress", "web", "-n", "web")
	c.expectOut(secondIngress, "ingress.networking.k8s.io/second created\n", "create", "-f", "-")

	// The HorizontalPodAutoscaler read as autoscaling/v1; a core event read as events.k8s.io/v1.
	if got := c.must("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-n", "web", "-o", "jsonpath={.spec.targetCPUUtilizationPercentage} {.spec.minReplicas}"); got != "80 2" {
		t.Errorf("hpa as autoscaling/v1: %q", got)
	}
	c.expectOut(helloEvent, "event/hello created\n", "create", "-f", "-")
	if got := c.must("get", "events.v1.events.k8s.io", "hello", "-n", "web", "-o", "jsonpath={.note}/{.regarding.name}/{.deprecatedCount}"); got != "hello world/web/1" {
		t.Errorf("event as events.k8s.io/v1: %q", got)
	}
	golden(t, "kinds_a_get_events.golden", normalizeTable(c.must("get", "events.v1.events.k8s.io", "hello", "-n", "web", "-o", "wide")))

	// kubectl get cs, with the deprecation warning.
	r = c.kubectl("get", "componentstatuses")
	if r.code != 0 || r.stderr != "Warning: v1 ComponentStatus is deprecated in v1.19+\n" {
		t.Errorf("get cs: exit %d stderr %q", r.code, r.stderr)
	}
	golden(t, "kinds_a_get_cs.golden", normalizeTable(r.stdout))

	// kubectl autoscale writes an autoscaling/v2 HorizontalPodAutoscaler.
	c.expectOut("", "deployment.apps/api created\n", "create", "deployment", "api", "-n", "web", "--image=nginx")
	c.expectOut("", "horizontalpodautoscaler.autoscaling/api autoscaled\n", "autoscale", "deployment", "api", "-n", "web", "--min=2", "--max=4", "--cpu-percent=70")
	if got := c.must("get", "hpa", "api", "-n", "web", "-o", "jsonpath={.spec.metrics[0].resource.target.averageUtilization}/{.spec.maxReplicas}"); got != "70/4" {
		t.Errorf("autoscaled hpa: %q", got)
	}

	// A pod naming the RuntimeClass gets its overhead.
	c.expectOut("", "pod/sandboxed created\n", "run", "sandboxed", "-n", "web", "--image=nginx", "--overrides", `{"spec":{"runtimeClassName":"gvisor"}}`)
	if got := c.must("get", "pod", "sandboxed", "-n", "web", "-o", "jsonpath={.spec.overhead}"); got != `{"cpu":"250m","memory":"64Mi"}` {
		t.Errorf("pod overhead: %s", got)
	}
}
