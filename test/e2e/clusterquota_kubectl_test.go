package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var describeRVRE = regexp.MustCompile(`(Resource Version:\s+)\d+`)

// TestClusterQuotaKubectl: an OpenShift-style ClusterResourceQuota manifest applies
// unchanged; pods in two selected namespaces share it; the refusal names it with upstream's
// text; get and describe show it; a tenant bound to admin in its namespace reads the applied
// view there but not the cluster quota.
func TestClusterQuotaKubectl(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("alice-token,alice,1001,team-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := start(t, "--token-auth-file", csv)
	for _, ns := range []string{"a1", "a2"} {
		c.must("create", "namespace", ns)
		c.must("label", "namespace", ns, "team=a")
	}
	c.expectOut("", "clusterresourcequota.quota.openshift.io/team-a created\n", "apply", "-f", "testdata/clusterquota.yaml")
	c.must("run", "one", "--image=nginx", "--overrides", `{"spec":{"containers":[{"name":"one","image":"nginx","resources":{"requests":{"cpu":"200m"}}}]}}`, "-n", "a1")
	c.must("run", "two", "--image=nginx", "--overrides", `{"spec":{"containers":[{"name":"two","image":"nginx","resources":{"requests":{"cpu":"300m"}}}]}}`, "-n", "a2")
	r := c.kubectl("run", "big", "--image=nginx", "--overrides", `{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"requests":{"cpu":"600m"}}}]}}`, "-n", "a2")
	want := `Error from server (Forbidden): pods "big" is forbidden: exceeded quota: team-a, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("over the cluster quota: exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}
	// Applying the same manifest again changes nothing.
	c.expectOut("", "clusterresourcequota.quota.openshift.io/team-a unchanged\n", "apply", "-f", "testdata/clusterquota.yaml")

	out := "$ kubectl get clusterresourcequota\n" + c.must("get", "clusterresourcequota") +
		"\n$ kubectl get clusterquota team-a -o jsonpath={.status.total.used}\n" + c.must("get", "clusterquota", "team-a", "-o", "jsonpath={.status.total.used}") +
		"\n$ kubectl get appliedclusterresourcequotas -n a2\n" + c.must("get", "appliedclusterresourcequotas", "-n", "a2")
	golden(t, "clusterquota_get.golden", normalizeTable(out))
	// kubectl describes a kind it does not know with its generic describer: every field,
	// status.total and each namespace's share included.
	describe := uidRE.ReplaceAllString(timestampRE.ReplaceAllString(c.must("describe", "clusterresourcequota", "team-a"), "<time>"), "<uid>")
	golden(t, "clusterquota_describe.golden", describeRVRE.ReplaceAllString(describe, "${1}<rv>"))

	// A tenant: admin in a1 reads the applied view, never the cluster quota.
	c.must("create", "rolebinding", "team-a-admin", "--clusterrole=admin", "--group=team-a", "-n", "a1")
	alice := []string{"--token", "alice-token"}
	got := c.must(append([]string{"get", "appliedclusterresourcequotas", "-n", "a1", "-o", "name"}, alice...)...)
	if got != "appliedclusterresourcequota.quota.openshift.io/team-a\n" {
		t.Errorf("tenant's applied view: %q", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "clusterresourcequota", "team-a"},
			`Error from server (Forbidden): clusterresourcequotas.quota.openshift.io "team-a" is forbidden: User "alice" cannot get resource "clusterresourcequotas" in API group "quota.openshift.io" at the cluster scope` + "\n"},
		{[]string{"delete", "clusterresourcequota", "team-a"},
			`Error from server (Forbidden): clusterresourcequotas.quota.openshift.io "team-a" is forbidden: User "alice" cannot delete resource "clusterresourcequotas" in API group "quota.openshift.io" at the cluster scope` + "\n"},
		{[]string{"get", "appliedclusterresourcequotas", "-n", "a2"},
			`Error from server (Forbidden): appliedclusterresourcequotas.quota.openshift.io is forbidden: User "alice" cannot list resource "appliedclusterresourcequotas" in API group "quota.openshift.io" in the namespace "a2"` + "\n"},
	} {
		r := c.kubectl(append(tc.args, alice...)...)
		if r.code == 0 || r.stderr != tc.want {
			t.Errorf("kubectl %s: exit %d\n got %q\nwant %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}
