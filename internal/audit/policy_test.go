package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/auth"
)

const testPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  users: ["system:kube-proxy"]
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["resourcequotas", "resourcequotas/status"]
- level: Request
  userGroups: ["team-a"]
  verbs: ["create", "update"]
  namespaces: ["team-a"]
  omitStages: ["ResponseStarted"]
- level: Metadata
  resources:
  - group: "rbac.authorization.k8s.io"
    resources: ["roles"]
    resourceNames: ["admin"]
  - group: "apps"
    resources: ["*/scale"]
  - group: "batch"
    resources: ["jobs/*"]
- level: Request
  resources:
  - group: "coordination.k8s.io"
- level: None
  namespaces: [""]
- level: Metadata
  omitManagedFields: false
`

func TestPolicyDecide(t *testing.T) {
	p, err := ParsePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	p.OmitManagedFields = true
	c := NewChecker(p)
	alice := auth.User{Name: "alice", Groups: []string{"team-a", auth.AllAuthenticated}}
	bob := auth.User{Name: "bob", Groups: []string{auth.AllAuthenticated}}
	res := func(u auth.User, verb, ns, group, resource, sub, name string) auth.Attributes {
		return auth.Attributes{User: u, Verb: verb, ResourceRequest: true, Namespace: ns, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
	}
	nonRes := func(u auth.User, verb, path string) auth.Attributes {
		return auth.Attributes{User: u, Verb: verb, Path: path}
	}
	tests := []struct {
		name  string
		attrs auth.Attributes
		want  Level
		omit  []Stage
	}{
		{"user selector", res(auth.User{Name: "system:kube-proxy"}, "get", "team-a", "", "resourcequotas", "", "q"), LevelNone, []Stage{StageRequestReceived}},
		{"non-resource prefix wildcard", nonRes(bob, "get", "/healthz/etcd"), LevelNone, []Stage{StageRequestReceived}},
		{"non-resource exact", nonRes(bob, "get", "/version"), LevelNone, []Stage{StageRequestReceived}},
		{"non-resource rule skips resource requests", res(bob, "get", "team-b", "", "version", "", ""), LevelMetadata, []Stage{StageRequestReceived}},
		{"resource", res(bob, "update", "team-a", "", "resourcequotas", "", "q"), LevelRequestResponse, []Stage{StageRequestReceived}},
		{"resource/subresource", res(bob, "update", "team-a", "", "resourcequotas", "status", "q"), LevelRequestResponse, []Stage{StageRequestReceived}},
		{"group, verb and namespace", res(alice, "create", "team-a", "", "pods", "", ""), LevelRequest, []Stage{StageRequestReceived, StageResponseStarted}},
		{"verb mismatch falls through", res(alice, "delete", "team-a", "", "pods", "", "p"), LevelMetadata, []Stage{StageRequestReceived}},
		{"namespace mismatch falls through", res(alice, "create", "team-b", "", "pods", "", ""), LevelMetadata, []Stage{StageRequestReceived}},
		{"group mismatch falls through", res(bob, "create", "team-a", "", "pods", "", ""), LevelMetadata, []Stage{StageRequestReceived}},
		{"resourceNames match", res(bob, "get", "team-a", "rbac.authorization.k8s.io", "roles", "", "admin"), LevelMetadata, []Stage{StageRequestReceived}},
		{"*/subresource", res(bob, "update", "team-a", "apps", "deployments", "scale", "d"), LevelMetadata, []Stage{StageRequestReceived}},
		{"*/subresource needs the subresource", res(bob, "update", "team-a", "apps", "deployments", "", "d"), LevelMetadata, []Stage{StageRequestReceived}},
		{"resource/*", res(bob, "get", "team-a", "batch", "jobs", "status", "j"), LevelMetadata, []Stage{StageRequestReceived}},
		{"group without resources", res(bob, "get", "team-a", "coordination.k8s.io", "leases", "", "l"), LevelRequest, []Stage{StageRequestReceived}},
		{"cluster-scoped is namespace \"\"", res(bob, "get", "", "rbac.authorization.k8s.io", "clusterroles", "", "view"), LevelNone, []Stage{StageRequestReceived}},
		{"resourceNames mismatch", res(bob, "get", "", "rbac.authorization.k8s.io", "roles", "", "edit"), LevelNone, []Stage{StageRequestReceived}},
		{"catch-all", nonRes(bob, "get", "/metrics"), LevelMetadata, []Stage{StageRequestReceived}},
		{"no user matches no user or group rule", res(auth.User{}, "create", "team-a", "", "pods", "", ""), LevelMetadata, []Stage{StageRequestReceived}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := c.Decide(tt.attrs)
			if d.Level != tt.want {
				t.Errorf("level = %s, want %s", d.Level, tt.want)
			}
			if !sameStages(d.OmitStages, tt.omit) {
				t.Errorf("omitStages = %v, want %v", d.OmitStages, tt.omit)
			}
		})
	}
	if d := c.Decide(res(bob, "update", "team-a", "", "resourcequotas", "", "q")); !d.OmitManagedFields {
		t.Errorf("policy omitManagedFields not inherited: %+v", d)
	}
	if d := c.Decide(nonRes(bob, "get", "/metrics")); d.OmitManagedFields {
		t.Errorf("rule omitManagedFields: false not applied: %+v", d)
	}
}

func TestPolicyNoRuleMatchesIsNone(t *testing.T) {
	p, err := ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Panic]\nrules:\n- level: Metadata\n  verbs: [delete]\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := NewChecker(p).Decide(auth.Attributes{Verb: "get", Path: "/api"})
	if d.Level != LevelNone || !sameStages(d.OmitStages, []Stage{StagePanic}) {
		t.Fatalf("decision = %+v", d)
	}
}

func sameStages(a, b []Stage) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestParsePolicyErrors(t *testing.T) {
	const head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
	tests := []struct {
		name, doc, want string
	}{
		{"not yaml", "rules: [", "failed decoding: "},
		{"no apiVersion", "kind: Policy\nrules:\n- level: None\n", "failed decoding: Object 'Kind' or 'apiVersion' is missing"},
		{"old version", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n", `failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"`},
		{"no rules", head, "loaded illegal policy with 0 rules"},
		{"missing level", head + "rules:\n- verbs: [get]\n", "rules[0].level: Required value"},
		{"bad level", head + "rules:\n- level: Everything\n", `rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`},
		{"bad stage", head + "rules:\n- level: None\n  omitStages: [Done]\n", `rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic`},
		{"bad policy stage", head + "omitStages: [Done]\nrules:\n- level: None\n", `omitStages[0]: Invalid value: "Done"`},
		{"url without slash", head + "rules:\n- level: None\n  nonResourceURLs: [healthz]\n", `rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character`},
		{"url inner wildcard", head + "rules:\n- level: None\n  nonResourceURLs: [/a*/b]\n", `non-resource URL wildcards '*' must be the final character of the rule`},
		{"urls and resources", head + "rules:\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n", "rules cannot apply to both regular resources and non-resource URLs"},
		{"bad group", head + "rules:\n- level: None\n  resources:\n  - group: rbac.authorization.k8s.io/v1\n", `rules[0].resources.group: Invalid value: "rbac.authorization.k8s.io/v1"`},
		{"names without resources", head + "rules:\n- level: None\n  resources:\n  - resourceNames: [a]\n", "using resourceNames requires at least one resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadPolicyFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPolicyFile(bad)
	if err == nil || err.Error() != "loaded illegal policy with 0 rules: from file "+bad {
		t.Fatalf("error = %v", err)
	}
	if _, err := LoadPolicyFile(filepath.Join(dir, "missing")); err == nil || !strings.HasPrefix(err.Error(), "failed to read file path") {
		t.Fatalf("error = %v", err)
	}
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadPolicyFile(good); err != nil || len(p.Rules) != 1 {
		t.Fatalf("policy = %+v, %v", p, err)
	}
}
