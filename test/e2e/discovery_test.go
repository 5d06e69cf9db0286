package e2e

import (
	"strings"
	"testing"
)

const sprocketCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sprockets.example.com
spec:
  group: example.com
  names: {plural: sprockets, singular: sprocket, kind: Sprocket, shortNames: [spk], categories: [all]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
`

// TestDiscoveryKubectl checks that kubectl learns every resource from aggregated discovery
// (GET /api and /apis only, no per-group-version request), and that a CRD is usable by
// kubectl right after its creation.
func TestDiscoveryKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	cache := t.TempDir()
	r := c.kubectl("api-resources", "--cache-dir", cache, "-v=6")
	if r.code != 0 {
		t.Fatalf("api-resources: %d %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "/apis?timeout") {
		t.Errorf("kubectl -v=6 logged no GET /apis: %s", r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "GET https://") && (strings.Contains(line, "/apis/") || strings.Contains(line, "/api/v1")) {
			t.Errorf("kubectl fetched a group-version document; aggregated discovery should have had it all: %s", line)
		}
	}
	for _, want := range []string{
		"pods  po  v1  true  Pod",
		"deployments  deploy  apps/v1  true  Deployment",
		"namespaces  ns  v1  false  Namespace",
		"selfsubjectaccessreviews  authorization.k8s.io/v1  false  SelfSubjectAccessReview",
	} {
		if !strings.Contains(paddingRE.ReplaceAllString(r.stdout, "  "), want+"\n") {
			t.Errorf("api-resources lacks %q:\n%s", want, r.stdout)
		}
	}
	golden(t, "discovery-api-resources-rbac.txt", c.must("api-resources", "--cache-dir", cache, "--api-group=rbac.authorization.k8s.io", "-o", "wide"))

	// A CRD is usable right away, through the cache kubectl already holds.
	c.expectOut(sprocketCRD, "customresourcedefinition.apiextensions.k8s.io/sprockets.example.com created\n", "create", "--cache-dir", cache, "-f", "-")
	r = c.kubectl("get", "sprockets", "--cache-dir", cache, "-A")
	if r.code != 0 || r.stdout != "" || r.stderr != "No resources found\n" {
		t.Errorf("get sprockets right after creating the CRD: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	c.expectOut("apiVersion: example.com/v1\nkind: Sprocket\nmetadata: {name: s1, namespace: default}\n", "sprocket.example.com/s1 created\n", "create", "--cache-dir", cache, "-f", "-")
	c.expectOut("", "sprocket.example.com/s1\n", "get", "spk", "--cache-dir", cache, "-o", "name")
	r = c.kubectl("api-resources", "--cache-dir", cache, "--api-group=example.com", "--no-headers")
	if got := paddingRE.ReplaceAllString(r.stdout, "  "); r.code != 0 || got != "sprockets  spk  example.com/v1  true  Sprocket\n" {
		t.Errorf("api-resources of example.com: %d %q %s", r.code, got, r.stderr)
	}
}

// TestExplainEnum checks that kubectl explain prints a field's enum values from the
// server's OpenAPI, as it does against kube-apiserver.
func TestExplainEnum(t *testing.T) {
	t.Parallel()
	c := start(t)
	golden(t, "explain-pod-restartpolicy.txt", c.must("explain", "pod.spec.restartPolicy"))
	out := c.must("explain", "pod.spec.containers.ports.protocol")
	for _, want := range []string{"ENUM:\n    SCTP\n    TCP\n    UDP\n", "Possible enum values:\n     - `\"SCTP\"` is the SCTP protocol."} {
		if !strings.Contains(out, want) {
			t.Errorf("explain pod.spec.containers.ports.protocol lacks %q:\n%s", want, out)
		}
	}
}
