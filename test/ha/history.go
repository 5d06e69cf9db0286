package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/codec"
)

// Resources the checker follows, by their kube-apiserver key segment.
const (
	Pods           = "pods"
	ConfigMaps     = "configmaps"
	ResourceQuotas = "resourcequotas"
)

var followed = []string{Pods, ConfigMaps, ResourceQuotas}

// ClusterQuotas are quota.openshift.io ClusterResourceQuotas (cluster-scoped), followed too.
const ClusterQuotas = "clusterresourcequotas"

const clusterQuotaPrefix = "/registry/quota.openshift.io/clusterresourcequotas/"

// prefixes are the key prefixes the log follows.
var prefixes = []string{"/registry/pods/", "/registry/configmaps/", "/registry/resourcequotas/", clusterQuotaPrefix}

// Key is the etcd key of a core object (kube-apiserver's layout).
func Key(resource, ns, name string) string {
	return "/registry/" + resource + "/" + ns + "/" + name
}

// parseKey splits a followed key into resource, namespace and name (a cluster quota's
// namespace is "").
func parseKey(k string) (resource, ns, name string, ok bool) {
	if n, found := strings.CutPrefix(k, clusterQuotaPrefix); found && n != "" && !strings.Contains(n, "/") {
		return ClusterQuotas, "", n, true
	}
	parts := strings.Split(strings.TrimPrefix(k, "/registry/"), "/")
	if len(parts) != 3 || !strings.HasPrefix(k, "/registry/") {
		return "", "", "", false
	}
	for _, r := range followed {
		if parts[0] == r {
			return parts[0], parts[1], parts[2], true
		}
	}
	return "", "", "", false
}

// Class is the outcome of a write as its client saw it.
type Class string

// Outcome classes. Refused ones are definite (the write did not commit); Indeterminate ones
// may or may not have committed.
const (
	OK          Class = "ok"
	Forbidden   Class = "forbidden"   // 403: quota exceeded
	Conflict    Class = "conflict"    // 409 on update: stale resourceVersion
	Exists      Class = "exists"      // 409 on create: an earlier attempt (client retry) committed
	NotFound    Class = "notfound"    // 404
	Invalid     Class = "invalid"     // 400, 422
	Throttled   Class = "throttled"   // 429
	Timeout     Class = "timeout"     // 504, client deadline
	Unavailable Class = "unavailable" // other 5xx
	Conn        Class = "conn"        // connection refused, reset, EOF
	Canceled    Class = "canceled"    // the workload ended while the request was in flight
	Other       Class = "other"
)

// Definite reports whether a write of this class certainly did not commit.
func (c Class) Definite() bool {
	switch c {
	case Forbidden, Conflict, NotFound, Invalid, Throttled:
		return true
	}
	return false
}

// Classify maps a client-go error to its class.
func Classify(err error) Class {
	switch {
	case err == nil:
		return OK
	case apierrors.IsForbidden(err):
		return Forbidden
	case apierrors.IsAlreadyExists(err):
		return Exists
	case apierrors.IsConflict(err):
		return Conflict
	case apierrors.IsNotFound(err):
		return NotFound
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return Invalid
	case apierrors.IsTooManyRequests(err):
		return Throttled
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case IsConnError(err):
		return Conn
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code >= 500 {
		return Unavailable
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	return Other
}

// IsConnError reports an error of the connection itself (the replica is gone or going):
// the client fails over to another replica.
func IsConnError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return false
	}
	s := err.Error()
	for _, m := range []string{"EOF", "connection refused", "connection reset", "broken pipe", "http2: client connection lost", "server closed", "use of closed network connection"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// Op is a kind of write.
type Op string

// Write operations.
const (
	Create Op = "create"
	Update Op = "update"
	Delete Op = "delete"
)

// Write is one write request as its client saw it.
type Write struct {
	Writer, Replica int
	Phase           string
	Resource        string
	Namespace, Name string
	Op              Op
	Start, End      time.Time
	Class           Class
	Err             string
	// RV is the resourceVersion the server returned (an etcd revision) for acknowledged
	// creates and updates.
	RV int64
	// UID of the created object; Hard the spec.hard sent by a quota update.
	UID  string
	Hard corev1.ResourceList
}

func (w Write) key() string { return Key(w.Resource, w.Namespace, w.Name) }

// WatchEvent is one event a watch delivered.
type WatchEvent struct {
	Type            string // ADDED, MODIFIED, DELETED, BOOKMARK
	Namespace, Name string
	RV              int64
	Replica         int
}

// Segment is a stretch of one watch with no permitted gap: it starts at a list's
// resourceVersion and continues across resumes (on the same or another replica, from the
// last resourceVersion seen) until a 410 Gone forces a relist, which starts the next.
type Segment struct {
	From    int64
	Replica int
	// Listed is what the list at From returned (each object's resourceVersion).
	Listed []WatchEvent
	Events []WatchEvent
	// Resumes are the resourceVersions the watch was resumed from.
	Resumes []int64
	// Broken are the resumes after a stream whose replica was SIGKILLed while it served
	// it: the stream may have been cut inside that revision, whose events share a
	// resourceVersion, so the resume may skip the rest of it (the known limit docs/ha.md
	// names; a server ends streams only between revisions).
	Broken []int64
	// Last is the highest resourceVersion seen (event or bookmark), From when none.
	Last int64
	// Gone tells the segment ended with a 410 Gone.
	Gone bool
	// Shared counts events whose resourceVersion equals the previous event's.
	Shared int
}

// WatchLog is everything one watcher saw.
type WatchLog struct {
	Resource string
	Home     int

	mu       sync.Mutex
	segments []*Segment
	problems []string
}

// Relist starts a new segment at a list's resourceVersion.
func (w *WatchLog) Relist(rv int64, replica int, items []WatchEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments = append(w.segments, &Segment{From: rv, Last: rv, Replica: replica, Listed: items})
}

// Resume records that the watch continues from rv (its last seen) after a break; killed
// tells that the replica serving the stream was SIGKILLed meanwhile.
func (w *WatchLog) Resume(rv int64, killed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.segments[len(w.segments)-1]
	s.Resumes = append(s.Resumes, rv)
	if killed {
		s.Broken = append(s.Broken, rv)
	}
}

// Gone records a 410 Gone ending the current segment.
func (w *WatchLog) Gone() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments[len(w.segments)-1].Gone = true
}

// Observe records an event; it reports (and records) one whose resourceVersion goes back,
// or is not above the resourceVersion the watch stream was started from.
//
// One quotad transaction commits several objects at one revision (a group commit's objects,
// or the quotas one write charges), so their events share a resourceVersion: it may repeat
// within a stream but never go back.
func (w *WatchLog) Observe(e WatchEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.segments[len(w.segments)-1]
	floor := s.From
	if n := len(s.Resumes); n > 0 {
		floor = s.Resumes[n-1]
	}
	if e.RV < s.Last || (e.RV <= floor && e.Type != "BOOKMARK") {
		err := fmt.Errorf("watch %s (home replica %d): %s %s/%s at resourceVersion %d after %d, stream from %d (replica %d)", w.Resource, w.Home, e.Type, e.Namespace, e.Name, e.RV, s.Last, floor, e.Replica)
		w.problems = append(w.problems, err.Error())
		return err
	}
	if e.Type != "BOOKMARK" {
		if n := len(s.Events); n > 0 && s.Events[n-1].RV == e.RV {
			s.Shared++
		}
		s.Events = append(s.Events, e)
	}
	s.Last = e.RV
	return nil
}

// Last returns the current segment's last resourceVersion.
func (w *WatchLog) Last() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.segments[len(w.segments)-1].Last
}

// Segments returns a copy of the segments.
func (w *WatchLog) Segments() []Segment {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Segment, len(w.segments))
	for i, s := range w.segments {
		out[i] = *s
		out[i].Events = append([]WatchEvent(nil), s.Events...)
	}
	return out
}

// History is what the clients of a fault test were told.
type History struct {
	// Namespaces are the namespaces the workload writes in; the checker looks only there.
	Namespaces []string

	mu      sync.Mutex
	writes  []Write
	watches []*WatchLog
}

// Record adds a write.
func (h *History) Record(w Write) {
	h.mu.Lock()
	h.writes = append(h.writes, w)
	h.mu.Unlock()
}

// NewWatch adds a watch log.
func (h *History) NewWatch(resource string, home int) *WatchLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := &WatchLog{Resource: resource, Home: home}
	h.watches = append(h.watches, w)
	return w
}

// Writes returns a copy of the writes recorded so far.
func (h *History) Writes() []Write {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Write(nil), h.writes...)
}

func (h *History) inScope(ns string) bool {
	for _, n := range h.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// AckedBetween returns the writes that started at or after from, returned at or before to,
// and were acknowledged: while etcd has lost quorum there must be none.
func (h *History) AckedBetween(from, to time.Time) []Write {
	var out []Write
	for _, w := range h.Writes() {
		if w.Class == OK && !w.Start.Before(from) && !w.End.After(to) {
			out = append(out, w)
		}
	}
	return out
}

// Summary counts writes by phase and class, in phase order of first appearance.
func (h *History) Summary() string {
	var phases []string
	counts := map[string]map[Class]int{}
	for _, w := range h.Writes() {
		if counts[w.Phase] == nil {
			counts[w.Phase] = map[Class]int{}
			phases = append(phases, w.Phase)
		}
		counts[w.Phase][w.Class]++
	}
	var b strings.Builder
	for _, p := range phases {
		c := counts[p]
		classes := make([]string, 0, len(c))
		for k := range c {
			classes = append(classes, string(k))
		}
		sort.Strings(classes)
		fmt.Fprintf(&b, "%-16s", p)
		for _, k := range classes {
			fmt.Fprintf(&b, " %s=%d", k, c[Class(k)])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Event is one committed change of a followed key.
type Event struct {
	Rev    int64
	Key    string
	Delete bool
	// Create tells a put that created the key (its create revision is Rev).
	Create bool
	Value  []byte
}

// EtcdLog is what etcd committed to the followed keys of some namespaces: the values at a
// start revision and every change after it, read with an etcd watch that the client resumes
// across member failures. Compaction must not pass Progress (the test compacts at it).
type EtcdLog struct {
	client     *clientv3.Client
	namespaces map[string]bool
	// Start is the revision of the initial snapshot.
	Start   int64
	initial map[string]*mvccpb.KeyValue

	mu       sync.Mutex
	events   []Event
	progress int64
	err      error
	cancel   context.CancelFunc
	done     chan struct{}
}

// StartEtcdLog snapshots the followed keys of namespaces and follows their changes until
// Stop.
func StartEtcdLog(ctx context.Context, client *clientv3.Client, namespaces []string) (*EtcdLog, error) {
	l := &EtcdLog{client: client, namespaces: map[string]bool{}, initial: map[string]*mvccpb.KeyValue{}, done: make(chan struct{})}
	for _, ns := range namespaces {
		l.namespaces[ns] = true
	}
	resp, err := client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	l.Start = resp.Header.Revision
	for _, p := range prefixes {
		resp, err := client.Get(ctx, p, clientv3.WithPrefix(), clientv3.WithRev(l.Start))
		if err != nil {
			return nil, err
		}
		for _, kv := range resp.Kvs {
			if l.follows(string(kv.Key)) {
				l.initial[string(kv.Key)] = kv
			}
		}
	}
	l.progress = l.Start
	wctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	wch := client.Watch(wctx, "/registry/", clientv3.WithPrefix(), clientv3.WithRev(l.Start+1), clientv3.WithProgressNotify())
	go l.follow(wctx, wch)
	return l, nil
}

func (l *EtcdLog) follows(key string) bool {
	res, ns, _, ok := parseKey(key)
	return ok && (l.namespaces[ns] || res == ClusterQuotas)
}

// follow appends the watch's events. The client resumes the watch on another member when
// its member dies; should the watch end otherwise, it is made again from the last revision
// seen. (A member without a leader keeps the watch open: nothing commits meanwhile.)
func (l *EtcdLog) follow(ctx context.Context, wch clientv3.WatchChan) {
	defer close(l.done)
	for {
		for resp := range wch {
			if err := resp.Err(); err != nil {
				if errors.Is(err, context.Canceled) || ctx.Err() != nil {
					return
				}
				if resp.CompactRevision != 0 {
					l.mu.Lock()
					l.err = fmt.Errorf("etcd log: compacted at %d past its progress: %w", resp.CompactRevision, err)
					l.mu.Unlock()
					return
				}
				continue // the channel closes and the watch is made again
			}
			l.mu.Lock()
			for _, ev := range resp.Events {
				if !l.follows(string(ev.Kv.Key)) {
					continue
				}
				e := Event{Rev: ev.Kv.ModRevision, Key: string(ev.Kv.Key)}
				if ev.Type == clientv3.EventTypeDelete {
					e.Delete = true
				} else {
					e.Create = ev.Kv.CreateRevision == ev.Kv.ModRevision
					e.Value = ev.Kv.Value
				}
				l.events = append(l.events, e)
			}
			if n := len(resp.Events); n > 0 && resp.Events[n-1].Kv.ModRevision > l.progress {
				l.progress = resp.Events[n-1].Kv.ModRevision
			}
			if resp.IsProgressNotify() && resp.Header.Revision > l.progress {
				l.progress = resp.Header.Revision
			}
			l.mu.Unlock()
		}
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		from := l.progress + 1
		l.mu.Unlock()
		pace(ctx, 50*time.Millisecond)
		wch = l.client.Watch(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify())
	}
}

// Progress is the revision up to which every change has been logged.
func (l *EtcdLog) Progress() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.progress
}

// WaitFor returns once every change up to rev has been logged (asking etcd for progress
// notifications), or with ctx's error.
func (l *EtcdLog) WaitFor(ctx context.Context, rev int64) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		l.mu.Lock()
		p, err := l.progress, l.err
		l.mu.Unlock()
		if err != nil {
			return err
		}
		if p >= rev {
			return nil
		}
		_ = l.client.RequestProgress(ctx)
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd log at %d waiting for %d: %w", p, rev, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop ends the log.
func (l *EtcdLog) Stop() {
	l.cancel()
	<-l.done
}

// Events returns a copy of the logged events.
func (l *EtcdLog) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Err is the log's own failure (compacted past its progress), if any.
func (l *EtcdLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// decode reads a stored value of a followed resource.
func decode(resource string, value []byte) (runtime.Object, error) {
	var obj runtime.Object
	switch resource {
	case Pods:
		obj = &corev1.Pod{}
	case ConfigMaps:
		obj = &corev1.ConfigMap{}
	case ResourceQuotas:
		obj = &corev1.ResourceQuota{}
	case ClusterQuotas:
		crq := &clusterquota.ClusterResourceQuota{}
		return crq, codec.DecodeClusterQuota(value, crq) // its entries stored as rows
	default:
		return nil, fmt.Errorf("unfollowed resource %s", resource)
	}
	return obj, json.Unmarshal(value, obj)
}

// nsState is the followed objects of one namespace at some revision.
type nsState map[string]map[string]runtime.Object // resource → name → object

func (s nsState) list(gr schema.GroupResource) ([]runtime.Object, error) {
	if gr.Group != "" {
		return nil, nil
	}
	names := make([]string, 0, len(s[gr.Resource]))
	for n := range s[gr.Resource] {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]runtime.Object, 0, len(names))
	for _, n := range names {
		out = append(out, s[gr.Resource][n])
	}
	return out, nil
}

// Report is the result of Check.
type Report struct {
	Violations []string
	// Revisions is how many revisions the quota invariants were checked at; QuotaChanges how
	// many quota writes I2 was checked on; WatchEvents how many watch events were compared;
	// Lists how many watchers' lists.
	Revisions, QuotaChanges, WatchEvents, Lists int
	// Refusals is how many quota refusals were checked; StaleRefusals how many reported a
	// quota state that a write acknowledged before the refused request began had already
	// replaced (a refusal decided on a lagging read).
	Refusals, StaleRefusals int
	// CutByKill is how many events watches missed in a revision cut short by a SIGKILL of
	// the replica serving them (Segment.Broken).
	CutByKill int

	// versions is every stored state of every quota and cluster quota, by key, in revision
	// order (checkQuotas fills it for checkRefusals).
	versions map[string][]quotaVersion
	// swings holds each namespaced revision's batchSwing, by "<namespace>@<revision>".
	swings map[string]batchSwing
}

// quotaVersion is a quota's state from revision rev on (until the next version).
type quotaVersion struct {
	rev        int64
	used, hard corev1.ResourceList
}

// batchSwing is what the objects one revision changed in a namespace moved usage by: the
// sums of their increases (up) and of their decreases (down, negative), per resource. A
// refusal judged inside that revision's group commit saw the usage before it plus the
// changes of the writes planned before the refused one, which lies between before+down
// and before+up.
type batchSwing struct{ up, down corev1.ResourceList }

func (r *Report) violate(format string, args ...any) {
	if len(r.Violations) < 200 {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

// Check compares the history with the etcd log. end is the revision the log was complete
// to (WaitFor(end) returned); the state replayed to it is compared with etcd's at end
// (which must not be compacted yet).
func Check(ctx context.Context, h *History, l *EtcdLog, end int64) (*Report, error) {
	r := &Report{}
	if err := l.Err(); err != nil {
		return nil, err
	}
	events := l.Events()
	kept := events[:0:0]
	for _, e := range events {
		if e.Rev <= end {
			kept = append(kept, e)
		}
	}
	events = kept
	if err := checkQuotas(r, l, events); err != nil {
		return nil, err
	}
	if err := checkFinal(ctx, r, l, events, end); err != nil {
		return nil, err
	}
	checkWrites(r, h, l.initial, events)
	checkWatches(r, h, events)
	checkLists(r, h, l, events)
	checkRefusals(r, h)
	return r, nil
}

// refusalRE parses upstream's quota refusal: "exceeded quota: <name>, requested: <list>,
// used: <list>, limited: <list>".
var refusalRE = regexp.MustCompile(`exceeded quota: ([^,]+), requested: (\S+), used: (\S+), limited: (\S+)$`)

// parseList parses "a=1,b=2".
func parseList(s string) (corev1.ResourceList, bool) {
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, false
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, false
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, true
}

// checkRefusals checks every quota refusal against the quota's stored states: the used and
// limited amounts it reports must be a state the quota (or cluster quota) had at some
// revision, or passed through inside one group commit. One that no write acknowledged
// before the request began had replaced is linearizable; the others are counted as stale
// (decided on a lagging read).
func checkRefusals(r *Report, h *History) {
	type ack struct {
		end time.Time
		rv  int64
	}
	var acks []ack
	writes := h.Writes()
	for _, w := range writes {
		if w.Class == OK && w.RV > 0 {
			acks = append(acks, ack{w.End, w.RV})
		}
	}
	sort.Slice(acks, func(a, b int) bool { return acks[a].end.Before(acks[b].end) })
	maxRV := make([]int64, len(acks)) // highest RV acknowledged by acks[:i+1]
	for i, a := range acks {
		maxRV[i] = a.rv
		if i > 0 && maxRV[i-1] > a.rv {
			maxRV[i] = maxRV[i-1]
		}
	}
	for _, w := range writes {
		if w.Class != Forbidden {
			continue
		}
		m := refusalRE.FindStringSubmatch(w.Err)
		if m == nil {
			continue // not a quota refusal (e.g. "must specify")
		}
		used, ok1 := parseList(m[3])
		limited, ok2 := parseList(m[4])
		if !ok1 || !ok2 {
			r.violate("unparsable quota refusal of %s: %s", w.key(), w.Err)
			continue
		}
		key := Key(ResourceQuotas, w.Namespace, m[1])
		if _, ok := r.versions[key]; !ok {
			key = clusterQuotaPrefix + m[1]
		}
		vs := r.versions[key]
		// The last revision acknowledged to any client before this request began.
		i := sort.Search(len(acks), func(i int) bool { return !acks[i].end.Before(w.Start) })
		var floor int64
		if i > 0 {
			floor = maxRV[i-1]
		}
		r.Refusals++
		matched, current := false, false
		for j, v := range vs {
			// The refusal may report a state inside a group commit: the used of the
			// batch's writes planned before it, between the quota's used before the
			// batch's revision and at it.
			before := v.used
			if j > 0 {
				before = vs[j-1].used
			}
			if !subsetEqual(limited, v.hard) {
				continue
			}
			if !between(used, before, v.used) && !r.withinSwing(used, before, w.Namespace, v.rev) {
				continue
			}
			matched = true
			if j == len(vs)-1 || vs[j+1].rev > floor {
				current = true
			}
		}
		switch {
		case !matched:
			r.violate("refusal of %s (writer %d via replica %d, %s) reports %s used %s limited %s, a state it never had", w.key(), w.Writer, w.Replica, w.Phase, m[1], m[3], m[4])
		case !current:
			r.StaleRefusals++
		}
	}
}

// between reports whether every name of a has a quantity between (inclusive) its
// quantities in x and y, in either order.
// swing adds to the batchSwing of ns at rev the change event e makes to an object of res
// (old is the object before it, nil when created).
func (r *Report) swing(reg quota.Registry, ns string, rev int64, res string, old runtime.Object, e Event) error {
	ev := reg.Get(schema.GroupResource{Resource: res})
	if ev == nil {
		return nil
	}
	var before, after corev1.ResourceList
	var err error
	if old != nil {
		if before, err = ev.Usage(old); err != nil {
			return err
		}
	}
	if !e.Delete {
		obj, err := decode(res, e.Value)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Key, err)
		}
		if after, err = ev.Usage(obj); err != nil {
			return err
		}
	}
	k := ns + "@" + strconv.FormatInt(rev, 10)
	sw := r.swings[k]
	if sw.up == nil {
		sw = batchSwing{up: corev1.ResourceList{}, down: corev1.ResourceList{}}
	}
	for name := range quota.ToSet(quota.ResourceNames(before)).Union(quota.ToSet(quota.ResourceNames(after))) {
		d := after[name].DeepCopy()
		d.Sub(before[name])
		if d.Sign() > 0 {
			sw.up[name] = quantity.Add(sw.up[name], d)
		} else if d.Sign() < 0 {
			sw.down[name] = quantity.Add(sw.down[name], d)
		}
	}
	r.swings[k] = sw
	return nil
}

// withinSwing reports whether used lies, for each of its resources, between before plus
// the decreases and before plus the increases of the revision rev in ns.
func (r *Report) withinSwing(used, before corev1.ResourceList, ns string, rev int64) bool {
	sw, ok := r.swings[ns+"@"+strconv.FormatInt(rev, 10)]
	if !ok {
		return false
	}
	for name, v := range used {
		b, ok := before[name]
		if !ok {
			return false
		}
		if quantity.Cmp(v, quantity.Add(b, sw.down[name])) < 0 || quantity.Cmp(v, quantity.Add(b, sw.up[name])) > 0 {
			return false
		}
	}
	return true
}

func between(a, x, y corev1.ResourceList) bool {
	for k, v := range a {
		p, ok1 := x[k]
		q, ok2 := y[k]
		if !ok1 || !ok2 {
			return false
		}
		if quantity.Cmp(p, q) > 0 {
			p, q = q, p
		}
		if quantity.Cmp(v, p) < 0 || quantity.Cmp(v, q) > 0 {
			return false
		}
	}
	return true
}

// subsetEqual reports whether every name of a has the same quantity in b.
func subsetEqual(a, b corev1.ResourceList) bool {
	for k, v := range a {
		w, ok := b[k]
		if !ok || quantity.Cmp(v, w) != 0 {
			return false
		}
	}
	return true
}

// checkLists compares every watcher's list with what etcd stored at the list's revision:
// the same objects of its resource in the namespaces followed, each at its mod revision.
func checkLists(r *Report, h *History, l *EtcdLog, events []Event) {
	type list struct {
		w   *WatchLog
		seg int
		s   Segment
	}
	var lists []list
	h.mu.Lock()
	watches := append([]*WatchLog(nil), h.watches...)
	h.mu.Unlock()
	for _, w := range watches {
		for i, s := range w.Segments() {
			if s.From >= l.Start {
				lists = append(lists, list{w, i, s})
			}
		}
	}
	sort.Slice(lists, func(a, b int) bool { return lists[a].s.From < lists[b].s.From })
	stored := map[string]int64{} // key → mod revision
	for k, kv := range l.initial {
		stored[k] = kv.ModRevision
	}
	i := 0
	for _, ls := range lists {
		for ; i < len(events) && events[i].Rev <= ls.s.From; i++ {
			if events[i].Delete {
				delete(stored, events[i].Key)
			} else {
				stored[events[i].Key] = events[i].Rev
			}
		}
		want := map[string]int64{}
		for k, rev := range stored {
			if res, ns, _, _ := parseKey(k); res == ls.w.Resource && h.inScope(ns) {
				want[k] = rev
			}
		}
		got := map[string]int64{}
		for _, it := range ls.s.Listed {
			if h.inScope(it.Namespace) {
				got[Key(ls.w.Resource, it.Namespace, it.Name)] = it.RV
			}
		}
		r.Lists++
		for k, rev := range want {
			if got[k] != rev {
				r.violate("list of %s (home replica %d, segment %d) at %d via replica %d: %s at %d, etcd has it at %d", ls.w.Resource, ls.w.Home, ls.seg, ls.s.From, ls.s.Replica, k, got[k], rev)
			}
		}
		for k, rev := range got {
			if _, ok := want[k]; !ok {
				r.violate("list of %s (home replica %d, segment %d) at %d via replica %d: %s at %d, not stored then", ls.w.Resource, ls.w.Home, ls.seg, ls.s.From, ls.s.Replica, k, rev)
			}
		}
	}
}

// checkQuotas replays the log and checks I1 and I2 at every revision.
//  1. Load the snapshot; 2. apply each revision's events; 3. at each revision, recompute
//     every quota of each namespace it touched and compare with the stored status (I1);
//  4. for each quota the revision wrote, no used[r] rose above hard[r] (I2).
func checkQuotas(r *Report, l *EtcdLog, events []Event) error {
	reg := evaluator.NewRegistry()
	state := map[string]nsState{}
	r.versions = map[string][]quotaVersion{}
	r.swings = map[string]batchSwing{}
	version := func(key string, rev int64, obj runtime.Object) {
		switch q := obj.(type) {
		case *corev1.ResourceQuota:
			r.versions[key] = append(r.versions[key], quotaVersion{rev, q.Status.Used, q.Spec.Hard})
		case *clusterquota.ClusterResourceQuota:
			r.versions[key] = append(r.versions[key], quotaVersion{rev, q.Status.Total.Used, q.Spec.Quota.Hard})
		}
	}
	var initial []string
	for k := range l.initial {
		initial = append(initial, k)
	}
	sort.Slice(initial, func(a, b int) bool { return l.initial[initial[a]].ModRevision < l.initial[initial[b]].ModRevision })
	put := func(key string, value []byte) (runtime.Object, error) {
		res, ns, name, _ := parseKey(key)
		obj, err := decode(res, value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if state[ns] == nil {
			state[ns] = nsState{}
		}
		if state[ns][res] == nil {
			state[ns][res] = map[string]runtime.Object{}
		}
		state[ns][res][name] = obj
		return obj, nil
	}
	crqs := map[string]*clusterquota.ClusterResourceQuota{}
	for _, k := range initial {
		kv := l.initial[k]
		if res, _, name, _ := parseKey(k); res == ClusterQuotas {
			c, err := decode(res, kv.Value)
			if err != nil {
				return err
			}
			crqs[name] = c.(*clusterquota.ClusterResourceQuota)
			version(k, kv.ModRevision, c)
			continue
		}
		obj, err := put(k, kv.Value)
		if err != nil {
			return err
		}
		version(k, kv.ModRevision, obj)
	}
	for i := 0; i < len(events); {
		rev := events[i].Rev
		touched := map[string]bool{}
		type change struct{ prev, next *corev1.ResourceQuota }
		var quotaWrites []change
		for ; i < len(events) && events[i].Rev == rev; i++ {
			e := events[i]
			res, ns, name, _ := parseKey(e.Key)
			if res == ClusterQuotas {
				// I2 on the cluster quota's total: a commit that raised used did not take it
				// above hard (I1 for cluster quotas is the sampled check's).
				var next *clusterquota.ClusterResourceQuota
				if !e.Delete {
					c, err := decode(res, e.Value)
					if err != nil {
						return fmt.Errorf("%s: %w", e.Key, err)
					}
					next = c.(*clusterquota.ClusterResourceQuota)
				}
				if prev := crqs[name]; prev != nil && next != nil {
					r.QuotaChanges++
					// I2 is Enforce's guarantee: the write was judged on prev's mode.
					if quota.EnforcementOf(prev.Annotations) != quota.Enforce {
						crqs[name] = next
						version(e.Key, rev, next)
						continue
					}
					for rn, hard := range next.Spec.Quota.Hard {
						now, before := next.Status.Total.Used[rn], prev.Status.Total.Used[rn]
						if quantity.Cmp(now, before) > 0 && quantity.Cmp(now, hard) > 0 {
							r.violate("I2 at revision %d: cluster quota %s %s used %s -> %s above hard %s", rev, name, rn, before.String(), now.String(), hard.String())
						}
					}
				}
				crqs[name] = next
				if next != nil {
					version(e.Key, rev, next)
				}
				continue
			}
			touched[ns] = true
			var prev *corev1.ResourceQuota
			if res == ResourceQuotas && state[ns] != nil {
				if p, ok := state[ns][res][name]; ok {
					prev = p.(*corev1.ResourceQuota)
				}
			}
			if res != ResourceQuotas {
				var old runtime.Object
				if state[ns] != nil {
					old = state[ns][res][name]
				}
				if err := r.swing(reg, ns, rev, res, old, e); err != nil {
					return err
				}
			}
			if e.Delete {
				if state[ns] != nil {
					delete(state[ns][res], name)
				}
				continue
			}
			obj, err := put(e.Key, e.Value)
			if err != nil {
				return err
			}
			version(e.Key, rev, obj)
			if res == ResourceQuotas && prev != nil {
				quotaWrites = append(quotaWrites, change{prev, obj.(*corev1.ResourceQuota)})
			}
		}
		r.Revisions++
		for ns := range touched {
			for _, o := range state[ns][ResourceQuotas] {
				rq := o.(*corev1.ResourceQuota)
				work := rq.DeepCopy()
				work.Status.Hard = work.Spec.Hard.DeepCopy()
				used, err := quota.CalculateUsage(work, reg, state[ns].list)
				if err != nil {
					return err
				}
				if !quota.Equals(rq.Status.Hard, rq.Spec.Hard) || !quota.Equals(rq.Status.Used, used) {
					r.violate("I1 at revision %d: quota %s/%s stored hard=%v used=%v, computed hard=%v used=%v", rev, ns, rq.Name, rq.Status.Hard, rq.Status.Used, rq.Spec.Hard, used)
				}
			}
		}
		for _, c := range quotaWrites {
			r.QuotaChanges++
			if quota.EnforcementOf(c.prev.Annotations) != quota.Enforce {
				continue // I2 is Enforce's guarantee: the write was judged on prev's mode
			}
			for name, hard := range c.next.Spec.Hard {
				now, before := c.next.Status.Used[name], c.prev.Status.Used[name]
				if quantity.Cmp(now, before) > 0 && quantity.Cmp(now, hard) > 0 {
					r.violate("I2 at revision %d: quota %s/%s %s used %s -> %s above hard %s", rev, c.next.Namespace, c.next.Name, name, before.String(), now.String(), hard.String())
				}
			}
		}
	}
	return nil
}

// checkFinal compares the log replayed to end with what etcd holds at end: the log itself
// must be complete for the rest of the checks to mean anything.
func checkFinal(ctx context.Context, r *Report, l *EtcdLog, events []Event, end int64) error {
	want := map[string]int64{}
	for k, kv := range l.initial {
		want[k] = kv.ModRevision
	}
	for _, e := range events {
		if e.Delete {
			delete(want, e.Key)
		} else {
			want[e.Key] = e.Rev
		}
	}
	got := map[string]int64{}
	for _, p := range prefixes {
		resp, err := l.client.Get(ctx, p, clientv3.WithPrefix(), clientv3.WithRev(end), clientv3.WithKeysOnly())
		if err != nil {
			return fmt.Errorf("reading etcd at %d: %w", end, err)
		}
		for _, kv := range resp.Kvs {
			if l.follows(string(kv.Key)) {
				got[string(kv.Key)] = kv.ModRevision
			}
		}
	}
	for k, rev := range want {
		if got[k] != rev {
			r.violate("etcd log incomplete: %s at mod revision %d in the log, %d in etcd at %d", k, rev, got[k], end)
		}
	}
	for k, rev := range got {
		if _, ok := want[k]; !ok {
			r.violate("etcd log incomplete: %s (mod revision %d) in etcd at %d, not in the log", k, rev, end)
		}
	}
	return nil
}

// checkWrites checks every write against the log. An update the server found to change
// nothing is acknowledged at the object's stored revision without a write (upstream's no-op
// update); when that revision precedes the log, it is the key's value in the log's initial
// snapshot.
func checkWrites(r *Report, h *History, initial map[string]*mvccpb.KeyValue, events []Event) {
	byKey := map[string][]Event{}
	for _, e := range events {
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	deleteAsked := map[string]bool{}
	for _, w := range h.Writes() {
		k := w.key()
		evs := byKey[k]
		switch {
		case w.Op == Delete && (w.Class == OK || !w.Class.Definite()):
			deleteAsked[k] = true
		}
		switch {
		case w.Class == OK && w.Op == Create:
			found := false
			for _, e := range evs {
				if e.Rev == w.RV && e.Create {
					found = true
					if uid := uidOf(w.Resource, e.Value); uid != w.UID {
						r.violate("acknowledged create of %s at %d: stored uid %s, returned %s", k, w.RV, uid, w.UID)
					}
				}
			}
			if !found {
				r.violate("acknowledged create of %s (writer %d via replica %d, %s) at resourceVersion %d is not in etcd's history", k, w.Writer, w.Replica, w.Phase, w.RV)
			}
		case w.Class == OK && w.Op == Update:
			found := false
			if kv := initial[k]; kv != nil && kv.ModRevision == w.RV {
				evs = append([]Event{{Rev: kv.ModRevision, Key: k, Value: kv.Value}}, evs...)
			}
			for _, e := range evs {
				if e.Rev == w.RV && !e.Delete {
					found = true
					if rq, err := decode(ResourceQuotas, e.Value); err == nil && !quota.Equals(rq.(*corev1.ResourceQuota).Spec.Hard, w.Hard) {
						r.violate("acknowledged update of %s at %d: stored spec.hard %v, sent %v", k, w.RV, rq.(*corev1.ResourceQuota).Spec.Hard, w.Hard)
					}
				}
			}
			if !found {
				r.violate("acknowledged update of %s (writer %d via replica %d, %s) at resourceVersion %d is not in etcd's history", k, w.Writer, w.Replica, w.Phase, w.RV)
			}
		case w.Class == OK && w.Op == Delete:
			if len(evs) == 0 || !evs[len(evs)-1].Delete {
				r.violate("acknowledged delete of %s (writer %d via replica %d, %s) is not in etcd's history", k, w.Writer, w.Replica, w.Phase)
			}
		case w.Class.Definite() && w.Op == Create:
			if len(evs) > 0 {
				r.violate("create of %s refused (%s: %s) but committed at %d", k, w.Class, w.Err, evs[0].Rev)
			}
		}
	}
	for k, evs := range byKey {
		res, _, _, _ := parseKey(k)
		if res == ResourceQuotas || res == ClusterQuotas {
			continue
		}
		for _, e := range evs {
			if e.Delete && !deleteAsked[k] {
				r.violate("%s deleted at %d without an acknowledged or pending delete", k, e.Rev)
			}
		}
	}
}

func uidOf(resource string, value []byte) string {
	obj, err := decode(resource, value)
	if err != nil {
		return ""
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return string(o.UID)
	case *corev1.ConfigMap:
		return string(o.UID)
	case *corev1.ResourceQuota:
		return string(o.UID)
	}
	return ""
}

// checkWatches compares each watch segment with the log's events of its resource in
// (From, Last].
func checkWatches(r *Report, h *History, events []Event) {
	h.mu.Lock()
	watches := append([]*WatchLog(nil), h.watches...)
	h.mu.Unlock()
	for _, w := range watches {
		w.mu.Lock()
		for _, p := range w.problems {
			r.violate("%s", p)
		}
		w.mu.Unlock()
		segments := w.Segments()
		for i, s := range segments {
			var want []WatchEvent
			for _, e := range events {
				res, ns, name, _ := parseKey(e.Key)
				if res != w.Resource || e.Rev <= s.From || e.Rev > s.Last || !h.inScope(ns) {
					continue
				}
				t := "MODIFIED"
				if e.Delete {
					t = "DELETED"
				} else if e.Create {
					t = "ADDED"
				}
				want = append(want, WatchEvent{Type: t, Namespace: ns, Name: name, RV: e.Rev})
			}
			var got []WatchEvent
			for _, e := range s.Events {
				if h.inScope(e.Namespace) {
					got = append(got, e)
				}
			}
			r.WatchEvents += len(got)
			if s.Gone || i == len(segments)-1 {
				// The client relisted, or the workload ended (the watch's last segment):
				// the revision it was in when its watch broke may have been cut short (its
				// events share a resourceVersion, and a client that stops reading inside
				// one and resumes after it would skip the rest — a 410 and relist, or
				// never resuming, is where that is harmless).
				for len(want) > len(got) && want[len(want)-1].RV == s.Last {
					want = want[:len(want)-1]
				}
			}
			for _, rv := range s.Broken {
				// Only the events of that revision the client saw before the kill count.
				seen := 0
				for _, e := range got {
					if e.RV == rv {
						seen++
					}
				}
				kept, k := want[:0:0], 0
				for _, e := range want {
					if e.RV == rv {
						if k++; k > seen {
							r.CutByKill++
							continue
						}
					}
					kept = append(kept, e)
				}
				want = kept
			}
			for j := 0; j < len(want) || j < len(got); j++ {
				var a, b WatchEvent
				if j < len(want) {
					a = want[j]
				}
				if j < len(got) {
					b = got[j]
				}
				if a.Type != b.Type || a.Namespace != b.Namespace || a.Name != b.Name || a.RV != b.RV {
					r.violate("watch %s (home replica %d) segment %d from %d to %d (resumed at %v): event %d is %s %s/%s@%d (replica %d), etcd has %s %s/%s@%d; got %s, want %s",
						w.Resource, w.Home, i, s.From, s.Last, s.Resumes, j, b.Type, b.Namespace, b.Name, b.RV, b.Replica, a.Type, a.Namespace, a.Name, a.RV,
						around(got, j), around(want, j))
					break
				}
			}
		}
	}
}

// around describes the events of l near index j.
func around(l []WatchEvent, j int) string {
	var parts []string
	for k := max(0, j-3); k < min(len(l), j+4); k++ {
		parts = append(parts, fmt.Sprintf("%d:%s %s/%s@%d", k, l[k].Type, l[k].Namespace, l[k].Name, l[k].RV))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// pace waits d or until ctx ends: it keeps a failing client from spinning, nothing more.
func pace(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
