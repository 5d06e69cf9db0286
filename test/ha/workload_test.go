package ha

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// Workload shape.
const (
	writers = 32
	// writeTimeout bounds one write: while etcd has lost quorum a write fails with a 5xx or
	// times out here (either is a failure the client sees).
	writeTimeout = 5 * time.Second
	// conditionDeadline bounds the wait for a fault phase's condition; exceeding it fails
	// the test.
	conditionDeadline = 2 * time.Minute
)

// minDuration is how long the workload runs at least: the fault schedule runs once and
// repeats while time is left. QUOTAD_HA_DURATION lengthens it locally (e.g. 10m).
func minDuration(t *testing.T) time.Duration {
	if s := os.Getenv("QUOTAD_HA_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("QUOTAD_HA_DURATION: %v", err)
		}
		return d
	}
	return 30 * time.Second
}

// topology is the system under test: quotad replicas and the etcd members they use, which
// may be the same processes (embedded clustering) or not (an external cluster).
type topology struct {
	replicas []*replica
	// etcd reaches every member, for the checker and the faults.
	etcd    *clientv3.Client
	members int
	// leader returns the etcd leader member; killMember SIGKILLs a member and
	// restartMembers starts members again, together, returning once they serve.
	leader         func() int
	killMember     func(i int)
	restartMembers func(is ...int)
}

// run is one fault test in progress.
type run struct {
	t     *testing.T
	top   topology
	h     *History
	log   *EtcdLog
	rng   *rand.Rand
	phase atomic.Value // string
	seed  uint64

	writeClients, watchClients []kubernetes.Interface

	// pause asks the first pods watcher to drop its watch until the reply channel is closed.
	pause chan pauseRequest

	check    *registry.Store
	samples  atomic.Int64
	sampleMu sync.Mutex
	sampled  []string
}

type pauseRequest struct {
	paused chan int64 // the watcher's last resourceVersion once it has stopped
	resume chan struct{}
}

func newRun(t *testing.T, top topology, namespaces []string) *run {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("QUOTAD_HA_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (QUOTAD_HA_SEED reruns it)", seed)
	r := &run{t: t, top: top, h: &History{Namespaces: namespaces}, rng: rand.New(rand.NewPCG(seed, 0)), seed: seed,
		pause: make(chan pauseRequest), check: server.CheckingStore(storage.NewEtcd(top.etcd))}
	r.phase.Store("setup")
	for _, rep := range top.replicas {
		wc := rest.CopyConfig(rep.config)
		wc.Timeout = writeTimeout
		r.writeClients = append(r.writeClients, kubernetes.NewForConfigOrDie(wc))
		r.watchClients = append(r.watchClients, kubernetes.NewForConfigOrDie(rest.CopyConfig(rep.config)))
	}
	return r
}

func (r *run) setPhase(p string) { r.phase.Store(p) }
func (r *run) phaseName() string { return r.phase.Load().(string) }

func (r *run) logf(format string, args ...any) {
	r.t.Helper()
	r.t.Logf(format, args...)
}

// setup creates the namespaces and their quotas through replica 0.
func (r *run) setup(ctx context.Context) {
	t := r.t
	cs := r.writeClients[0]
	for i, ns := range r.h.Namespaces {
		// The first two namespaces share a cluster quota too.
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if i < 2 {
			n.Labels = map[string]string{"ha-shared": "yes"}
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Pods with cpu requests count in compute, those without in besteffort (a quota on
		// requests.cpu refuses a pod without one, as upstream's, unless scoped).
		quotas := []*corev1.ResourceQuota{
			{ObjectMeta: metav1.ObjectMeta{Name: "compute"}, Spec: corev1.ResourceQuotaSpec{
				Hard:   corev1.ResourceList{corev1.ResourcePods: resource.MustParse("20"), corev1.ResourceRequestsCPU: resource.MustParse("3")},
				Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort},
			}},
			{ObjectMeta: metav1.ObjectMeta{Name: "objects"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				"count/configmaps": resource.MustParse("20"), "count/pods": resource.MustParse("30"),
			}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "besteffort"}, Spec: corev1.ResourceQuotaSpec{
				Hard:   corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6")},
				Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort},
			}},
		}
		for _, q := range quotas {
			if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.setupClusterQuota(ctx)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// probeNamespace has no quota; the quorum-loss probe writes there, outside the history.
const probeNamespace = "ha-probe"

// sharedQuota is a cluster quota over the namespaces labelled ha-shared=yes, tighter than
// the sum of their own quotas.
const sharedQuota = `{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"ha-shared"},
"spec":{"selector":{"labels":{"matchLabels":{"ha-shared":"yes"}}},"quota":{"hard":{"pods":"28","count/configmaps":"30"}}}}`

func (r *run) setupClusterQuota(ctx context.Context) {
	err := r.writeClients[0].Discovery().RESTClient().Post().AbsPath("/apis/quota.openshift.io/v1/clusterresourcequotas").
		SetHeader("Content-Type", "application/json").Body([]byte(sharedQuota)).Do(ctx).Error()
	if err != nil {
		r.t.Fatalf("creating the cluster quota: %v", err)
	}
}

// nextReplica is the replica after i, for failover.
func (r *run) nextReplica(i int) int { return (i + 1) % len(r.top.replicas) }

// writer is one client: home replica w%replicas, one namespace, its own objects. It fails
// over to the next replica on a connection error and tries its home again every 16 writes.
func (r *run) writer(ctx context.Context, w int) {
	rng := rand.New(rand.NewPCG(r.seed, uint64(w)+1))
	home := w % len(r.top.replicas)
	rep := home
	ns := r.h.Namespaces[w%len(r.h.Namespaces)]
	var pods, cms []string
	pick := func(l *[]string) string {
		i := rng.IntN(len(*l))
		n := (*l)[i]
		(*l)[i] = (*l)[len(*l)-1]
		*l = (*l)[:len(*l)-1]
		return n
	}
	zero := int64(0)
	for seq := 0; ctx.Err() == nil; seq++ {
		if seq%16 == 0 {
			rep = home
		}
		cs := r.writeClients[rep]
		wr := Write{Writer: w, Replica: rep, Phase: r.phaseName(), Namespace: ns, Start: time.Now()}
		var err error
		var obj metav1.Object
		p := rng.Float64()
		switch {
		case p < 0.40 || (p < 0.60 && len(pods) == 0):
			wr.Resource, wr.Op, wr.Name = Pods, Create, fmt.Sprintf("w%d-p%d", w, seq)
			c := corev1.Container{Name: "c", Image: "nginx"}
			if rng.IntN(5) > 0 {
				c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 100*(1+rng.IntN(3))))}
			}
			var pod *corev1.Pod
			pod, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: wr.Name}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}, metav1.CreateOptions{})
			obj = pod
			if c := Classify(err); c == OK || !c.Definite() {
				pods = append(pods, wr.Name)
			}
		case p < 0.60:
			wr.Resource, wr.Op, wr.Name = Pods, Delete, pick(&pods)
			err = cs.CoreV1().Pods(ns).Delete(ctx, wr.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		case p < 0.75 || (p < 0.85 && len(cms) == 0):
			wr.Resource, wr.Op, wr.Name = ConfigMaps, Create, fmt.Sprintf("w%d-c%d", w, seq)
			var cm *corev1.ConfigMap
			cm, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: wr.Name}, Data: map[string]string{"seq": fmt.Sprint(seq)}}, metav1.CreateOptions{})
			obj = cm
			if c := Classify(err); c == OK || !c.Definite() {
				cms = append(cms, wr.Name)
			}
		case p < 0.85:
			wr.Resource, wr.Op, wr.Name = ConfigMaps, Delete, pick(&cms)
			err = cs.CoreV1().ConfigMaps(ns).Delete(ctx, wr.Name, metav1.DeleteOptions{})
		default:
			// Raise or lower a quota: read, edit, update (409 on a race).
			wr.Resource, wr.Op, wr.Name = ResourceQuotas, Update, []string{"compute", "objects"}[rng.IntN(2)]
			var q *corev1.ResourceQuota
			q, err = cs.CoreV1().ResourceQuotas(ns).Get(ctx, wr.Name, metav1.GetOptions{})
			if err == nil {
				q.Spec.Hard = corev1.ResourceList{
					corev1.ResourcePods:        *resource.NewQuantity(int64(10+rng.IntN(21)), resource.DecimalSI),
					corev1.ResourceRequestsCPU: *resource.NewMilliQuantity(int64(1000+500*rng.IntN(7)), resource.DecimalSI),
				}
				if wr.Name == "objects" {
					q.Spec.Hard = corev1.ResourceList{
						"count/configmaps": *resource.NewQuantity(int64(10+rng.IntN(21)), resource.DecimalSI),
						"count/pods":       *resource.NewQuantity(int64(15+rng.IntN(26)), resource.DecimalSI),
					}
				}
				wr.Hard = q.Spec.Hard.DeepCopy()
				q, err = cs.CoreV1().ResourceQuotas(ns).Update(ctx, q, metav1.UpdateOptions{})
				obj = q
			}
		}
		wr.End = time.Now()
		wr.Class = Classify(err)
		if err != nil {
			wr.Err = err.Error()
		} else if obj != nil {
			wr.RV, _ = strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
			wr.UID = string(obj.GetUID())
		}
		if ctx.Err() != nil && err != nil {
			wr.Class = Canceled // the workload ended mid-request: it may have committed
		}
		r.h.Record(wr)
		if wr.Class == Canceled {
			return
		}
		switch wr.Class {
		case Conn:
			rep = r.nextReplica(rep)
			pace(ctx, 20*time.Millisecond)
		case Timeout, Unavailable, Other, Throttled:
			pace(ctx, 20*time.Millisecond)
		}
	}
}

// watcher follows one resource in all namespaces as a client-go client does: list, watch
// from the list's resourceVersion, resume from the last resourceVersion seen after the
// stream ends (on the next replica after a connection error), relist after 410 Gone.
func (r *run) watcher(ctx context.Context, wl *WatchLog, home int, pausable bool) {
	rep := home
	relist, killed := true, false
	for ctx.Err() == nil {
		cs := r.watchClients[rep]
		if relist {
			var rv string
			var items []WatchEvent
			var err error
			item := func(m metav1.Object) {
				n, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
				items = append(items, WatchEvent{Type: "LISTED", Namespace: m.GetNamespace(), Name: m.GetName(), RV: n, Replica: rep})
			}
			switch wl.Resource {
			case Pods:
				var l *corev1.PodList
				if l, err = cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
					rv = l.ResourceVersion
					for i := range l.Items {
						item(&l.Items[i])
					}
				}
			case ResourceQuotas:
				var l *corev1.ResourceQuotaList
				if l, err = cs.CoreV1().ResourceQuotas("").List(ctx, metav1.ListOptions{}); err == nil {
					rv = l.ResourceVersion
					for i := range l.Items {
						item(&l.Items[i])
					}
				}
			}
			if err != nil {
				if IsConnError(err) {
					rep = r.nextReplica(rep)
				}
				pace(ctx, 20*time.Millisecond)
				continue
			}
			n, _ := strconv.ParseInt(rv, 10, 64)
			wl.Relist(n, rep, items)
			relist = false
		}
		last := wl.Last()
		// Short watches (the server ends each after 1-4 s) resume often, as every client's
		// do when the server's watch timeout passes, so a gap at a resume point shows.
		timeout := int64(1 + rand.IntN(4))
		opts := metav1.ListOptions{ResourceVersion: strconv.FormatInt(last, 10), AllowWatchBookmarks: true, TimeoutSeconds: &timeout}
		var w watch.Interface
		var err error
		switch wl.Resource {
		case Pods:
			w, err = cs.CoreV1().Pods("").Watch(ctx, opts)
		case ResourceQuotas:
			w, err = cs.CoreV1().ResourceQuotas("").Watch(ctx, opts)
		}
		if err != nil {
			switch {
			case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
				wl.Gone()
				relist = true
			case IsConnError(err):
				rep = r.nextReplica(rep)
				pace(ctx, 20*time.Millisecond)
			default:
				pace(ctx, 20*time.Millisecond)
			}
			continue
		}
		if len(wl.Segments()[len(wl.Segments())-1].Events) > 0 || last != wl.Segments()[len(wl.Segments())-1].From {
			wl.Resume(last, killed)
		}
		kills := r.top.replicas[rep].kills.Load()
		relist = r.consume(ctx, wl, w, rep, pausable)
		// A replica SIGKILLed while it served the stream may have cut it inside a revision
		// (a known limit, docs/ha.md): the resume from it may skip the rest of that revision.
		killed = r.top.replicas[rep].kills.Load() != kills
		if !relist && rand.IntN(8) == 0 {
			// Now and then start over with a list, as a restarted client does: the list
			// is checked against etcd too.
			relist = true
		}
	}
}

// consume reads one watch stream until it ends; it reports whether a relist is needed.
//
// Asked to pause, it stops at the next revision boundary, as a careful client does: the
// events one transaction commits share a resourceVersion, and a client that stopped inside
// a revision and resumed after it would skip the rest of it. The first event of the next
// revision is left unread, to come again after the resume.
func (r *run) consume(ctx context.Context, wl *WatchLog, w watch.Interface, rep int, pausable bool) bool {
	defer w.Stop()
	var pauses chan pauseRequest
	if pausable {
		pauses = r.pause
	}
	var pending *pauseRequest
	var pauseAfter int64
	pause := func() {
		w.Stop()
		pending.paused <- wl.Last()
		<-pending.resume
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case req := <-pauses:
			pending, pauseAfter, pauses = &req, wl.Last(), nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				if pending != nil {
					pause() // the server ended the stream between revisions
				}
				return false
			}
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					wl.Gone()
					return true
				}
				return false
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				r.t.Errorf("watch event %s: %v", ev.Type, err)
				return false
			}
			rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
			if pending != nil && rv > pauseAfter {
				pause()
				return false
			}
			if err := wl.Observe(WatchEvent{Type: string(ev.Type), Namespace: m.GetNamespace(), Name: m.GetName(), RV: rv, Replica: rep}); err != nil {
				r.t.Error(err)
			}
		}
	}
}

// sampler checks I1 with the project's own invariant checker at the current revision,
// read through the etcd client directly, until ctx ends.
func (r *run) sampler(ctx context.Context) {
	for ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := servertest.Violations(sctx, r.check)
		cancel()
		if err == nil {
			r.samples.Add(1)
			r.sampleMu.Lock()
			r.sampled = append(r.sampled, v...)
			r.sampleMu.Unlock()
		}
		pace(ctx, 500*time.Millisecond)
	}
}

// waitFor polls cond until it holds; the deadline fails the test.
func (r *run) waitFor(what string, cond func() bool) time.Duration {
	r.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > conditionDeadline {
			r.t.Fatalf("%s: not within %s\n%s", what, conditionDeadline, r.h.Summary())
		}
		time.Sleep(20 * time.Millisecond) // polling for a condition
	}
	return time.Since(start)
}

// ackedAfter reports whether some write (of writer w, or any when w < 0) started after t
// was acknowledged.
func (r *run) ackedAfter(t time.Time, w int) bool {
	for _, x := range r.h.Writes() {
		if x.Class == OK && x.Start.After(t) && (w < 0 || x.Writer == w) {
			return true
		}
	}
	return false
}

// allAckedAfter reports whether every writer had a write acknowledged that started after t.
func (r *run) allAckedAfter(t time.Time) bool {
	seen := map[int]bool{}
	for _, x := range r.h.Writes() {
		if x.Class == OK && x.Start.After(t) {
			seen[x.Writer] = true
		}
	}
	return len(seen) == writers
}

// raftTerm is the highest raft term the etcd members report (it moves with every
// election).
func (r *run) raftTerm(ctx context.Context) uint64 {
	var term uint64
	for _, ep := range r.top.etcd.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := r.top.etcd.Status(sctx, ep)
		cancel()
		if err == nil && st.RaftTerm > term {
			term = st.RaftTerm
		}
	}
	return term
}

// revision is etcd's current revision.
func (r *run) revision(ctx context.Context) int64 {
	r.t.Helper()
	resp, err := r.top.etcd.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.Header.Revision
}

// faultReplica SIGKILLs quotad replica i while writes go to it, measures how long its
// writers take to be acknowledged through another replica, then restarts it.
func (r *run) faultReplica(i int) {
	t := r.t
	r.setPhase(fmt.Sprintf("kill-quotad-%d", i))
	k := time.Now()
	r.top.replicas[i].kill()
	// Writers at home on i: each must get a write acknowledged elsewhere.
	var failover []time.Duration
	for w := i; w < writers; w += len(r.top.replicas) {
		w := w
		r.waitFor(fmt.Sprintf("writer %d failing over from replica %d", w, i), func() bool { return r.ackedAfter(k, w) })
		for _, x := range r.h.Writes() {
			if x.Writer == w && x.Class == OK && x.Start.After(k) {
				failover = append(failover, x.End.Sub(k))
				break
			}
		}
	}
	sort.Slice(failover, func(a, b int) bool { return failover[a] < failover[b] })
	r.setPhase(fmt.Sprintf("restart-quotad-%d", i))
	s := time.Now()
	r.top.replicas[i].launch(t)
	r.logf("quotad replica %d SIGKILLed: its %d writers acknowledged via another replica after median %s, max %s; restarted in %s",
		i, len(failover), failover[len(failover)/2].Round(time.Millisecond), failover[len(failover)-1].Round(time.Millisecond), time.Since(s).Round(time.Millisecond))
}

// faultLeader SIGKILLs the etcd leader, waits until writes are acknowledged again, and
// restarts it.
func (r *run) faultLeader() {
	l := r.top.leader()
	r.setPhase("kill-etcd-leader")
	k := time.Now()
	r.top.killMember(l)
	d := r.waitFor("writes after the etcd leader was killed", func() bool { return r.ackedAfter(k, -1) })
	all := r.waitFor("every writer after the etcd leader was killed", func() bool { return r.allAckedAfter(k) })
	r.setPhase("restart-etcd-member")
	s := time.Now()
	r.top.restartMembers(l)
	r.logf("etcd leader (member %d) SIGKILLed: first write acknowledged after %s, every writer after %s; member back in %s",
		l, d.Round(time.Millisecond), (d + all).Round(time.Millisecond), time.Since(s).Round(time.Millisecond))
}

// faultCompaction compacts etcd at the etcd log's progress while watches run; the first pods
// watcher drops its watch before and resumes from its old resourceVersion after, as a
// client that was away does (410 Gone and a relist, unless the server still serves it).
func (r *run) faultCompaction(ctx context.Context, wl *WatchLog) {
	r.setPhase("compaction")
	req := pauseRequest{paused: make(chan int64), resume: make(chan struct{})}
	r.pause <- req
	last := <-req.paused
	r.waitFor("writes after the watcher paused", func() bool { return r.log.Progress() > last+10 })
	rev := r.log.Progress()
	if _, err := r.top.etcd.Compact(ctx, rev); err != nil {
		r.t.Fatalf("compact at %d: %v", rev, err)
	}
	segs := len(wl.Segments())
	close(req.resume)
	r.waitFor("the paused watcher resuming", func() bool {
		s := wl.Segments()
		return len(s) > segs || s[len(s)-1].Last > rev
	})
	gone := len(wl.Segments()) > segs
	r.logf("compacted etcd at revision %d (paused watcher at %d): 410 Gone and relist: %v", rev, last, gone)
}

// faultQuorum SIGKILLs two etcd members at once: no write may be acknowledged until they
// are back. The outage lasts until as many writes as there are writers, started during it, have failed.
func (r *run) faultQuorum(ctx context.Context) {
	t := r.t
	a := r.top.leader()
	b := (a + 1 + r.rng.IntN(r.top.members-1)) % r.top.members
	r.setPhase("quorum-lost")
	r.top.killMember(a)
	r.top.killMember(b)
	from := time.Now()
	// A probe: one write with a long client timeout, to see what quotad itself answers
	// without quorum (the writers give up at writeTimeout). Its answer is only logged; the
	// write is not part of the history (it may commit once quorum is back).
	probe := make(chan string, 1)
	go func() {
		alive := 0
		for i, rep := range r.top.replicas {
			if rep.alive() {
				alive = i
			}
		}
		cfg := rest.CopyConfig(r.top.replicas[alive].config)
		cfg.Timeout = 3 * writeTimeout
		cs := kubernetes.NewForConfigOrDie(cfg)
		s := time.Now()
		_, err := cs.CoreV1().ConfigMaps(probeNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}, metav1.CreateOptions{})
		msg := "acknowledged"
		if err != nil {
			msg = fmt.Sprintf("%s (%.120s)", Classify(err), err.Error())
		}
		probe <- fmt.Sprintf("%s after %s", msg, time.Since(s).Round(time.Millisecond))
	}()
	r.waitFor("writes failing without quorum", func() bool {
		n := 0
		for _, w := range r.h.Writes() {
			if !w.Start.Before(from) && w.Class != OK {
				n++
			}
		}
		return n >= writers
	})
	to := time.Now()
	r.setPhase("quorum-restored")
	r.top.restartMembers(a, b)
	back := time.Now()
	d := r.waitFor("writes after quorum came back", func() bool { return r.ackedAfter(back, -1) })
	var failed, acked int
	classes := map[Class]int{}
	for _, w := range r.h.Writes() {
		if !w.Start.Before(from) && !w.End.After(to) {
			classes[w.Class]++
			if w.Class == OK {
				acked++
			} else {
				failed++
			}
		}
	}
	r.logf("a write with a %s timeout sent to a replica as quorum was lost: %s", 3*writeTimeout, <-probe)
	if bad := r.h.AckedBetween(from, to); len(bad) > 0 {
		for _, w := range bad[:min(len(bad), 10)] {
			t.Errorf("write acknowledged while etcd had lost quorum: %+v", w)
		}
	}
	r.logf("etcd members %d and %d SIGKILLed (quorum lost) for %s: %d writes failed %v, %d acknowledged; after restart the first write acknowledged after %s",
		a, b, to.Sub(from).Round(time.Millisecond), failed, classes, acked, d.Round(time.Millisecond))
}

// runFaults runs the workload with the fault schedule and then checks the history.
func (r *run) runFaults(ctx context.Context) {
	t := r.t
	var err error
	if r.log, err = StartEtcdLog(ctx, r.top.etcd, r.h.Namespaces); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	term := r.raftTerm(ctx)
	r.setPhase("before-faults")
	wctx, stopWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.writer(wctx, w) }()
	}
	var pausable *WatchLog
	for i := range r.top.replicas {
		for _, res := range []string{Pods, ResourceQuotas} {
			wl := r.h.NewWatch(res, i)
			p := i == 0 && res == Pods
			if p {
				pausable = wl
			}
			wg.Add(1)
			go func() { defer wg.Done(); r.watcher(wctx, wl, i, p) }()
		}
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.sampler(wctx) }()
	defer func() {
		stopWork()
		wg.Wait()
	}()

	r.waitFor("every writer acknowledged", func() bool { return r.allAckedAfter(start) })
	r.waitFor("a hundred writes before the faults", func() bool { return len(r.h.Writes()) >= 100 })
	// An election before any fault (a starved machine misses heartbeats) may fail writes.
	steadyLeader := r.raftTerm(ctx) == term
	for round := 0; ; round++ {
		r.faultReplica(r.rng.IntN(len(r.top.replicas)))
		r.faultLeader()
		r.faultCompaction(ctx, pausable)
		r.faultQuorum(ctx)
		r.setPhase("steady")
		s := time.Now()
		r.waitFor("every writer after the faults", func() bool { return r.allAckedAfter(s) })
		if time.Since(start) >= minDuration(t) {
			break
		}
	}
	for time.Since(start) < minDuration(t) {
		r.waitFor("writes", func() bool { return r.ackedAfter(time.Now(), -1) })
	}
	stopWork()
	wg.Wait()
	elapsed := time.Since(start)

	if f := os.Getenv("QUOTAD_HA_DUMP"); f != "" {
		b, _ := json.MarshalIndent(r.h.Writes(), "", " ")
		_ = os.WriteFile(f, b, 0o644)
	}

	// Check: the log complete to the end revision, then the history against it.
	end := r.revision(ctx)
	if err := r.log.WaitFor(ctx, end); err != nil {
		t.Fatal(err)
	}
	r.log.Stop()
	v, err := servertest.Violations(ctx, r.check)
	if err != nil {
		t.Fatal(err)
	}
	r.samples.Add(1)
	r.sampled = append(r.sampled, v...)
	for _, s := range r.sampled {
		t.Errorf("sampled check: %s", s)
	}
	// Before any fault, while etcd kept its leader, no write may fail with a 5xx: a healthy
	// cluster answers every write.
	for _, w := range r.h.Writes() {
		if w.Phase == "before-faults" && w.Class == Unavailable {
			if steadyLeader {
				t.Errorf("write failed before any fault: %+v", w)
			} else {
				t.Logf("write failed before any fault, during an election: %+v", w)
			}
		}
	}
	if !steadyLeader {
		r.logf("etcd elected a new leader before any fault (the machine was starved)")
	}
	rep, err := Check(ctx, r.h, r.log, end)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Error(v)
	}
	var gone, resumes, segs, shared int
	for _, wl := range r.h.watches {
		for _, s := range wl.Segments() {
			segs++
			resumes += len(s.Resumes)
			shared += s.Shared
			if s.Gone {
				gone++
			}
		}
	}
	r.logf("workload %s, %d writers over %d replicas, %d writes recorded, etcd revisions %d..%d, %d events logged", elapsed.Round(time.Millisecond), writers, len(r.top.replicas), len(r.h.Writes()), r.log.Start, end, len(r.log.Events()))
	r.logf("checked I1 at %d revisions (replayed) and %d samples (servertest.Violations), I2 on %d quota writes, %d watch events in %d segments (%d resumes, %d ended by 410 Gone; %d events shared their resourceVersion with the one before), %d lists",
		rep.Revisions, r.samples.Load(), rep.QuotaChanges, rep.WatchEvents, segs, resumes, gone, shared, rep.Lists)
	r.logf("quota refusals checked against the quotas' stored states: %d, of which %d reported a state already replaced by a write acknowledged before the request began", rep.Refusals, rep.StaleRefusals)
	r.logf("watch events missed in a revision cut short by a SIGKILL of the serving replica (the known limit): %d", rep.CutByKill)
	t.Logf("writes by phase and outcome:\n%s", r.h.Summary())
}
