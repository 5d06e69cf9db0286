package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

const (
	dashboardFile = "grafana/quotad-dashboard.json"
	rulesFile     = "prometheus/quotad-alerts.yaml"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	SchemaVersion int     `json:"schemaVersion"`
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasourceRef  `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource *datasourceRef `json:"datasource"`
	Targets    []struct {
		Expr       string         `json:"expr"`
		RefID      string         `json:"refId"`
		Datasource *datasourceRef `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// rules is the Prometheus rule file format (also a PrometheusRule's spec).
type rules struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Record      string            `json:"record"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// expression is one PromQL expression of an asset and where it is.
type expression struct{ where, expr string }

// dashboardExpressions checks the dashboard's shape and returns its PromQL expressions:
// every panel target's and every query variable's (label_values(<selector>, <label>) reads
// its selector).
func dashboardExpressions(t *testing.T) []expression {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.SchemaVersion < 39 || d.UID == "" || d.Title == "" {
		t.Errorf("%s: schemaVersion %d (want a current Grafana's, >= 39), uid %q, title %q", dashboardFile, d.SchemaVersion, d.UID, d.Title)
	}
	vars := map[string]string{}
	var out []expression
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type != "query" {
			continue
		}
		if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			t.Errorf("variable %s: datasource %+v, want the ${datasource} variable", v.Name, v.Datasource)
		}
		q := string(v.Query)
		var obj struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &obj); err == nil {
			q = obj.Query
		} else if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("variable %s: query %s: %v", v.Name, v.Query, err)
			continue
		}
		if sel, ok := strings.CutPrefix(q, "label_values("); ok {
			if i := strings.LastIndexByte(sel, ','); i >= 0 {
				q = sel[:i]
			}
		}
		out = append(out, expression{"variable " + v.Name, q})
	}
	if vars["datasource"] != "datasource" || vars["namespace"] != "query" {
		t.Errorf("%s: variables %v, want a datasource variable \"datasource\" and a query variable \"namespace\"", dashboardFile, vars)
	}
	ids := map[int]bool{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				ds := tg.Datasource
				if ds == nil {
					ds = p.Datasource
				}
				if ds == nil || ds.UID != "${datasource}" {
					t.Errorf("panel %q target %s: datasource %+v, want the ${datasource} variable", p.Title, tg.RefID, ds)
				}
				out = append(out, expression{"panel " + p.Title + " target " + tg.RefID, tg.Expr})
			}
		}
	}
	walk(d.Panels)
	return out
}

// ruleExpressions checks the rule file's shape and returns its expressions.
func ruleExpressions(t *testing.T) []expression {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rs rules
	if err := yaml.UnmarshalStrict(b, &rs); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	var out []expression
	alerts := map[string]bool{}
	for _, g := range rs.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("%s: group %q is unnamed or empty", rulesFile, g.Name)
		}
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("%s: rule %+v: want an alert with an expr", rulesFile, r)
				continue
			}
			if alerts[r.Alert] {
				t.Errorf("%s: alert %s defined twice", rulesFile, r.Alert)
			}
			alerts[r.Alert] = true
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" || r.Labels["severity"] == "" {
				t.Errorf("%s: alert %s lacks a summary, a description or a severity", rulesFile, r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: alert %s: for %q: %v", rulesFile, r.Alert, r.For, err)
				}
			}
			out = append(out, expression{"alert " + r.Alert, r.Expr})
		}
	}
	for _, want := range []string{"QuotaNearlyFull", "QuotaExceededInWarnMode", "QuotaDriftRepaired", "QuotaRefusalRateHigh", "QuotadPanics", "QuotadNoLeader", "QuotadRequestLatencyHigh"} {
		if !alerts[want] {
			t.Errorf("%s: no alert %s", rulesFile, want)
		}
	}
	return out
}

// TestAssetsNameExportedMetrics runs a real quotad (leader election on, the quota verifier
// every 100ms), makes it export every kind of metric with real requests (admitted and
// refused writes, a dry run, a list, a get, a server-side apply, a watch, a cluster quota,
// a drift the verifier repairs), then checks that every metric the dashboard and the
// alert rules name is among the samples of its /metrics.
func TestAssetsNameExportedMetrics(t *testing.T) {
	var exprs []expression
	exprs = append(exprs, dashboardExpressions(t)...)
	exprs = append(exprs, ruleExpressions(t)...)
	used := map[string][]string{}
	for _, e := range exprs {
		names := metricNames(e.expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", e.where, e.expr)
		}
		for _, n := range names {
			used[n] = append(used[n], e.where)
		}
	}

	s := servertest.Start(t, func(c *server.Config) {
		c.LeaderElect = true
		c.ResourceQuotaSyncPeriod = 100 * time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	exercise(ctx, t, s)

	// The quota and cluster quota gauges come from watch-fed caches, leadership and the
	// repair from other goroutines: scrape until they are all there (or the deadline).
	var exported map[string]bool
	var samples []string
	for {
		var err error
		if exported, samples, err = scrape(ctx, s); err != nil {
			t.Fatal(err)
		}
		if exported["quotad_resourcequota"] && exported["quotad_clusterresourcequota_namespace"] &&
			exported["leader_election_master_status"] && exported["quotad_resourcequota_repairs_total"] {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/metrics never exported the quotas, the cluster quota, the leader status and the repair: %v", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The events were counted where they happened: the edge, admission, the quota step,
	// group commit.
	for _, want := range [][]string{
		{`apiserver_request_total{`, `verb="POST"`, `resource="configmaps"`, `scope="resource"`, `code="403"`, `component="apiserver"`},
		{`apiserver_request_total{`, `verb="POST"`, `dry_run="All"`, `code="201"`},
		{`apiserver_request_total{`, `verb="APPLY"`, `code="200"`},
		{`apiserver_request_total{`, `verb="WATCH"`, `resource="configmaps"`},
		{`apiserver_request_duration_seconds_count{`, `verb="LIST"`, `scope="namespace"`},
		{`apiserver_longrunning_requests{`, `verb="WATCH"`},
		{`apiserver_admission_controller_admission_duration_seconds_count{`, `name="ResourceQuota"`, `operation="CREATE"`, `rejected="true"`, `type="validate"`},
		{`apiserver_admission_controller_admission_duration_seconds_count{`, `name="NamespaceLifecycle"`, `type="admit"`},
		{`apiserver_admission_step_admission_duration_seconds_count{`, `type="admit"`, `operation="CREATE"`},
		{`quotad_controller_panics_total{controller="resourcequota"} 0`},
		{`quotad_resourcequota_repairs_total{namespace="m",resourcequota="q"} 1`},
		{`quotad_quota_exceeded_total{`, `enforcement="Enforce"`, `kind="ResourceQuota"`, `name="q"`, `namespace="m"`},
		{`quotad_quota_threshold_warnings_total{`, `kind="ResourceQuota"`, `name="q"`, `namespace="m"`, `resource="configmaps"`},
	} {
		if !slices.ContainsFunc(samples, func(line string) bool { return containsAll(line, want) }) {
			t.Errorf("no sample of /metrics has %q", want)
		}
	}
	if !slices.ContainsFunc(samples, func(line string) bool {
		return strings.HasPrefix(line, "quotad_storage_writes_per_transaction_count ") && !strings.HasSuffix(line, " 0")
	}) {
		t.Errorf("no group-commit transaction observed: %q", slices.DeleteFunc(slices.Clone(samples), func(l string) bool { return !strings.HasPrefix(l, "quotad_storage_writes") }))
	}

	var missing []string
	for name, where := range used {
		if !exported[name] {
			sort.Strings(where)
			missing = append(missing, name+" (in "+strings.Join(slices.Compact(where), "; ")+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics the assets name but quotad does not export:\n  %s", strings.Join(missing, "\n  "))
	}
	t.Logf("%d metrics named by %d expressions, all exported", len(used), len(exprs))
}

// exercise makes the server observe every kind of event its metrics count.
func exercise(ctx context.Context, t *testing.T, s *servertest.Server) {
	t.Helper()
	cs := s.Client.CoreV1()
	// 1. A labelled namespace (selected by a cluster quota) with a quota of three
	// ConfigMaps, waited for through a watch (an observed long-running request).
	w, err := cs.ConfigMaps("m").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"team": "a"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			break
		}
	}
	w.Stop()
	crq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "quota.openshift.io/v1", "kind": "ClusterResourceQuota",
		"metadata": map[string]any{"name": "team-a"},
		"spec": map[string]any{
			"selector": map[string]any{"labels": map[string]any{"matchLabels": map[string]any{"team": "a"}}},
			"quota":    map[string]any{"hard": map[string]any{"count/secrets": "100"}},
		},
	}}
	crqGVR := schema.GroupVersionResource{Group: "quota.openshift.io", Version: "v1", Resource: "clusterresourcequotas"}
	if _, err := s.Dynamic.Resource(crqGVR).Create(ctx, crq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ResourceQuotas("m").Create(ctx, &corev1.ResourceQuota{
		// A threshold, so that the write filling it is warned about (and counted).
		ObjectMeta: metav1.ObjectMeta{Name: "q", Annotations: map[string]string{"quota.quotad.io/warn-at": "50%"}},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"configmaps": resource.MustParse("3")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 2. A dry run, then ConfigMaps until quota refuses one.
	if _, err := cs.ConfigMaps("m").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	refused := false
	for i := 0; i < 5 && !refused; i++ {
		_, err := cs.ConfigMaps("m").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c" + string(rune('0'+i))}}, metav1.CreateOptions{})
		switch {
		case apierrors.IsForbidden(err):
			refused = true
		case err != nil:
			t.Fatal(err)
		}
	}
	if !refused {
		t.Fatal("quota never refused a ConfigMap")
	}
	// 3. A get, a list, a server-side apply.
	if _, err := cs.ConfigMaps("m").Get(ctx, "c0", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ConfigMaps("m").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	apply := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c0"},"data":{"k":"v"}}`)
	if _, err := cs.ConfigMaps("m").Patch(ctx, "c0", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "deploy-test"}); err != nil {
		t.Fatal(err)
	}
	// 4. A drift behind the registry's back (usage 0), which the verifier repairs.
	key := registry.KeyPrefix(corev1.SchemeGroupVersion.WithResource("resourcequotas").GroupResource(), "m") + "q"
	servertest.EditStored(t, s, key, func(rq *corev1.ResourceQuota) { rq.Status.Used["configmaps"] = resource.MustParse("0") })
}

// scrape reads /metrics as the admin and returns the names of its samples and the samples.
func scrape(ctx context.Context, s *servertest.Server) (map[string]bool, []string, error) {
	body, err := s.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]bool{}
	var samples []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
			samples = append(samples, line)
		}
	}
	return names, samples, sc.Err()
}

// containsAll reports whether line has every part.
func containsAll(line string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(line, p) {
			return false
		}
	}
	return true
}
