package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// abuseOptions size the abuse scenario: what hostile or careless clients do to the server
// while a probe client measures the latency everybody else gets.
type abuseOptions struct {
	duration      time.Duration
	slowBodies    int // connections trickling a body declared as 3 MB
	stuckWatchers int // watches that never read their responses
	bigLists      int // clients repeating un-paged lists of every pod
	listPods      int // pods created first, so the lists are big
	scrapers      int // anonymous /metrics scrapers
	hugeQuantity  int // clients sending a pod requesting cpu: 1e1000000000 (dry run)
	copyBombs     int // clients sending a JSON patch of 40 doubling copies
	churnPatches  int // clients sending a JSON patch of 10,000 insertions into 200,000 elements
	mergeOrders   int // clients sending a strategic merge patch ordering 40,000 containers
	longSelectors int // clients listing pods with an 890 KB label selector
	// probeInProcess runs the probe in the load generator's process; by default it runs in
	// a process of its own, as another tenant's client would.
	probeInProcess bool
}

// probe records one latency sample per request of the probe client.
type probe struct {
	mu  sync.Mutex
	lat []time.Duration
	bad atomic.Int64
}

// runProbe sends, until ctx ends, a GET of the probe quota and a dry-run pod create in
// turn, one at a time, as an ordinary tenant would.
func runProbe(ctx context.Context, a *api, ns string, p *probe) {
	for i := 0; ctx.Err() == nil; i++ {
		t0 := time.Now()
		var code int
		var err error
		if i%2 == 0 {
			code, _, err = a.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/resourcequotas/bench", nil)
		} else {
			code, _, err = a.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods?dryRun=All", podBody(fmt.Sprintf("probe-%d", i)))
		}
		if ctx.Err() != nil {
			return
		}
		d := time.Since(t0)
		if err != nil || (code != http.StatusOK && code != http.StatusCreated) {
			p.bad.Add(1)
			continue
		}
		p.mu.Lock()
		p.lat = append(p.lat, d)
		p.mu.Unlock()
	}
}

// probeReport is what a probe process prints: its latencies, sorted.
type probeReport struct {
	Latencies []time.Duration `json:"latencies"`
	Failed    int64           `json:"failed"`
}

// probeMain is the probe process (--scenario probe): it runs the probe for d as the
// tenant whose token it was given and prints its report as JSON.
func probeMain(a *api, ns string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	p := &probe{}
	runProbe(ctx, a, ns, p)
	return json.NewEncoder(os.Stdout).Encode(probeReport{Latencies: p.lat, Failed: p.bad.Load()})
}

// runProbeProcess runs the probe for d in a process of its own (this binary with
// --scenario probe), as the tenant a is, and adds its samples to p.
func runProbeProcess(a *api, ns string, d time.Duration, p *probe) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "--scenario", "probe", "--server", a.base, "--token", a.token,
		"--insecure-skip-tls-verify", "--prefix", ns, "--duration", d.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("probe process: %w", err)
	}
	var r probeReport
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("probe process: %w", err)
	}
	p.mu.Lock()
	p.lat = append(p.lat, r.Latencies...)
	p.mu.Unlock()
	p.bad.Add(r.Failed)
	return nil
}

func (p *probe) summary() (n int, p50, p99 time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lat := append([]time.Duration(nil), p.lat...)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return len(lat), pct(lat, 0.5), pct(lat, 0.99)
}

// heapSampler reads the server's heap from its own /metrics until ctx ends, keeping the
// largest value seen.
type heapSampler struct {
	max, last atomic.Int64
	samples   atomic.Int64
}

func (h *heapSampler) run(ctx context.Context, a *api) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		if v, ok := serverHeap(ctx, a); ok {
			h.samples.Add(1)
			h.last.Store(v)
			for {
				m := h.max.Load()
				if v <= m || h.max.CompareAndSwap(m, v) {
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// serverHeap returns go_memstats_heap_inuse_bytes from the server's /metrics.
func serverHeap(ctx context.Context, a *api) (int64, bool) {
	v, ok := serverMetric(ctx, a, "go_memstats_heap_inuse_bytes")
	return int64(v), ok
}

// serverMetric returns an unlabelled sample of the server's /metrics.
func serverMetric(ctx context.Context, a *api, name string) (float64, bool) {
	code, b, err := a.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil || code != http.StatusOK {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// settle waits (up to a minute) until the server has used less than a tenth of a core for
// three seconds running, as it does once the work the setup left behind (etcd's
// snapshot of the setup's writes, controllers catching up) is done, so that the probe
// alone measures an idle server.
func settle(ctx context.Context, a *api) {
	quiet := 0
	last, ok := serverMetric(ctx, a, "process_cpu_seconds_total")
	for deadline := time.Now().Add(time.Minute); ok && quiet < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		var now float64
		if now, ok = serverMetric(ctx, a, "process_cpu_seconds_total"); now-last < 0.1 {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
}

// outcomes counts what the abusers got back, by kind and status.
type outcomes struct {
	mu sync.Mutex
	m  map[string]int
}

func (o *outcomes) add(kind, what string) {
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]int{}
	}
	o.m[kind+" "+what]++
	o.mu.Unlock()
}

func (o *outcomes) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %d\n", k, o.m[k])
	}
	return b.String()
}

// rawDial opens one TLS connection to the server speaking HTTP/1.1.
func rawDial(a *api) (*tls.Conn, string, error) {
	u, err := url.Parse(a.base)
	if err != nil {
		return nil, "", err
	}
	cfg := a.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	cfg.NextProtos = []string{"http/1.1"}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", u.Host, cfg)
	return c, u.Host, err
}

// slowBody declares a 3 MB body and sends one byte a second until the server answers or
// closes the connection, or ctx ends.
func slowBody(ctx context.Context, a *api, ns string, out *outcomes) {
	for ctx.Err() == nil {
		c, host, err := rawDial(a)
		if err != nil {
			out.add("slow-body", "dial error")
			return
		}
		fmt.Fprintf(c, "POST /api/v1/namespaces/%s/configmaps HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", ns, host, a.token, 3<<20)
		answered := make(chan string, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				answered <- "closed"
				return
			}
			resp.Body.Close()
			answered <- strconv.Itoa(resp.StatusCode)
		}()
		t := time.NewTicker(time.Second)
		what := ""
	trickle:
		for {
			select {
			case <-ctx.Done():
				what = "still open at the end"
				break trickle
			case what = <-answered:
				break trickle
			case <-t.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					what = "closed"
					break trickle
				}
			}
		}
		t.Stop()
		c.Close()
		out.add("slow-body", what)
	}
}

// stuckWatcher opens a watch of every pod and never reads it, until the server closes
// the connection (then it opens another) or ctx ends.
func stuckWatcher(ctx context.Context, a *api, out *outcomes) {
	for ctx.Err() == nil {
		c, host, err := rawDial(a)
		if err != nil {
			out.add("stuck-watcher", "dial error")
			return
		}
		fmt.Fprintf(c, "GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: application/json\r\n\r\n", host, a.token)
		closed := make(chan struct{})
		go func() {
			// Wait (without reading data) for the server to close: a one-byte read every
			// few seconds keeps this client slower than any event stream.
			buf := make([]byte, 1)
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Second):
				}
				_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
				if _, err := c.Read(buf); err != nil && !isTimeout(err) {
					close(closed)
					return
				}
			}
		}()
		select {
		case <-ctx.Done():
			out.add("stuck-watcher", "still open at the end")
		case <-closed:
			out.add("stuck-watcher", "closed by the server")
		}
		c.Close()
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// bigList repeats an un-paged list of every pod in the cluster, reading the whole body
// (and dropping it as it arrives: the load generator shares the machine, so it keeps no
// copy to collect).
func bigList(ph phase, a *api, out *outcomes) {
	repeat(ph, out, "big-list", func(ctx context.Context) (int, error) { return a.drain(ctx, "/api/v1/pods") })
}

// scraper scrapes /metrics without credentials.
func scraper(ph phase, a *api, out *outcomes) {
	anon := &api{base: a.base, http: a.http, tls: a.tls}
	repeat(ph, out, "anonymous-scrape", func(ctx context.Context) (int, error) {
		code, _, err := anon.do(ctx, http.MethodGet, "/metrics", nil)
		return code, err
	})
}

// hugeQuantity sends a dry-run pod whose cpu request is 1e1000000000 (a tenant may create
// pods, not quotas).
func hugeQuantity(ph phase, a *api, ns string, out *outcomes) {
	body := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"huge"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1e1000000000"}}}]}}`)
	repeat(ph, out, "huge-quantity", func(ctx context.Context) (int, error) {
		code, _, err := a.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods?dryRun=All", body)
		return code, err
	})
}

// runAbuse measures the probe idle, then again while the abusers run, and reports both
// with the server's peak heap. Every loop ends with the duration: nothing outlives it.
func runAbuse(a *api, o options, ab abuseOptions) error {
	r, err := abuse(a, o, ab)
	if err != nil {
		return err
	}
	r.print(os.Stdout)
	return nil
}

// abuseReport is what the abuse scenario measured.
type abuseReport struct {
	ab                 abuseOptions
	idle, busy         *probe
	idleHeap, busyHeap int64
	heapSamples        int64
	// abusers counts what the hostile clients got, by "kind status".
	abusers *outcomes
	// lease is what the controller leader's Lease did while the abusers ran.
	lease *leaseWatch
}

func (r *abuseReport) print(w io.Writer) {
	ab := r.ab
	in, ip50, ip99 := r.idle.summary()
	bn, bp50, bp99 := r.busy.summary()
	fmt.Fprintf(w, "scenario=abuse duration=%s pods=%d slow-bodies=%d stuck-watchers=%d big-lists=%d scrapers=%d huge-quantity=%d copy-bombs=%d churn-patches=%d merge-orders=%d long-selectors=%d\n",
		ab.duration, ab.listPods, ab.slowBodies, ab.stuckWatchers, ab.bigLists, ab.scrapers, ab.hugeQuantity, ab.copyBombs, ab.churnPatches, ab.mergeOrders, ab.longSelectors)
	fmt.Fprintf(w, "idle:  requests=%d failed=%d p50=%s p99=%s peak-heap=%dMiB\n", in, r.idle.bad.Load(), ip50.Round(10*time.Microsecond), ip99.Round(10*time.Microsecond), r.idleHeap>>20)
	fmt.Fprintf(w, "abuse: requests=%d failed=%d p50=%s p99=%s peak-heap=%dMiB (%d samples)\n", bn, r.busy.bad.Load(), bp50.Round(10*time.Microsecond), bp99.Round(10*time.Microsecond), r.busyHeap>>20, r.heapSamples)
	if ip99 > 0 {
		fmt.Fprintf(w, "p99 ratio abuse/idle=%.2f\n", float64(bp99)/float64(ip99))
	}
	fmt.Fprintf(w, "%s\n", r.lease)
	fmt.Fprintf(w, "abusers got:\n%s", r.abusers)
}

// abuse runs the scenario: the probe alone, then with the abusers.
func abuse(a *api, o options, ab abuseOptions) (*abuseReport, error) {
	ctx := context.Background()
	ns := o.prefix
	// 1. A namespace with a quota, and the pods the big lists read.
	if err := a.mustCreate(ctx, "/api/v1/namespaces", m{"apiVersion": "v1", "kind": "Namespace", "metadata": m{"name": ns}}); err != nil {
		return nil, err
	}
	if err := a.mustCreate(ctx, "/api/v1/namespaces/"+ns+"/resourcequotas", quotaBody(ab.listPods*2+10)); err != nil {
		return nil, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(ab.listPods) {
					return
				}
				_ = a.mustCreate(ctx, "/api/v1/namespaces/"+ns+"/pods", podBody(fmt.Sprintf("p-%d", i)))
			}
		}()
	}
	wg.Wait()
	if err := a.mustCreate(ctx, "/api/v1/namespaces/"+ns+"/configmaps", m{"apiVersion": "v1", "kind": "ConfigMap", "metadata": m{"name": workTarget}, "data": m{"k": "v"}}); err != nil {
		return nil, err
	}
	// The probe is one tenant, the abusers (but the anonymous scrapers) another.
	probeAPI, err := a.tenant(ctx, ns, "probe", false)
	if err != nil {
		return nil, err
	}
	mallory, err := a.tenant(ctx, ns, "mallory", true)
	if err != nil {
		return nil, err
	}
	// 2. The probe alone, once the server is idle.
	settle(ctx, a)
	fmt.Fprintf(os.Stderr, "%s probe alone for %s\n", time.Now().Format(time.TimeOnly), ab.duration)
	var heap heapSampler
	idle := &probe{}
	ictx, icancel := context.WithTimeout(ctx, ab.duration)
	go heap.run(ictx, a)
	probeRun := func(ctx context.Context, p *probe) error {
		if ab.probeInProcess {
			runProbe(ctx, probeAPI, ns, p)
			return nil
		}
		return runProbeProcess(probeAPI, ns, ab.duration, p)
	}
	err = probeRun(ictx, idle)
	icancel()
	if err != nil {
		return nil, err
	}
	idleHeap := heap.max.Load()
	// 3. The probe while the abusers run.
	fmt.Fprintf(os.Stderr, "%s probe with the abusers for %s\n", time.Now().Format(time.TimeOnly), ab.duration)
	heap.max.Store(0)
	busy := &probe{}
	out := &outcomes{}
	actx, acancel := context.WithTimeout(ctx, ab.duration)
	defer acancel()
	firstCtx, firstCancel := context.WithTimeout(ctx, ab.duration+2*time.Minute)
	defer firstCancel()
	// Every abuser whose answer is quick to compute waits for its first answer; the long
	// selectors queue for the long-read seats behind each other (work done in the
	// background), so within a short phase they may get none.
	ph, background := phase{ctx: actx, first: firstCtx}, phase{ctx: actx, first: actx}
	var abusers sync.WaitGroup
	spawn := func(n int, f func()) {
		for i := 0; i < n; i++ {
			abusers.Add(1)
			go func() { defer abusers.Done(); f() }()
		}
	}
	spawn(ab.slowBodies, func() { slowBody(actx, mallory, ns, out) })
	spawn(ab.stuckWatchers, func() { stuckWatcher(actx, mallory, out) })
	spawn(ab.bigLists, func() { bigList(ph, mallory, out) })
	spawn(ab.scrapers, func() { scraper(ph, a, out) })
	spawn(ab.hugeQuantity, func() { hugeQuantity(ph, mallory, ns, out) })
	cm := "/api/v1/namespaces/" + ns + "/configmaps/" + workTarget
	bomb, churn, order := copyBombPatch(), churnPatch(), mergeOrderPatch()
	spawn(ab.copyBombs, func() { patchAbuser(ph, mallory, cm, "application/json-patch+json", "copy-bomb", bomb, out) })
	spawn(ab.churnPatches, func() { patchAbuser(ph, mallory, cm, "application/json-patch+json", "churn-patch", churn, out) })
	spawn(ab.mergeOrders, func() {
		patchAbuser(ph, mallory, "/api/v1/namespaces/"+ns+"/pods/p-0", "application/strategic-merge-patch+json", "merge-order", order, out)
	})
	spawn(ab.longSelectors, func() { selectorAbuser(background, mallory, ns, out) })
	lease := &leaseWatch{}
	go lease.run(actx, a)
	go heap.run(actx, a)
	err = probeRun(actx, busy)
	acancel()
	abusers.Wait()
	if err != nil {
		return nil, err
	}
	return &abuseReport{ab: ab, idle: idle, busy: busy, idleHeap: idleHeap, busyHeap: heap.max.Load(), heapSamples: heap.samples.Load(), abusers: out, lease: lease}, nil
}

// tenant returns a client of the same server acting as ServiceAccount name of ns, bound
// there to the edit ClusterRole (and cluster-wide to view when clusterView is set), with a
// token from the TokenRequest API: an ordinary tenant, not an administrator (whom the
// server never slows down or queues apart).
func (a *api) tenant(ctx context.Context, ns, name string, clusterView bool) (*api, error) {
	if err := a.mustCreate(ctx, "/api/v1/namespaces/"+ns+"/serviceaccounts", m{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": m{"name": name}}); err != nil {
		return nil, err
	}
	subject := []m{{"kind": "ServiceAccount", "name": name, "namespace": ns}}
	if err := a.mustCreate(ctx, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", m{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": m{"name": name},
		"roleRef": m{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}, "subjects": subject,
	}); err != nil {
		return nil, err
	}
	if clusterView {
		if err := a.mustCreate(ctx, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", m{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": m{"name": ns + "-" + name},
			"roleRef": m{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}, "subjects": subject,
		}); err != nil {
			return nil, err
		}
	}
	code, b, err := a.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token",
		m{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": m{"expirationSeconds": 86400}})
	if err != nil {
		return nil, err
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if code != http.StatusCreated && code != http.StatusOK {
		return nil, fmt.Errorf("token for %s: %d %s", name, code, b)
	}
	if err := json.Unmarshal(b, &tr); err != nil || tr.Status.Token == "" {
		return nil, fmt.Errorf("token for %s: %v %s", name, err, b)
	}
	// A client of its own, without the admin's client certificate if it had one.
	tlsCfg := a.tls.Clone()
	tlsCfg.Certificates = nil
	t := &api{base: a.base, token: tr.Status.Token, tls: tlsCfg, http: &http.Client{Timeout: a.http.Timeout, Transport: &http.Transport{
		TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: 1024,
	}}}
	// The authorizer learns the bindings from its watch.
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, _, err := t.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods?limit=1", nil)
		if err == nil && code == http.StatusOK {
			return t, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s cannot list pods in %s: %d %v", name, ns, code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// drain GETs path and reads the answer to its end without keeping it.
func (a *api) drain(ctx context.Context, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
