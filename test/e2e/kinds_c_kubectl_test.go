package e2e

import (
	"strings"
	"testing"
)

const kindsCManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: kinds-c
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpus
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool:
    name: node-1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
  - name: gpu-1
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
  namespace: kinds-c
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: two-gpus
  namespace: kinds-c
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
        count: 2
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: extra
spec:
  cidrs:
  - 10.200.0.0/16
---
apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata:
  name: 10.200.0.10
spec:
  parentRef:
    resource: services
    namespace: kinds-c
    name: web
`

// TestKindsCKubectl applies one object of each resource.k8s.io kind, a ServiceCIDR and
// an IPAddress with kubectl, reads them back as kubectl get prints them, binds a pod with
// a Binding, and has a per-device-class quota refuse a claim.
func TestKindsCKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.expectOut(kindsCManifest, `namespace/kinds-c created
deviceclass.resource.k8s.io/gpu created
resourceslice.resource.k8s.io/node-1-gpus created
resourceclaimtemplate.resource.k8s.io/one-gpu created
resourceclaim.resource.k8s.io/two-gpus created
servicecidr.networking.k8s.io/extra created
ipaddress.networking.k8s.io/10.200.0.10 created
`, "apply", "-f", "-")
	// A second apply succeeds: the claim and template are "configured", as against
	// kube-apiserver, since the server defaults the atomic requests list.
	r := c.kubectlIn(kindsCManifest, "apply", "-f", "-")
	if r.code != 0 || strings.Count(r.stdout, " unchanged\n") != 5 || strings.Count(r.stdout, " configured\n") != 2 {
		t.Errorf("second apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct{ args, want string }{
		{"get deviceclasses", "NAME  AGE\ngpu  <age>\n"},
		{"get resourceslices", "NAME  NODE  DRIVER  POOL  AGE\nnode-1-gpus  node-1  gpu.example.com  node-1  <age>\n"},
		{"get resourceclaimtemplates -n kinds-c", "NAME  AGE\none-gpu  <age>\n"},
		{"get resourceclaims -n kinds-c", "NAME  STATE  AGE\ntwo-gpus  pending  <age>\n"},
		{"get servicecidrs", "NAME  CIDRS  AGE\nextra  10.200.0.0/16  <age>\nkubernetes  10.96.0.0/12  <age>\n"},
		{"get ipaddresses", "NAME  PARENTREF\n10.200.0.10  services/kinds-c/web\n10.96.0.1  services/default/kubernetes\n"},
		{"get resourceclaim two-gpus -n kinds-c -o jsonpath={.spec.devices.requests[0].exactly.allocationMode}", "ExactCount"},
		{"get servicecidr kubernetes -o jsonpath={.status.conditions[0].type}={.status.conditions[0].status}", "Ready=True"},
	} {
		if got := normalizeTable(c.must(strings.Fields(tc.args)...)); got != tc.want {
			t.Errorf("kubectl %s:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	if out := c.must("explain", "resourceclaims.spec.devices.requests.exactly.count"); !strings.Contains(out, "FIELD: count <integer>") {
		t.Errorf("kubectl explain resourceclaims:\n%s", out)
	}

	// A quota on the gpu class's devices refuses the claim that would exceed it.
	c.expectOut(`apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpus
  namespace: kinds-c
spec:
  hard:
    gpu.deviceclass.resource.k8s.io/devices: "3"
`, "resourcequota/gpus created\n", "apply", "-f", "-")
	c.waitKubectl(func(s string) bool { return s == "2" }, "get", "quota", "gpus", "-n", "kinds-c", "-o", "jsonpath={.status.used.gpu\\.deviceclass\\.resource\\.k8s\\.io/devices}")
	r = c.kubectlIn(strings.Replace(kindsCManifest[strings.Index(kindsCManifest, "kind: ResourceClaim\n")-len("apiVersion: resource.k8s.io/v1\n"):strings.Index(kindsCManifest, "---\napiVersion: networking.k8s.io/v1\nkind: ServiceCIDR")], "two-gpus", "two-more", 1), "create", "-f", "-")
	want := `Error from server (Forbidden): error when creating "STDIN": resourceclaims.resource.k8s.io "two-more" is forbidden: exceeded quota: gpus, requested: gpu.deviceclass.resource.k8s.io/devices=2, used: gpu.deviceclass.resource.k8s.io/devices=2, limited: gpu.deviceclass.resource.k8s.io/devices=3` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("claim over quota: exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}

	// A Binding created with kubectl binds its pod.
	c.expectOut(`apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kinds-c
spec:
  containers:
  - name: c
    image: nginx
`, "pod/web created\n", "apply", "-f", "-")
	// The create answers upstream's bare Success status, which kubectl names as it can.
	if r := c.kubectlIn(`apiVersion: v1
kind: Binding
metadata:
  name: web
  namespace: kinds-c
target:
  kind: Node
  name: node-1
`, "create", "-f", "-"); r.code != 0 {
		t.Errorf("kubectl create binding: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := c.must("get", "pod", "web", "-n", "kinds-c", "-o", "jsonpath={.spec.nodeName}"); got != "node-1" {
		t.Errorf("bound pod nodeName = %q", got)
	}
}
