package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRBACKubectl: roles and bindings made with kubectl create, then kubectl --as: the bound
// user is allowed what its role grants and refused the rest with kube-apiserver's text byte
// for byte; a user without the impersonate verb cannot --as anyone.
func TestRBACKubectl(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("bob-token,bob,1002\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := start(t, "--token-auth-file", csv)
	c.must("create", "namespace", "team-a")
	c.must("create", "namespace", "team-b")
	c.must("create", "quota", "compute", "-n", "team-a", "--hard=pods=2")
	// Discovery for every authenticated user (as upstream's system:discovery grants).
	c.must("create", "clusterrole", "e2e-discovery", "--verb=get", "--non-resource-url=/api", "--non-resource-url=/api/*", "--non-resource-url=/apis", "--non-resource-url=/apis/*")
	c.must("create", "clusterrolebinding", "e2e-discovery", "--clusterrole=e2e-discovery", "--group=system:authenticated")
	c.must("create", "role", "tenant", "-n", "team-a", "--verb=get,list,create,delete", "--resource=pods")
	c.must("create", "role", "quota-reader", "-n", "team-a", "--verb=get,list", "--resource=resourcequotas")
	c.must("create", "rolebinding", "alice-tenant", "-n", "team-a", "--role=tenant", "--user=alice")
	c.must("create", "rolebinding", "alice-quota", "-n", "team-a", "--role=quota-reader", "--user=alice")

	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"get", "pods", "-n", "team-a", "--as", "alice"}, 0, "", "No resources found in team-a namespace.\n"},
		{[]string{"get", "quota", "-n", "team-a", "--as", "alice", "-o", "name"}, 0, "resourcequota/compute\n", ""},
		{[]string{"run", "p1", "--image=busybox", "-n", "team-a", "--as", "alice"}, 0, "pod/p1 created\n", ""},
		{[]string{"run", "p2", "--image=busybox", "-n", "team-a", "--as", "alice"}, 0, "pod/p2 created\n", ""},
		{[]string{"run", "p3", "--image=busybox", "-n", "team-a", "--as", "alice"}, 1, "",
			"Error from server (Forbidden): pods \"p3\" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2\n"},
		{[]string{"get", "pods", "-n", "team-b", "--as", "alice"}, 1, "",
			"Error from server (Forbidden): pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"team-b\"\n"},
		{[]string{"get", "pods", "-A", "--as", "alice"}, 1, "",
			"Error from server (Forbidden): pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" at the cluster scope\n"},
		{[]string{"delete", "quota", "compute", "-n", "team-a", "--as", "alice"}, 1, "",
			"Error from server (Forbidden): resourcequotas \"compute\" is forbidden: User \"alice\" cannot delete resource \"resourcequotas\" in API group \"\" in the namespace \"team-a\"\n"},
		{[]string{"get", "secrets", "-n", "team-a", "--as", "alice", "--as-group", "team-a"}, 1, "",
			"Error from server (Forbidden): secrets is forbidden: User \"alice\" cannot list resource \"secrets\" in API group \"\" in the namespace \"team-a\"\n"},
		{[]string{"create", "clusterrolebinding", "alice-root", "--clusterrole=cluster-admin", "--user=alice", "--as", "alice"}, 1, "",
			"error: failed to create clusterrolebinding: clusterrolebindings.rbac.authorization.k8s.io is forbidden: User \"alice\" cannot create resource \"clusterrolebindings\" in API group \"rbac.authorization.k8s.io\" at the cluster scope\n"},
	} {
		r := c.kubectl(tc.args...)
		if r.code != tc.code || r.stdout != tc.stdout || r.stderr != tc.stderr {
			t.Errorf("kubectl %s: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
	// bob may not impersonate.
	r := c.kubectl("get", "pods", "-n", "team-a", "--token", "bob-token", "--as", "alice")
	if r.code == 0 || !strings.Contains(r.stderr, `users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`) {
		t.Errorf("bob as alice: exit %d %q", r.code, r.stderr)
	}
}
