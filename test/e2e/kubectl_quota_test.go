package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pluginFixture and pluginDeploy are the plugin's own test objects, shared with its
// in-process goldens (cmd/kubectl-quota/testdata).
const (
	pluginFixture = "../../cmd/kubectl-quota/testdata/fixture.yaml"
	pluginDeploy  = "../../cmd/kubectl-quota/testdata/deploy.yaml"
)

// buildPlugin builds kubectl-quota into a fresh directory and returns it: the directory
// to put on PATH, as a user installing the plugin does.
func buildPlugin(t *testing.T) string {
	t.Helper()
	// go test's result cache keys on the files the test reads: the plugin's sources and
	// the fixtures kubectl applies (the packages it imports are keyed by deps_test.go).
	entries, err := os.ReadDir("../../cmd/kubectl-quota")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if _, err := os.ReadFile(filepath.Join("../../cmd/kubectl-quota", e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range []string{pluginFixture, pluginDeploy} {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-quota"), "github.com/quotad/quotad/cmd/kubectl-quota")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building kubectl-quota: %v", err)
	}
	return dir
}

// kubectlWithPath runs the real kubectl against the cluster with dir first on PATH, so
// kubectl finds the plugin there.
func (c *cluster) kubectlWithPath(dir string, args ...string) result {
	c.t.Helper()
	return c.kubectlRun(dir, "", args...)
}

// TestKubectlQuota installs kubectl-quota on PATH and runs the real `kubectl quota top`,
// `kubectl quota explain` and `kubectl quota fit` against the quotad binary.
func TestKubectlQuota(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	dir := buildPlugin(t)
	c := start(t)
	c.must("apply", "-f", pluginFixture)
	// Lowering hard below usage is allowed: top then shows a quota over 100%.
	c.must("patch", "resourcequota", "best-effort", "-n", "team-a", "--type", "merge", "-p", `{"spec":{"hard":{"pods":"1"}}}`)

	plugin := func(wantCode int, args ...string) string {
		t.Helper()
		r := c.kubectlWithPath(dir, append([]string{"quota"}, args...)...)
		if r.code != wantCode || r.stderr != "" {
			t.Fatalf("kubectl quota %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
		}
		return r.stdout
	}

	if r := c.kubectlWithPath(dir, "plugin", "list"); !strings.Contains(r.stdout, filepath.Join(dir, "kubectl-quota")) {
		t.Errorf("kubectl plugin list does not list the plugin: %q %q", r.stdout, r.stderr)
	}

	top := "$ kubectl quota top -n team-a\n" + plugin(0, "top", "-n", "team-a") +
		"\n$ kubectl quota top -A\n" + plugin(0, "top", "-A")
	golden(t, "kubectl_quota_top.golden", top)

	explain := "$ kubectl quota explain pod/web -n team-a\n" + plugin(0, "explain", "pod/web", "-n", "team-a") +
		"\n$ kubectl quota explain pod batch -n team-a\n" + plugin(0, "explain", "pod", "batch", "-n", "team-a")
	golden(t, "kubectl_quota_explain.golden", explain)

	// fit needs quota.quotad.io/v1 QuotaReview: until the server serves it, fit says so;
	// once it does, its answers are pinned and its exit code gates.
	if !strings.Contains(c.must("api-versions"), "quota.quotad.io/v1\n") {
		r := c.kubectlWithPath(dir, "quota", "fit", "-f", pluginDeploy)
		want := "error: the server does not serve quota.quotad.io/v1 QuotaReview: kubectl quota fit needs quotad's quota review API (top and explain work against any server)\n"
		if r.code != 1 || r.stdout != "" || r.stderr != want {
			t.Errorf("kubectl quota fit without QuotaReview: exit %d\nstdout: %q\nstderr: %q", r.code, r.stdout, r.stderr)
		}
		t.Log("the server does not serve quota.quotad.io/v1: fit's goldens are not checked")
		return
	}
	fit := "$ kubectl quota fit -f deploy.yaml\n" + plugin(0, "fit", "-f", pluginDeploy) +
		"\n$ kubectl quota fit -f deploy.yaml --replicas 10\n" + plugin(1, "fit", "-f", pluginDeploy, "--replicas", "10")
	if !strings.Contains(fit, "\nfits\n") || !strings.Contains(fit, "only 2 of 10 replicas fit; refused by quota compute: ") {
		t.Errorf("kubectl quota fit verdicts:\n%s", fit)
	}
	golden(t, "kubectl_quota_fit.golden", fit)
	if r := c.kubectl("get", "deployment", "api", "-n", "team-a"); r.code == 0 {
		t.Errorf("kubectl quota fit created the deployment")
	}
}
