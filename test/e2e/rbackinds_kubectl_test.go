package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const appliedRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: quota-reader
  namespace: team-a
rules:
- apiGroups: [""]
  resources: ["resourcequotas"]
  verbs: ["get", "list"]
`

// waitKubectl runs kubectl until its output satisfies ok or a generous deadline passes.
func (c *cluster) waitKubectl(ok func(string) bool, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		out := c.must(args...)
		if ok(out) {
			return out
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("kubectl %s: never satisfied; last output:\n%s", strings.Join(args, " "), out)
		case <-tick.C:
		}
	}
}

// TestRBACKindsKubectl: kubectl's RBAC generators, apply, get (-o wide) and describe work
// against quotad's RBAC kinds and default roles.
func TestRBACKindsKubectl(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	c := start(t)
	c.expectOut("", "namespace/team-a created\n", "create", "namespace", "team-a")
	c.expectOut("", "role.rbac.authorization.k8s.io/pod-reader created\n",
		"create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods,pods/status", "-n", "team-a")
	c.expectOut("", "rolebinding.rbac.authorization.k8s.io/alice-admin created\n",
		"create", "rolebinding", "alice-admin", "--clusterrole=admin", "--user=alice", "--group=team-a", "--serviceaccount=team-a:deployer", "-n", "team-a")
	c.expectOut("", "rolebinding.rbac.authorization.k8s.io/readers created\n",
		"create", "rolebinding", "readers", "--role=pod-reader", "--group=auditors", "-n", "team-a")
	c.expectOut("", "clusterrole.rbac.authorization.k8s.io/quota-viewer created\n",
		"create", "clusterrole", "quota-viewer", "--verb=get", "--resource=resourcequotas", "--non-resource-url=/metrics")
	c.expectOut("", "clusterrolebinding.rbac.authorization.k8s.io/auditors created\n",
		"create", "clusterrolebinding", "auditors", "--clusterrole=quota-viewer", "--group=auditors")
	c.expectOut(appliedRole, "role.rbac.authorization.k8s.io/quota-reader created\n", "apply", "-f", "-")
	c.expectOut(strings.Replace(appliedRole, `"list"]`, `"list", "watch"]`, 1), "role.rbac.authorization.k8s.io/quota-reader configured\n", "apply", "-f", "-")
	if got := c.must("get", "role", "quota-reader", "-n", "team-a", "-o", "jsonpath={.rules[0].verbs}"); got != `["get","list","watch"]` {
		t.Errorf("applied role verbs: %s", got)
	}

	// Server-side apply and kubectl auth reconcile.
	ssa := strings.Replace(strings.Replace(appliedRole, "quota-reader", "ssa-reader", 1), "resourcequotas", "limitranges", 1)
	c.expectOut(ssa, "role.rbac.authorization.k8s.io/ssa-reader serverside-applied\n", "apply", "--server-side", "-f", "-")
	reconciled := strings.Replace(strings.Replace(appliedRole, "quota-reader", "reconciled", 1), `"list"]`, `"list", "watch"]`, 1)
	c.expectOut(reconciled, "role.rbac.authorization.k8s.io/reconciled reconciled\n", "auth", "reconcile", "-f", "-")

	// roleRef is immutable, with upstream's text.
	r := c.kubectlIn(`{"roleRef":{"name":"edit"}}`, "patch", "rolebinding", "alice-admin", "-n", "team-a", "--type=merge", "-p", `{"roleRef":{"name":"edit"}}`)
	want := `The RoleBinding "alice-admin" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("roleRef patch: exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}

	tables := "$ kubectl get roles,rolebindings -n team-a -o wide\n" + c.must("get", "roles,rolebindings", "-n", "team-a", "-o", "wide") +
		"\n$ kubectl get clusterrolebinding auditors cluster-admin\n" + c.must("get", "clusterrolebinding", "auditors", "cluster-admin") +
		"\n$ kubectl get clusterroles admin edit view quota-viewer\n" + c.must("get", "clusterroles", "admin", "edit", "view", "quota-viewer")
	golden(t, "rbackinds_get.golden", timestampRE.ReplaceAllString(normalizeTable(tables), "<time>"))

	// view is aggregated from system:aggregate-to-view once the controller ran.
	c.waitKubectl(func(s string) bool { return strings.Contains(s, "resourcequotas") },
		"get", "clusterrole", "view", "-o", "jsonpath={.rules[*].resources}")
	golden(t, "rbackinds_describe_view.golden", c.must("describe", "clusterrole", "view"))
	golden(t, "rbackinds_describe_rolebinding.golden", c.must("describe", "rolebinding", "alice-admin", "-n", "team-a"))
	golden(t, "rbackinds_describe_role.golden", c.must("describe", "role", "pod-reader", "-n", "team-a"))

	c.expectOut("", "rolebinding.rbac.authorization.k8s.io \"readers\" deleted\n", "delete", "rolebinding", "readers", "-n", "team-a")
}

// TestRBACKindsEscalationKubectl: a tenant bound to admin in its namespace creates roles and
// bindings there with kubectl, and is refused what admin does not hold with upstream's text.
func TestRBACKindsEscalationKubectl(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("alice-token,alice,1001,team-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := start(t, "--token-auth-file", csv)
	c.must("create", "namespace", "team-a")
	c.must("create", "rolebinding", "team-a-admin", "--clusterrole=admin", "--group=team-a", "-n", "team-a")
	alice := []string{"--token", "alice-token", "-n", "team-a"}
	c.expectOut("", "role.rbac.authorization.k8s.io/pod-reader created\n", append([]string{"create", "role", "pod-reader", "--verb=get,list", "--resource=pods"}, alice...)...)
	c.expectOut("", "rolebinding.rbac.authorization.k8s.io/bob-view created\n", append([]string{"create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob"}, alice...)...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "role", "quota-writer", "--verb=update,patch", "--resource=resourcequotas"},
			`Error from server (Forbidden): roles.rbac.authorization.k8s.io "quota-writer" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["resourcequotas"], Verbs:["update" "patch"]}
`},
		{[]string{"create", "rolebinding", "root", "--clusterrole=cluster-admin", "--user=alice"},
			// kubectl words a failed create rolebinding itself.
			`error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "root" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["*"], Resources:["*"], Verbs:["*"]}
{NonResourceURLs:["*"], Verbs:["*"]}
`},
	} {
		r := c.kubectl(append(tc.args, alice...)...)
		if r.code == 0 || r.stderr != tc.want {
			t.Errorf("kubectl %s: exit %d\n got %q\nwant %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}
