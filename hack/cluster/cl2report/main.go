package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cl2report NAME=DIR [NAME=DIR...]")
		os.Exit(2)
	}
	var runs []*run
	for _, a := range os.Args[1:] {
		name, dir, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "cl2report: %q is not NAME=DIR\n", a)
			os.Exit(2)
		}
		r, err := load(name, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cl2report: %s: %v\n", name, err)
			os.Exit(1)
		}
		runs = append(runs, r)
	}
	report(os.Stdout, runs)
}

// run is what one directory holds.
type run struct {
	name   string
	result map[string]string

	junitTests, junitFailures int
	failures                  []string

	// perf is clusterloader2's perf data: "<summary> <labels>" -> "Perc50"... -> value.
	perf     map[string]map[string]float64
	perfUnit map[string]string

	api map[apiKey]*apiStat
}

type apiKey struct{ resource, subresource, verb, scope string }

type apiStat struct {
	count         float64
	buckets       []bucket // cumulative, by upper bound, over the test
	p50, p90, p99 float64
	threshold     float64
	exceeded      bool
}

type bucket struct {
	le    float64
	count float64
}

func load(name, dir string) (*run, error) {
	r := &run{name: name, result: map[string]string{}, perf: map[string]map[string]float64{}, perfUnit: map[string]string{}}
	if f, err := os.Open(filepath.Join(dir, "result.txt")); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), "="); ok {
				r.result[k] = v
			}
		}
		f.Close()
	}
	if err := r.loadJUnit(filepath.Join(dir, "report", "junit.xml")); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "report", "*.json"))
	for _, f := range files {
		r.loadPerf(f)
	}
	before, err := scrape(filepath.Join(dir, "metrics-before.txt"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	after, err := scrape(filepath.Join(dir, "metrics-after.txt"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if after != nil {
		r.api = apiLatencies(before, after)
	}
	return r, nil
}

type junitSuite struct {
	Cases []struct {
		Name    string `xml:"name,attr"`
		Failure *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
	} `xml:"testcase"`
}

func (r *run) loadJUnit(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var s junitSuite
	if err := xml.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// clusterloader2 writes tests="0": count the cases.
	r.junitTests = len(s.Cases)
	for _, c := range s.Cases {
		if c.Failure != nil {
			r.junitFailures++
			msg := strings.TrimSpace(c.Failure.Message)
			if msg == "" {
				msg = strings.TrimSpace(c.Failure.Text)
			}
			if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i]
			}
			r.failures = append(r.failures, c.Name+": "+msg)
		}
	}
	return nil
}

// summaryName is a report file's name less the test's name and the timestamp clusterloader2
// appends: PodStartupLatency_PodStartupLatency_load_2026-11-30T04:12:05Z.json ->
// PodStartupLatency_PodStartupLatency.
var summaryName = regexp.MustCompile(`_[^_]+_\d{4}-\d\d-\d\dT[^_]*\.json$`)

func (r *run) loadPerf(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	base := filepath.Base(path)
	name := summaryName.ReplaceAllString(base, "")
	if name == base {
		name = strings.TrimSuffix(base, ".json")
	}
	name = strings.TrimPrefix(name, "PodStartupLatency_") // the measurement's identifier remains
	var perf struct {
		DataItems []struct {
			Data   map[string]float64 `json:"data"`
			Unit   string             `json:"unit"`
			Labels map[string]string  `json:"labels"`
		} `json:"dataItems"`
	}
	if json.Unmarshal(b, &perf) == nil && len(perf.DataItems) > 0 {
		// PodStartupLatency's own summary (its Stateless and Stateful copies split the same
		// pods by owner), and the phases that differ between control planes: create to
		// schedule (the scheduler's watch and pods/binding) and schedule to running (KWOK's
		// watch and pods/status); the watch phases are zero with KWOK.
		if strings.HasPrefix(name, "Stateless") || strings.HasPrefix(name, "Stateful") {
			return
		}
		for _, it := range perf.DataItems {
			key := name
			m := it.Labels["Metric"]
			switch m {
			case "", "pod_startup", "create_to_schedule", "schedule_to_run":
			default:
				continue
			}
			if m != "" {
				key += " " + m
			}
			r.perf[key] = it.Data
			r.perfUnit[key] = it.Unit
		}
		return
	}
	if strings.HasPrefix(name, "SchedulingThroughput") {
		var t map[string]float64
		if json.Unmarshal(b, &t) == nil {
			r.perf[name] = map[string]float64{"Perc50": t["perc50"], "Perc90": t["perc90"], "Perc99": t["perc99"], "Max": t["max"]}
			r.perfUnit[name] = "pods/s"
		}
	}
}

func scrape(path string) (map[string]*dto.MetricFamily, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mf, err := parseMetrics(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return mf, nil
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// apiLatencies is the increase of apiserver_request_duration_seconds between the scrapes,
// summed by resource, subresource, verb and scope (over group, version, component and dry
// run), without the long-running verbs, as clusterloader2's APIResponsivenessPrometheusSimple
// sums its SLI histogram.
func apiLatencies(before, after map[string]*dto.MetricFamily) map[apiKey]*apiStat {
	const name = "apiserver_request_duration_seconds"
	sum := func(mfs map[string]*dto.MetricFamily) map[apiKey]map[float64]float64 {
		out := map[apiKey]map[float64]float64{}
		mf := mfs[name]
		if mf == nil {
			return out
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch l["verb"] {
			case "WATCH", "WATCHLIST", "CONNECT":
				continue
			}
			switch l["subresource"] {
			case "log", "exec", "portforward", "attach", "proxy":
				continue
			}
			k := apiKey{l["resource"], l["subresource"], l["verb"], l["scope"]}
			if out[k] == nil {
				out[k] = map[float64]float64{}
			}
			h := m.GetHistogram()
			for _, b := range h.GetBucket() {
				if math.IsInf(b.GetUpperBound(), 1) {
					continue // the sample count below
				}
				out[k][b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
			out[k][math.Inf(1)] += float64(h.GetSampleCount())
		}
		return out
	}
	b, a := sum(before), sum(after)
	stats := map[apiKey]*apiStat{}
	for k, hist := range a {
		st := &apiStat{}
		for le, c := range hist {
			st.buckets = append(st.buckets, bucket{le, c - b[k][le]})
		}
		sort.Slice(st.buckets, func(i, j int) bool { return st.buckets[i].le < st.buckets[j].le })
		st.count = st.buckets[len(st.buckets)-1].count
		if st.count <= 0 {
			continue
		}
		st.p50, st.p90, st.p99 = quantile(0.5, st.buckets), quantile(0.9, st.buckets), quantile(0.99, st.buckets)
		st.threshold = threshold(k)
		st.exceeded = st.p99 > st.threshold
		stats[k] = st
	}
	return stats
}

// threshold is the API call latency SLO's bound for a call: 1 s for a single object, 5 s
// for a list in a namespace, 30 s for a cluster-wide list.
func threshold(k apiKey) float64 {
	if k.verb != "LIST" {
		return 1
	}
	if k.scope == "cluster" {
		return 30
	}
	return 5
}

// quantile is Prometheus' histogram_quantile over cumulative buckets (the last one +Inf):
// linear interpolation within the bucket the rank falls in; the highest finite bound when it
// falls in +Inf.
func quantile(q float64, buckets []bucket) float64 {
	if len(buckets) < 2 {
		return math.NaN()
	}
	total := buckets[len(buckets)-1].count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(buckets), func(i int) bool { return buckets[i].count >= rank })
	if i == len(buckets)-1 {
		return buckets[len(buckets)-2].le
	}
	lower, prev := 0.0, 0.0
	if i > 0 {
		lower, prev = buckets[i-1].le, buckets[i-1].count
	}
	upper, count := buckets[i].le, buckets[i].count-prev
	if count == 0 {
		return upper
	}
	return lower + (upper-lower)*(rank-prev)/count
}

func report(w io.Writer, runs []*run) {
	header := func(first string) {
		fmt.Fprintf(w, "| %s |", first)
		for _, r := range runs {
			fmt.Fprintf(w, " %s |", r.name)
		}
		fmt.Fprintf(w, "\n|---|")
		for range runs {
			fmt.Fprintf(w, "---:|")
		}
		fmt.Fprintln(w)
	}
	row := func(label string, cell func(r *run) string) {
		fmt.Fprintf(w, "| %s |", label)
		for _, r := range runs {
			fmt.Fprintf(w, " %s |", cell(r))
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintln(w, "clusterloader2 load test")
	fmt.Fprintln(w)
	header("")
	row("clusterloader2 exit code", func(r *run) string { return r.result["exit"] })
	row("steps (junit) passed / run", func(r *run) string {
		if r.junitTests == 0 {
			return "-"
		}
		return fmt.Sprintf("%d / %d", r.junitTests-r.junitFailures, r.junitTests)
	})
	row("test wall time (s)", func(r *run) string { return r.result["seconds"] })
	row("machine load average, start / end", func(r *run) string {
		if r.result["load"] == "" {
			return "-"
		}
		return r.result["load"]
	})
	for _, p := range []string{"control-plane", "kube-apiserver", "etcd", "kube-controller-manager", "quotad", "kube-scheduler", "kwok"} {
		p := p
		if !anyRun(runs, func(r *run) bool { return r.result[p+".cpu"] != "" }) {
			continue
		}
		row(p+" CPU s / peak RSS MiB", func(r *run) string {
			if r.result[p+".cpu"] == "" {
				return "-"
			}
			return r.result[p+".cpu"] + " / " + r.result[p+".rss"]
		})
	}
	keys := map[string]bool{}
	for _, r := range runs {
		for k := range r.perf {
			keys[k] = true
		}
	}
	for _, k := range sortedKeys(keys) {
		k := k
		unit := ""
		for _, r := range runs {
			if u := r.perfUnit[k]; u != "" {
				unit = u
			}
		}
		row(fmt.Sprintf("%s p50 / p90 / p99 (%s)", k, unit), func(r *run) string {
			d, ok := r.perf[k]
			if !ok {
				return "-"
			}
			s := fmt.Sprintf("%s / %s / %s", num(d["Perc50"]), num(d["Perc90"]), num(d["Perc99"]))
			if m, ok := d["Max"]; ok {
				s += fmt.Sprintf(" (max %s)", num(m))
			}
			return s
		})
	}
	// The API call latency SLO, per class: the worst p99 over the resources of the class.
	type class struct {
		label string
		match func(apiKey) bool
	}
	classes := []class{
		{"mutating calls (POST/PUT/PATCH/DELETE)", func(k apiKey) bool {
			return k.verb == "POST" || k.verb == "PUT" || k.verb == "PATCH" || k.verb == "DELETE" || k.verb == "APPLY"
		}},
		{"GET", func(k apiKey) bool { return k.verb == "GET" }},
		{"LIST in a namespace", func(k apiKey) bool { return k.verb == "LIST" && k.scope != "cluster" }},
		{"LIST cluster-wide", func(k apiKey) bool { return k.verb == "LIST" && k.scope == "cluster" }},
	}
	for _, c := range classes {
		c := c
		row("API "+c.label+": calls, worst p99 (s), over SLO", func(r *run) string {
			if r.api == nil {
				return "-"
			}
			var n, worst float64
			var worstKey apiKey
			over := 0
			for k, st := range r.api {
				if !c.match(k) {
					continue
				}
				n += st.count
				if st.p99 > worst {
					worst, worstKey = st.p99, k
				}
				if st.exceeded {
					over++
				}
			}
			return fmt.Sprintf("%.0f, %s (%s), %d", n, num(worst), keyString(worstKey), over)
		})
	}
	for _, r := range runs {
		for _, f := range r.failures {
			fmt.Fprintf(w, "\n%s failed: %s", r.name, f)
		}
	}
	fmt.Fprintln(w)

	// The busiest calls, side by side.
	all := map[apiKey]float64{}
	for _, r := range runs {
		for k, st := range r.api {
			all[k] += st.count
		}
	}
	if len(all) == 0 {
		return
	}
	var ks []apiKey
	for k := range all {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if all[ks[i]] != all[ks[j]] {
			return all[ks[i]] > all[ks[j]]
		}
		return keyString(ks[i]) < keyString(ks[j])
	})
	if len(ks) > 25 {
		ks = ks[:25]
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "API calls during the test (apiserver_request_duration_seconds): count, p50 / p99 (s)")
	fmt.Fprintln(w)
	header("resource verb scope")
	for _, k := range ks {
		k := k
		row(keyString(k), func(r *run) string {
			st := r.api[k]
			if st == nil {
				return "-"
			}
			return fmt.Sprintf("%.0f, %s / %s", st.count, num(st.p50), num(st.p99))
		})
	}
}

func keyString(k apiKey) string {
	if k.resource == "" && k.verb == "" {
		return "-"
	}
	res := k.resource
	if k.subresource != "" {
		res += "/" + k.subresource
	}
	return res + " " + k.verb + " " + k.scope
}

func num(f float64) string {
	switch {
	case math.IsNaN(f):
		return "-"
	case f >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 10:
		return strconv.FormatFloat(f, 'f', 1, 64)
	default:
		return strconv.FormatFloat(f, 'f', 3, 64)
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func anyRun(runs []*run, f func(*run) bool) bool {
	for _, r := range runs {
		if f(r) {
			return true
		}
	}
	return false
}
