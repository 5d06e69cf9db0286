package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPromtool checks the assets with Prometheus's own parser and rule evaluator when
// promtool is installed (Debian's prometheus package has it): the alert rules pass
// `promtool check rules` and their unit tests (prometheus/quotad-alerts_test.yaml), and
// every dashboard expression, its Grafana variables replaced by values, parses as a
// recording rule.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed: .ci/run installs Debian's prometheus package")
		}
		t.Skip("promtool is not installed")
	}
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("prometheus", "check", "rules", "quotad-alerts.yaml")
	run("prometheus", "test", "rules", "quotad-alerts_test.yaml")

	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "6h", "$job", ".*", "$namespace", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range dashboardExpressions(t) {
		q, _ := json.Marshal(vars.Replace(e.expr))
		b.WriteString("      - record: dashboard:expr" + strconv.Itoa(i) + "\n        expr: " + string(q) + "\n")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard-rules.yaml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	run(dir, "check", "rules", "dashboard-rules.yaml")
}
