package e2e

import (
	"strings"
	"testing"
)

const resizablePod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: rz
spec:
  nodeName: n1
  containers:
  - name: c
    image: nginx
    resources:
      requests:
        cpu: 250m
      limits:
        cpu: 500m
`

// TestKubectlPatchResize: `kubectl patch --subresource resize` resizes a pod in place; quota
// charges the new requests at once, and a resize past hard is refused with upstream's
// text.
func TestKubectlPatchResize(t *testing.T) {
	requireKubectl(t)
	c := start(t)
	c.expectOut("", "namespace/rz created\n", "create", "namespace", "rz")
	c.waitKubectl(func(s string) bool { return strings.Contains(s, "default") }, "get", "serviceaccounts", "-n", "rz", "-o", "name")
	c.expectOut("", "resourcequota/q created\n", "create", "quota", "q", "--hard=requests.cpu=1,limits.cpu=2", "-n", "rz")
	c.expectOut(resizablePod, "pod/web created\n", "create", "-f", "-")
	used := func() string {
		return c.must("get", "quota", "q", "-n", "rz", "-o", `jsonpath={.status.used.requests\.cpu} {.status.used.limits\.cpu}`)
	}
	if got := used(); got != "250m 500m" {
		t.Errorf("used after create %q, want 250m 500m", got)
	}
	c.expectOut("", "pod/web patched\n", "patch", "pod", "web", "-n", "rz", "--subresource", "resize", "--type", "merge",
		"-p", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"1"}}}]}}`)
	if got := used(); got != "500m 1" {
		t.Errorf("used after resize %q, want 500m 1", got)
	}
	if got := c.must("get", "pod", "web", "-n", "rz", "-o", "jsonpath={.spec.containers[0].image} {.spec.containers[0].resources.requests.cpu}"); got != "nginx 500m" {
		t.Errorf("pod after resize %q, want nginx 500m", got)
	}
	r := c.kubectl("patch", "pod", "web", "-n", "rz", "--subresource", "resize", "--type", "merge",
		"-p", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"2"}}}]}}`)
	want := `Error from server (Forbidden): pods "web" is forbidden: exceeded quota: q, requested: requests.cpu=1500m, used: requests.cpu=500m, limited: requests.cpu=1` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("resize past hard: exit %d\nstderr %q\nwant   %q", r.code, r.stderr, want)
	}
	if got := used(); got != "500m 1" {
		t.Errorf("used after refused resize %q, want 500m 1", got)
	}
}
