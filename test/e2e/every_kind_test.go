package e2e

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEveryKindManifest: one manifest with one object of every built-in kind the server
// lists as creatable (reviews and Bindings aside, which are asked, not stored) applies with the real
// kubectl, applies again unchanged, and is deleted; a kind served but missing from the
// manifest fails the test, so the manifest keeps up with what is served. `kubectl get all
// -A` shows the `kubernetes` Service, as on any cluster.
func TestEveryKindManifest(t *testing.T) {
	t.Parallel()
	c := start(t)
	manifest, err := os.ReadFile(filepath.Join("testdata", "every-kind.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(manifest) + "---\n" + csrObject(t) + "---\n" + pcrObject(t)
	// 1. Every creatable built-in kind the server lists is in the manifest.
	have := map[string]bool{}
	for _, d := range strings.Split(doc, "\n---\n") {
		var tm struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(d), &tm); err != nil {
			t.Fatalf("manifest document: %v\n%s", err, d)
		}
		if tm.Kind != "" {
			have[groupOf(tm.APIVersion)+"/"+tm.Kind] = true
		}
	}
	var missing []string
	for _, line := range strings.Split(strings.TrimSpace(c.must("api-resources", "--verbs=create", "--no-headers")), "\n") {
		f := strings.Fields(line)
		// NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
		kind, apiVersion := f[len(f)-1], f[len(f)-3]
		if strings.HasSuffix(kind, "Review") || kind == "Binding" {
			continue // asked, never stored: nothing to apply
		}
		if !have[groupOf(apiVersion)+"/"+kind] {
			missing = append(missing, apiVersion+" "+kind)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("served kinds without an object in testdata/every-kind.yaml: %s", strings.Join(missing, ", "))
	}
	// 2. The manifest applies, and applies again unchanged.
	r := c.kubectlIn(doc, "apply", "-f", "-")
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, " created\n"); n != len(have) {
		t.Errorf("apply created %d objects, want %d:\n%s", n, len(have), r.stdout)
	}
	r = c.kubectlIn(doc, "apply", "-f", "-")
	if r.code != 0 || strings.Contains(r.stdout, " created\n") {
		t.Fatalf("second apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// 3. kubectl get all -A shows the cluster's own Service beside the manifest's objects.
	all := c.must("get", "all", "-A")
	for _, want := range []string{"service/kubernetes", "service/web", "deployment.apps/web", "statefulset.apps/db", "cronjob.batch/nightly", "horizontalpodautoscaler.autoscaling/web"} {
		if !strings.Contains(all, want) {
			t.Errorf("kubectl get all -A lacks %s:\n%s", want, all)
		}
	}
	// 4. The count/ingresses quota of the manifest counts its Ingress.
	if used := c.must("get", "quota", "everything", "-n", "every", "-o", "jsonpath={.status.used.count/ingresses\\.networking\\.k8s\\.io}"); used != "1" {
		t.Errorf("count/ingresses used: %q", used)
	}
	// 5. Everything deletes.
	if r := c.kubectlIn(doc, "delete", "-f", "-", "--wait=false", "--ignore-not-found"); r.code != 0 {
		t.Fatalf("delete: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// groupOf is an apiVersion's group ("" for the core group).
func groupOf(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// csrObject is a CertificateSigningRequest for a fresh key (its request must parse).
func csrObject(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "every", Organization: []string{"every"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: every}
spec:
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
  request: ` + req + "\n"
}

// pcrObject is a PodCertificateRequest with a kubelet's stub request for a fresh key (it
// must parse, its signature verify).
func pcrObject(t *testing.T) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return `apiVersion: certificates.k8s.io/v1
kind: PodCertificateRequest
metadata: {name: every, namespace: every}
spec:
  signerName: example.com/every
  podName: web
  podUID: 00000000-0000-0000-0000-000000000001
  serviceAccountName: builder
  serviceAccountUID: 00000000-0000-0000-0000-000000000002
  nodeName: node-1
  nodeUID: 00000000-0000-0000-0000-000000000003
  stubPKCS10Request: ` + base64.StdEncoding.EncodeToString(der) + "\n"
}
