package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type options struct {
	server, token, kubeconfig, scenario, prefix string
	// servers spreads the load clients over several replicas (client i uses servers[i%n]);
	// setup and the report go to server (or the kubeconfig's).
	servers                            []string
	clients, creates, namespaces, hard int
	nodeLists                          int
	insecure, noSetup                  bool
	// bound makes the created pods bound to nodes and labelled (as a cluster's running pods
	// are: what the controllers watching every pod keep), instead of pending and bare.
	bound bool
	// clusterFirst runs the clusterquota scenario's 100-namespace phase before its
	// one-namespace phase.
	clusterFirst bool
	// alternate splits each clusterquota phase into that many parts run in turn with the
	// other phase's, so that neither phase is the one run first.
	alternate  int
	cpuprofile string
	// latencies, when set, records each pod create's start and latency (--latencies).
	latencies *latencyLog
	abuse     abuseOptions
}

// latencyLog is every pod create's start and latency, written out when the load is done.
type latencyLog struct {
	mu    sync.Mutex
	path  string
	lines []byte
}

func (l *latencyLog) add(start time.Time, d time.Duration) {
	l.mu.Lock()
	l.lines = fmt.Appendf(l.lines, "%d %d\n", start.UnixNano(), d.Nanoseconds())
	l.mu.Unlock()
}

func (l *latencyLog) write() error { return os.WriteFile(l.path, l.lines, 0o644) }

func main() {
	var o options
	flag.StringVar(&o.server, "server", "", "API server URL (https://127.0.0.1:6443)")
	flag.Func("servers", "spread the load clients over these API server URLs, comma separated (replicas sharing one etcd and one CA and token, as joined quotads do); setup and report use --server or the kubeconfig", func(v string) error {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				o.servers = append(o.servers, strings.TrimRight(u, "/"))
			}
		}
		return nil
	})
	flag.StringVar(&o.token, "token", "", "bearer token")
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig (used when --server is empty)")
	flag.StringVar(&o.scenario, "scenario", "quota", "quota | namespaces | noquota | tight | mixed | clusterquota | clustertight | leases (--clients nodes renewing their Lease, --creates renewals) | rewatch (--creates pods bound to nodes, then --namespaces watches of them all from resourceVersion 0, as KWOK re-watches, then --node-lists lists of one node's pods) | abuse (probe: the abuse scenario's probe alone, in a process of its own)")
	flag.StringVar(&o.prefix, "prefix", fmt.Sprintf("bench-%d", time.Now().UnixMilli()), "namespace name prefix")
	flag.IntVar(&o.clients, "clients", 32, "concurrent clients")
	flag.IntVar(&o.creates, "creates", 20000, "pod creates to attempt")
	flag.IntVar(&o.namespaces, "namespaces", 100, "namespaces for the namespaces scenario")
	flag.IntVar(&o.hard, "hard", 1000, "pods hard limit for the tight scenario")
	flag.BoolVar(&o.bound, "bound", false, "create pods bound to one of 100 nodes (created first) and labelled (the rewatch scenario's pods), as a cluster's running pods are")
	flag.IntVar(&o.nodeLists, "node-lists", 0, "rewatch: lists of one node's pods after the watches")
	flag.BoolVar(&o.insecure, "insecure-skip-tls-verify", false, "do not verify the server certificate")
	flag.BoolVar(&o.clusterFirst, "cluster-first", false, "clusterquota: the phase under the ClusterResourceQuota first, then the one-namespace phase (the later phase holds the earlier one's pods)")
	flag.IntVar(&o.alternate, "alternate", 1, "clusterquota: run each phase in this many parts, in turn with the other phase's parts, and report each phase over all its parts (1: one phase, then the other)")
	flag.BoolVar(&o.noSetup, "no-setup", false, "the namespaces and quotas exist already (as a tenant who may not create them runs)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write the load generator's own CPU profile to this file")
	flag.Func("latencies", "write each pod create's start (Unix ns) and latency (ns) to this file, a line each (hack/tail-in-gc.sh)", func(v string) error {
		o.latencies = &latencyLog{path: v}
		return nil
	})
	flag.DurationVar(&o.abuse.duration, "duration", 30*time.Second, "abuse: how long the probe runs idle, then again under abuse")
	flag.IntVar(&o.abuse.slowBodies, "slow-bodies", 200, "abuse: connections trickling a body declared as 3 MB")
	flag.IntVar(&o.abuse.stuckWatchers, "stuck-watchers", 32, "abuse: watches of every pod that never read")
	flag.IntVar(&o.abuse.bigLists, "big-lists", 32, "abuse: clients repeating un-paged lists of every pod")
	flag.IntVar(&o.abuse.listPods, "list-pods", 20000, "abuse: pods created first, so the lists are big")
	flag.IntVar(&o.abuse.scrapers, "scrapers", 32, "abuse: anonymous /metrics scrapers")
	flag.IntVar(&o.abuse.hugeQuantity, "huge-quantity", 4, "abuse: clients sending dry-run pods requesting cpu: 1e1000000000")
	flag.IntVar(&o.abuse.copyBombs, "copy-bombs", 4, "abuse: clients sending a JSON patch of 40 copies of a map into itself")
	flag.IntVar(&o.abuse.churnPatches, "churn-patches", 4, "abuse: clients sending a JSON patch of 10,000 insertions at the head of 200,000 elements")
	flag.IntVar(&o.abuse.mergeOrders, "merge-orders", 4, "abuse: clients sending a strategic merge patch ordering 40,000 containers")
	flag.IntVar(&o.abuse.longSelectors, "long-selectors", 40, "abuse: clients listing pods with an 890 KB label selector")
	flag.BoolVar(&o.abuse.probeInProcess, "probe-in-process", false, "abuse: run the probe in the load generator's own process instead of a process of its own (it then shares the list clients' runtime and garbage collector)")
	flag.Parse()
	if o.alternate < 1 || o.alternate > max(o.creates, 1) {
		fmt.Fprintf(os.Stderr, "quotabench: --alternate %d: must be between 1 and --creates (%d)\n", o.alternate, o.creates)
		os.Exit(2)
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "quotabench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "quotabench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	err := run(o)
	if err == nil && o.latencies != nil {
		err = o.latencies.write()
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "quotabench:", err)
		os.Exit(1)
	}
}

// api is a minimal JSON client of the Kubernetes REST API.
type api struct {
	base, token string
	http        *http.Client
	tls         *tls.Config
}

func newAPI(o options) (*api, error) {
	tlsCfg := &tls.Config{InsecureSkipVerify: o.insecure} //nolint:gosec // opt-in flag
	a := &api{base: strings.TrimRight(o.server, "/"), token: o.token}
	if a.base == "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("no --server and no usable kubeconfig: %w", err)
		}
		// Certificates named by path (as kube-apiserver's kubeconfigs name them) are read.
		if err := rest.LoadTLSFiles(cfg); err != nil {
			return nil, err
		}
		a.base, a.token = strings.TrimRight(cfg.Host, "/"), cfg.BearerToken
		if len(cfg.CAData) > 0 {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(cfg.CAData)
			tlsCfg.RootCAs = pool
		}
		if len(cfg.CertData) > 0 {
			cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
			if err != nil {
				return nil, err
			}
			tlsCfg.Certificates = []tls.Certificate{cert}
		}
		tlsCfg.InsecureSkipVerify = tlsCfg.InsecureSkipVerify || cfg.Insecure
	}
	a.tls = tlsCfg
	a.http = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0, ForceAttemptHTTP2: false,
	}}
	return a, nil
}

// at is the API of client c: servers[c%len(servers)] with a's credentials, or a itself
// without servers.
func (a *api) at(servers []string, c int) *api {
	if len(servers) == 0 {
		return a
	}
	b := *a
	b.base = servers[c%len(servers)]
	return &b
}

// do sends one request and returns the status code and body.
func (a *api) do(ctx context.Context, method, path string, body interface{}) (int, []byte, error) {
	return a.doType(ctx, method, path, "application/json", body)
}

// doType sends body (bytes, or a value encoded as JSON) as contentType.
func (a *api) doType(ctx context.Context, method, path, contentType string, body interface{}) (int, []byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (a *api) mustCreate(ctx context.Context, path string, obj interface{}) error {
	code, b, err := a.do(ctx, http.MethodPost, path, obj)
	if err != nil {
		return err
	}
	if code != http.StatusCreated && code != http.StatusOK && code != http.StatusConflict {
		return fmt.Errorf("POST %s: %d %s", path, code, b)
	}
	return nil
}

type m = map[string]interface{}

// podJSON is the pod every create sends; only its name changes, so the load generator
// spends its CPU on requests, not on encoding them.
const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"10m","memory":"16Mi"},"limits":{"cpu":"10m","memory":"16Mi"}}}]}}`

func podBody(name string) []byte { return fmt.Appendf(nil, podJSON, name) }

func quotaBody(pods int) m {
	return m{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": m{"name": "bench"},
		"spec": m{"hard": m{"pods": fmt.Sprint(pods), "requests.cpu": "100k", "requests.memory": "100Ti", "limits.cpu": "100k", "limits.memory": "100Ti"}}}
}

// stats collects latencies and outcomes.
type stats struct {
	mu                          sync.Mutex
	lat                         []time.Duration
	admitted, refused, errs, dl atomic.Int64
	firstErr                    atomic.Value
	// cpu is the CPU time this process spent during the load (user + system): the load
	// generator's own share of a machine it shares with the server.
	cpu time.Duration
}

// processCPU is the CPU time this process has used (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// merge adds another load's outcomes to s (not safe while either is counting).
func (s *stats) merge(o *stats) {
	s.lat = append(s.lat, o.lat...)
	s.admitted.Add(o.admitted.Load())
	s.refused.Add(o.refused.Load())
	s.errs.Add(o.errs.Load())
	s.dl.Add(o.dl.Load())
	if e := o.firstErr.Load(); e != nil {
		s.firstErr.CompareAndSwap(nil, e)
	}
	s.cpu += o.cpu
}

func (s *stats) add(d time.Duration) {
	s.mu.Lock()
	s.lat = append(s.lat, d)
	s.mu.Unlock()
}

func pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	i := int(float64(len(lat)-1) * p)
	return lat[i]
}

func run(o options) error {
	a, err := newAPI(o)
	if err != nil {
		return err
	}
	switch o.scenario {
	case "abuse":
		return runAbuse(a, o, o.abuse)
	case "probe":
		return probeMain(a, o.prefix, o.abuse.duration)
	case "leases":
		return runLeases(a, o)
	case "rewatch":
		return runRewatch(a, o)
	}
	ctx := context.Background()
	// 1. Namespaces and quotas of the scenario.
	nss := []string{o.prefix}
	quotaPods := o.creates * 2
	switch o.scenario {
	case "clusterquota", "clustertight":
		return runClusterQuota(a, o)
	case "namespaces":
		nss = nil
		for i := 0; i < o.namespaces; i++ {
			nss = append(nss, fmt.Sprintf("%s-%03d", o.prefix, i))
		}
	case "tight":
		quotaPods = o.hard
	case "quota", "noquota", "mixed":
	default:
		return fmt.Errorf("unknown scenario %q", o.scenario)
	}
	for _, ns := range nss {
		if o.noSetup {
			break
		}
		if err := a.mustCreate(ctx, "/api/v1/namespaces", m{"apiVersion": "v1", "kind": "Namespace", "metadata": m{"name": ns}}); err != nil {
			return err
		}
		if o.scenario != "noquota" {
			if err := a.mustCreate(ctx, "/api/v1/namespaces/"+ns+"/resourcequotas", quotaBody(quotaPods)); err != nil {
				return err
			}
		}
		if o.bound {
			if err := createNodes(ctx, a, ns); err != nil {
				return err
			}
		}
	}
	// 2. The load.
	st, elapsed := runLoad(a, o, nss)
	// 3. Report.
	sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
	used := 0
	for _, ns := range nss {
		if o.scenario == "noquota" {
			break
		}
		_, b, err := a.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/resourcequotas/bench", nil)
		if err != nil {
			return err
		}
		var q struct {
			Status struct {
				Used map[string]string `json:"used"`
			} `json:"status"`
		}
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		n, err := resource.ParseQuantity(q.Status.Used["pods"])
		if err != nil {
			return fmt.Errorf("quota %s/bench used pods %q: %w", ns, q.Status.Used["pods"], err)
		}
		used += int(n.Value())
	}
	fmt.Printf("\rscenario=%s clients=%d namespaces=%d attempts=%d elapsed=%s\n", o.scenario, o.clients, len(nss), o.creates, elapsed.Round(time.Millisecond))
	fmt.Printf("creates/s=%.0f p50=%s p99=%s max=%s\n", float64(o.creates)/elapsed.Seconds(),
		pct(st.lat, 0.50).Round(10*time.Microsecond), pct(st.lat, 0.99).Round(10*time.Microsecond), pct(st.lat, 1).Round(10*time.Microsecond))
	fmt.Printf("admitted=%d refused=%d errors=%d deleted=%d quota-used-pods=%d\n", st.admitted.Load(), st.refused.Load(), st.errs.Load(), st.dl.Load(), used)
	if e := st.firstErr.Load(); e != nil {
		fmt.Printf("first error: %s\n", e)
	}
	return nil
}

// progress prints a progress line every second until stop.
func progress(st *stats, start time.Time, total int, stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			done := st.admitted.Load() + st.refused.Load() + st.errs.Load()
			fmt.Fprintf(os.Stderr, "\r%d/%d done, %.0f/s, %d refused, %d errors   ", done, total, float64(done)/time.Since(start).Seconds(), st.refused.Load(), st.errs.Load())
		}
	}
}

// drive runs o.clients clients (client c on its own connection to a.at(o.servers, c)),
// each calling op with the next number of total until all are taken or op returns false,
// and returns the outcomes op counted in st and how long it took.
func drive(a *api, o options, total int, op func(cc *conn, c, i int, st *stats) bool) (*stats, time.Duration) {
	var next atomic.Int64 // clients take numbers from a shared counter
	st := &stats{lat: make([]time.Duration, 0, total)}
	start, cpu0 := time.Now(), processCPU()
	stop := make(chan struct{})
	go progress(st, start, total, stop)
	var wg sync.WaitGroup
	for c := 0; c < o.clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			cc, err := newConn(a.at(o.servers, c))
			if err != nil {
				st.errs.Add(1)
				st.firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			defer cc.close()
			for {
				if i := int(next.Add(1)) - 1; i >= total || !op(cc, c, i, st) {
					return
				}
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	st.cpu = processCPU() - cpu0
	close(stop)
	return st, elapsed
}

// runLoad sends o.creates pod creates from o.clients clients, spread over nss in turn, and
// returns the outcomes and how long it took.
func runLoad(a *api, o options, nss []string) (*stats, time.Duration) {
	return runLoadFrom(a, o, nss, 0, o.creates)
}

// runLoadFrom is runLoad for the creates numbered from to from+n-1 (the pods' names).
func runLoadFrom(a *api, o options, nss []string, from, n int) (*stats, time.Duration) {
	return drive(a, o, n, func(cc *conn, _, i int, st *stats) bool {
		i += from
		ns := nss[i%len(nss)]
		name := fmt.Sprintf("p-%d", i)
		t0 := time.Now()
		body := podBody(name)
		if o.bound {
			body = fmt.Appendf(nil, boundPodJSON, name, fmt.Sprintf("%s-node-%d", ns, i%rewatchNodes))
		}
		code, body, err := cc.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", body)
		d := time.Since(t0)
		st.add(d)
		if o.latencies != nil {
			o.latencies.add(t0, d)
		}
		switch {
		case err != nil:
			st.errs.Add(1)
			st.firstErr.CompareAndSwap(nil, err.Error())
		case code == http.StatusCreated:
			st.admitted.Add(1)
		case code == http.StatusForbidden && bytes.Contains(body, []byte("exceeded quota")):
			st.refused.Add(1)
		default:
			st.errs.Add(1)
			st.firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s", code, body))
		}
		if o.scenario == "mixed" && i%2 == 1 {
			prev := fmt.Sprintf("p-%d", i-1)
			if code, _, err := cc.do(http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/"+prev, nil); err == nil && code == http.StatusOK {
				st.dl.Add(1)
			}
		}
		return true
	})
}
