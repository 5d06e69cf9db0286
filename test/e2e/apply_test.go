package e2e

import (
	"strings"
	"testing"
)

const appliedQuota = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: team
  namespace: default
spec:
  hard:
    pods: "5"
    requests.cpu: "2"
`

// TestServerSideApplyQuota drives kubectl apply --server-side on a quota as a platform team
// does: dropping a limit from the configuration removes it, another field manager changing
// an owned limit gets upstream's conflict, and --force-conflicts takes it over.
func TestServerSideApplyQuota(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.expectOut(appliedQuota, "resourcequota/team serverside-applied\n", "apply", "--server-side", "-f", "-")
	dropped := strings.Replace(appliedQuota, "    requests.cpu: \"2\"\n", "", 1)
	c.expectOut(dropped, "resourcequota/team serverside-applied\n", "apply", "--server-side", "-f", "-")
	if got := c.must("get", "quota", "team", "-o", "jsonpath={.spec.hard}"); got != `{"pods":"5"}` {
		t.Fatalf("hard after dropping requests.cpu: %s", got)
	}
	raised := strings.Replace(dropped, `pods: "5"`, `pods: "6"`, 1)
	r := c.kubectlIn(raised, "apply", "--server-side", "--field-manager", "tenant", "-f", "-")
	if want := `error: Apply failed with 1 conflict: conflict with "kubectl": .spec.hard.pods`; r.code == 0 || !strings.HasPrefix(r.stderr, want+"\n") {
		t.Fatalf("conflicting apply: exit %d, stderr %q, want it to start with %q", r.code, r.stderr, want)
	}
	c.expectOut(raised, "resourcequota/team serverside-applied\n", "apply", "--server-side", "--field-manager", "tenant", "--force-conflicts", "-f", "-")
	if got := c.must("get", "quota", "team", "-o", "jsonpath={.spec.hard.pods}"); got != "6" {
		t.Fatalf("pods after the forced apply: %s, want 6", got)
	}
}
