package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// TestAuthnKubectl drives authentication with the real kubectl: `kubectl create token`
// for the namespace's default ServiceAccount and `kubectl auth whoami` with it, as the
// admin and as alice through a kubeconfig minted by `quotad kubeconfig`; `kubectl auth
// can-i` yes and no and --list; anonymous requests get 401 but /version and the health
// paths.
func TestAuthnKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "team-a")
	// The namespace controller creates the default ServiceAccount.
	deadline := time.Now().Add(120 * time.Second)
	for c.kubectl("get", "serviceaccount", "default", "-n", "team-a").code != 0 {
		if time.Now().After(deadline) {
			t.Fatal("no default ServiceAccount in team-a")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// 1. kubectl create token, and whoami with it.
	tok := strings.TrimSpace(c.must("create", "token", "default", "-n", "team-a", "--duration", "20m"))
	if strings.Count(tok, ".") != 2 {
		t.Fatalf("create token printed %q", tok)
	}
	if got := c.must("auth", "whoami", "--token", tok, "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"); got != `system:serviceaccount:team-a:default ["system:serviceaccounts","system:serviceaccounts:team-a","system:authenticated"]` {
		t.Errorf("whoami with the token: %q", got)
	}
	if r := c.kubectl("create", "token", "default", "-n", "team-a", "--duration", "1m"); r.code == 0 || r.stderr != "error: failed to create token: TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes\n" {
		t.Errorf("create token --duration 1m: exit %d %q", r.code, r.stderr)
	}
	if r := c.kubectl("create", "token", "nobody", "-n", "team-a"); r.code == 0 || r.stderr != "error: failed to create token: serviceaccounts \"nobody\" not found\n" {
		t.Errorf("create token of a missing service account: exit %d %q", r.code, r.stderr)
	}

	// A token bound to a pod, for another audience too, ends with the pod.
	c.must("run", "p", "-n", "team-a", "--image", "busybox", "--overrides", `{"spec":{"serviceAccountName":"default"}}`)
	boundTok := strings.TrimSpace(c.must("create", "token", "default", "-n", "team-a", "--bound-object-kind", "Pod", "--bound-object-name", "p",
		"--audience", "https://kubernetes.default.svc.cluster.local", "--audience", "vault"))
	if got := c.must("auth", "whoami", "--token", boundTok, "-o", "jsonpath={.status.userInfo.extra.authentication\\.kubernetes\\.io/pod-name}"); got != `["p"]` {
		t.Errorf("whoami with the pod-bound token: %q", got)
	}
	c.must("delete", "pod", "p", "-n", "team-a", "--wait=false")
	for {
		r := c.kubectl("auth", "whoami", "--token", boundTok)
		if r.code != 0 {
			if r.stderr != "error: You must be logged in to the server (Unauthorized)\n" {
				t.Errorf("whoami with the token of a deleted pod: %q", r.stderr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the token of a deleted pod still works")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// 2. whoami as the admin.
	if got := c.must("auth", "whoami"); got != "ATTRIBUTE   VALUE\nUsername    admin\nGroups      [system:masters system:authenticated]\n" {
		t.Errorf("admin whoami:\n%s", got)
	}

	// 3. alice through a minted kubeconfig.
	cmd := exec.Command(binary, "kubeconfig", "--user", "alice", "--group", "team-a", "--namespace", "team-a", "--data-dir", c.dataDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quotad kubeconfig: %v %s", err, stderr.String())
	}
	alice := filepath.Join(t.TempDir(), "alice.kubeconfig")
	if err := os.WriteFile(alice, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := c.must("--kubeconfig", alice, "auth", "whoami"); got != "ATTRIBUTE   VALUE\nUsername    alice\nGroups      [team-a system:authenticated]\n" {
		t.Errorf("alice whoami:\n%s", got)
	}

	// 4. can-i: yes for the admin, no for alice (bound to nothing).
	if r := c.kubectl("auth", "can-i", "update", "resourcequotas", "-n", "team-a"); r.code != 0 || r.stdout != "yes\n" {
		t.Errorf("admin can-i: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := c.kubectl("--kubeconfig", alice, "auth", "can-i", "update", "resourcequotas/status"); r.code != 1 || r.stdout != "no\n" {
		t.Errorf("alice can-i: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := c.must("auth", "can-i", "--list", "-n", "team-a"); !strings.Contains(got, "*.*") || !strings.HasPrefix(got, "Resources") {
		t.Errorf("admin can-i --list:\n%s", got)
	}

	// 5. Anonymous requests.
	kc, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cluster.CertificateAuthorityData)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 30 * time.Second}
	for path, want := range map[string]int{"/api": 401, "/api/v1/namespaces/team-a/pods": 401, "/version": 200, "/healthz": 200, "/readyz": 200, "/livez": 200} {
		resp, err := hc.Get(cluster.Server + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("anonymous GET %s: %d %s", path, resp.StatusCode, body)
		}
		if want == 401 && string(body) != `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` {
			t.Errorf("anonymous GET %s: %s", path, body)
		}
	}
}
