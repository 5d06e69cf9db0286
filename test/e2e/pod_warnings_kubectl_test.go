package e2e

import (
	"strings"
	"testing"
)

const warnedDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: legacy
  namespace: pw
spec:
  replicas: 0
  selector:
    matchLabels: {app: legacy}
  template:
    metadata:
      labels: {app: legacy}
    spec:
      nodeSelector: {beta.kubernetes.io/os: linux}
      containers:
      - name: app
        image: nginx
        resources:
          requests: {memory: 1500m}
`

// TestKubectlPodWarnings: kubectl prints upstream's warnings for a pod it creates and for a
// workload's pod template (on create, and on an update of the template only).
func TestKubectlPodWarnings(t *testing.T) {
	requireKubectl(t)
	c := start(t)
	c.expectOut("", "namespace/pw created\n", "create", "namespace", "pw")
	c.waitKubectl(func(s string) bool { return strings.Contains(s, "default") }, "get", "serviceaccounts", "-n", "pw", "-o", "name")
	r := c.kubectl("run", "old", "--image=nginx", "-n", "pw", `--overrides={"spec":{"nodeSelector":{"beta.kubernetes.io/arch":"amd64"}}}`)
	if r.code != 0 || r.stdout != "pod/old created\n" || r.stderr != "Warning: spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use \"kubernetes.io/arch\" instead\n" {
		t.Errorf("kubectl run: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = c.kubectlIn(warnedDeployment, "create", "-f", "-")
	want := "Warning: spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead\n" +
		"Warning: spec.template.spec.containers[0].resources.requests[memory]: fractional byte value \"1500m\" is invalid, must be an integer\n"
	if r.code != 0 || r.stdout != "deployment.apps/legacy created\n" || r.stderr != want {
		t.Errorf("kubectl create deployment: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	// A label change leaves the template alone: no warning; a template change warns.
	if r := c.kubectl("label", "deployment", "legacy", "-n", "pw", "tier=web"); r.code != 0 || r.stderr != "" {
		t.Errorf("kubectl label: exit %d stderr %q", r.code, r.stderr)
	}
	if r := c.kubectl("set", "env", "deployment/legacy", "-n", "pw", "A=1"); r.code != 0 || r.stderr != want {
		t.Errorf("kubectl set env: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}
