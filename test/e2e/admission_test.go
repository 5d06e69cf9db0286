package e2e

import (
	"testing"
)

// TestLimitRangeQuotaAndNamespaceLifecycle drives LimitRanger, ResourceQuota and
// NamespaceLifecycle through kubectl.
func TestLimitRangeQuotaAndNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "lr")
	lr := `apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 250m, memory: 128Mi}
    max: {cpu: "1"}
    min: {memory: 64Mi}
    maxLimitRequestRatio: {cpu: "4"}
`
	if r := c.kubectlIn(lr, "create", "-n", "lr", "-f", "-"); r.code != 0 {
		t.Fatalf("limitrange: %s", r.stderr)
	}
	c.must("create", "quota", "compute", "--hard=requests.cpu=500m,limits.cpu=1,requests.memory=1Gi,limits.memory=1Gi", "-n", "lr")
	for _, n := range []string{"a", "b"} {
		if got := c.must("run", n, "--image=nginx", "-n", "lr"); got != "pod/"+n+" created\n" {
			t.Errorf("run %s printed %q", n, got)
		}
	}
	golden(t, "limitrange-quota-describe.txt", c.must("describe", "quota", "compute", "-n", "lr"))
	cases := []struct{ name, args, golden string }{
		{"full", "run c --image=nginx -n lr", "limitrange-quota-full.txt"},
		{"max", "run d --image=nginx -n lr --overrides={\"spec\":{\"containers\":[{\"name\":\"d\",\"image\":\"nginx\",\"resources\":{\"limits\":{\"cpu\":\"2\"}}}]}}", "limitrange-max.txt"},
		{"ratio", "run e --image=nginx -n lr --overrides={\"spec\":{\"containers\":[{\"name\":\"e\",\"image\":\"nginx\",\"resources\":{\"requests\":{\"cpu\":\"100m\"},\"limits\":{\"cpu\":\"1\"}}}]}}", "limitrange-ratio.txt"},
		{"missing namespace", "run f --image=nginx -n nowhere", "namespace-missing.txt"},
		{"protected namespace", "delete namespace kube-system", "namespace-protected.txt"},
	}
	for _, tc := range cases {
		r := c.kubectl(splitArgs(tc.args)...)
		if r.code == 0 {
			t.Errorf("%s: accepted: %s", tc.name, r.stdout)
		}
		golden(t, tc.golden, r.stderr)
	}
}

// splitArgs splits on spaces (the arguments above contain none inside).
func splitArgs(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		if r == ' ' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(r)
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// TestTerminatingNamespaceAndLimitRangeMinimum: creates in a Terminating namespace are
// refused with upstream's text; LimitRanger's minimum is enforced.
func TestTerminatingNamespaceAndLimitRangeMinimum(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "going")
	held := `apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  finalizers: ["example.com/hold"]
`
	if r := c.kubectlIn(held, "create", "-n", "going", "-f", "-"); r.code != 0 {
		t.Fatalf("configmap: %s", r.stderr)
	}
	c.must("delete", "namespace", "going", "--wait=false")
	c.waitFor("Terminating", "get", "namespace", "going")
	r := c.kubectl("run", "late", "--image=nginx", "-n", "going")
	if r.code == 0 {
		t.Fatal("create in a terminating namespace accepted")
	}
	golden(t, "namespace-terminating.txt", r.stderr)
	c.must("patch", "configmap", "held", "-n", "going", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)

	c.must("create", "namespace", "lrmin")
	lr := `apiVersion: v1
kind: LimitRange
metadata:
  name: min
spec:
  limits:
  - type: Container
    min: {memory: 64Mi}
`
	if r := c.kubectlIn(lr, "create", "-n", "lrmin", "-f", "-"); r.code != 0 {
		t.Fatalf("limitrange: %s", r.stderr)
	}
	r = c.kubectl("run", "tiny", "--image=nginx", "-n", "lrmin", `--overrides={"spec":{"containers":[{"name":"tiny","image":"nginx","resources":{"requests":{"memory":"32Mi"},"limits":{"memory":"32Mi"}}}]}}`)
	if r.code == 0 {
		t.Fatal("pod below the minimum accepted")
	}
	golden(t, "limitrange-min.txt", r.stderr)
}
