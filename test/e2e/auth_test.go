package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenAuthFile: users of a kube-style token CSV are authenticated (and then authorized
// by RBAC: a 403 until bound); unknown tokens get 401; a malformed file stops startup with a
// clear error.
func TestTokenAuthFile(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("alice-token,alice,1001,\"dev,ops\"\nbob-token,bob,1002\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := start(t, "--token-auth-file", csv)
	// Authenticated but not yet authorized: RBAC's 403, not a 401.
	r := c.kubectl("get", "namespaces", "default", "--token", "alice-token", "-o", "name")
	if r.code == 0 || !strings.Contains(r.stderr, "Error from server (Forbidden)") {
		t.Errorf("alice unbound: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := c.kubectlIn(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: e2e-namespace-reader
rules:
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get"]
- nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-namespace-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: e2e-namespace-reader
subjects:
- kind: User
  apiGroup: rbac.authorization.k8s.io
  name: alice
- kind: Group
  apiGroup: rbac.authorization.k8s.io
  name: system:authenticated
`, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("binding: exit %d %q", r.code, r.stderr)
	}
	for _, tok := range []string{"alice-token", "bob-token"} {
		r := c.kubectl("get", "namespaces", "default", "--token", tok, "-o", "name")
		if r.code != 0 || r.stdout != "namespace/default\n" {
			t.Errorf("token %s: exit %d %q %q", tok, r.code, r.stdout, r.stderr)
		}
	}
	r = c.kubectl("get", "pods", "-n", "default", "--token", "alice-token")
	if want := "Error from server (Forbidden): pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"\n"; r.code == 0 || r.stderr != want {
		t.Errorf("alice lists pods: exit %d %q, want %q", r.code, r.stderr, want)
	}
	r = c.kubectl("get", "namespaces", "--token", "nobody")
	if r.code == 0 || !strings.Contains(r.stderr, "error: You must be logged in to the server (Unauthorized)") {
		t.Errorf("unknown token: exit %d %q", r.code, r.stderr)
	}

	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("only-a-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "--data-dir", t.TempDir(), "--secure-port", "0", "--token-auth-file", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "token, user and uid are required") {
		t.Errorf("malformed token file: err %v, output %s", err, out)
	}
}

// TestBadAdmissionConfigStopsStartup: a bad --admission-control-config-file is a clear
// startup error naming the file.
func TestBadAdmissionConfigStopsStartup(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "admission.yaml")
	body := `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - matchContains: ["pods"]
`
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "--data-dir", t.TempDir(), "--secure-port", "0", "--admission-control-config-file", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "limitedResources[0].resource: Required value") || !strings.Contains(string(out), cfg) {
		t.Errorf("bad admission config: err %v, output %s", err, out)
	}
}
