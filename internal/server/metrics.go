package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry"
)

// metrics is quotad's Prometheus registry.
type metrics struct {
	reg *prometheus.Registry
	// gather is what /metrics serves: reg, and the embedded etcd member's own metrics.
	gather    prometheus.Gatherer
	repairs   *prometheus.CounterVec
	decisions *prometheus.CounterVec
	requests  prometheus.Histogram
	panics    *prometheus.CounterVec
	apiPanics prometheus.Counter
	// watchWaiting: watches whose initial events wait for their client.
	watchWaiting prometheus.Gauge
	// longReadWaiting: pages of long lists waiting for a seat.
	longReadWaiting prometheus.Gauge
	// queueWaiting: requests waiting for an in-flight seat; penalties: requests held for
	// their client's refusals.
	queueWaiting prometheus.Gauge
	penalties    prometheus.Counter
	// leaderStatus is leader_election_master_status (registered with --leader-elect).
	leaderStatus *prometheus.GaugeVec
	// quotaExceeded, quotaConstraint and quotaThresholds count quota findings
	// (observeFindings).
	quotaExceeded   *prometheus.CounterVec
	quotaConstraint *prometheus.CounterVec
	quotaThresholds *prometheus.CounterVec
	// writes: the writes of each committed group-commit transaction (its batch size).
	writes prometheus.Histogram
	// indexedLists: lists selecting one value of an indexed field, by whether the index
	// served them (observeIndexedList).
	indexedLists *prometheus.CounterVec
	// api: kube-apiserver's request metrics (metrics_requests.go); admission its admission
	// latency metrics (metrics_admission.go).
	api       *requestMetrics
	admission *admissionMetrics
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_resourcequota_repairs_total",
			Help: "Quota status drifts found and repaired by the verifier (any drift is a bug).",
		}, []string{"namespace", "resourcequota"}),
		quotaExceeded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_quota_exceeded_total",
			Help: "Writes that would take usage of a quota above hard: refused under Enforce, admitted under Warn and Audit (enforcement); namespace is the write's.",
		}, []string{"kind", "namespace", "name", "enforcement"}),
		quotaConstraint: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_quota_constraint_failures_total",
			Help: "Writes that did not specify what a quota needs (failed quota: must specify ...): refused under Enforce, admitted under Warn and Audit (enforcement).",
		}, []string{"kind", "namespace", "name", "enforcement"}),
		quotaThresholds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_quota_threshold_warnings_total",
			Help: "Writes that took usage of a quota's resource above its warn-at threshold, per resource.",
		}, []string{"kind", "namespace", "name", "resource"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_admission_quota_decisions_total",
			Help: "ResourceQuota admission decisions by result (admitted, refused, error).",
		}, []string{"result"}),
		requests: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "quotad_storage_transactions_per_request",
			Help:    "Namespace transactions committed together in one etcd request.",
			Buckets: []float64{1, 2, 4, 8, 16, 32},
		}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_controller_panics_total",
			Help: "Panics recovered in controllers (each is logged with its stack and is a bug).",
		}, []string{"controller"}),
		apiPanics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "quotad_apiserver_panics_total",
			Help: "Panics of request handlers recovered by the HTTP edge.",
		}),
		watchWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "quotad_apiserver_watches_waiting_for_client",
			Help: "Watches whose initial events wait for their client to read the ones already sent.",
		}),
		longReadWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "quotad_apiserver_long_read_pages_waiting",
			Help: "Pages of un-paged lists waiting for a seat of long reads.",
		}),
	}
	m.queueWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "quotad_apiserver_queued_requests",
		Help: "Requests waiting in their user's queue for an in-flight seat.",
	})
	m.penalties = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quotad_apiserver_penalized_requests_total",
		Help: "Requests held before being served because their client's requests kept being refused as malformed or unauthenticated.",
	})
	m.leaderStatus = newLeaderStatus()
	m.writes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quotad_storage_writes_per_transaction",
		Help:    "Writes committed together in one namespace's group-commit transaction (its batch size).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 9),
	})
	m.indexedLists = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quotad_field_index_lists_total",
		Help: "Lists an index can serve (one value of an indexed field, a pod's spec.nodeName; or a cluster-wide label selector), by whether the index served them (indexed) or every object was read (scanned: the index was loading or had not reached the list's revision in time, the list asked for an exact revision, or its label selector alone matched most objects).",
	}, []string{"resource", "outcome"})
	m.api = newRequestMetrics()
	m.admission = newAdmissionMetrics()
	m.reg.MustRegister(m.queueWaiting, m.penalties, m.leaderStatus, m.writes, m.indexedLists)
	m.reg.MustRegister(m.api.collectors()...)
	m.reg.MustRegister(m.admission.collectors()...)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), m.repairs, m.decisions, m.quotaExceeded, m.quotaConstraint, m.quotaThresholds, m.requests, m.panics, m.apiPanics, m.watchWaiting, m.longReadWaiting)
	m.gather = m.reg
	return m
}

// withEmbeddedEtcd serves the embedded etcd member's metrics with quotad's: the families
// named etcd_* that etcd's packages register with the process's default registry (its WAL
// fsyncs, backend commits, applies, leader), as a separate etcd serves them. Only for an
// embedded member: with --etcd-servers the same families exist in this process but
// measure nothing.
func (m *metrics) withEmbeddedEtcd() {
	m.gather = prometheus.Gatherers{m.reg, prefixGatherer{prometheus.DefaultGatherer, "etcd_"}}
}

// prefixGatherer gathers g's families whose names start with prefix.
type prefixGatherer struct {
	g      prometheus.Gatherer
	prefix string
}

func (p prefixGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := p.g.Gather()
	out := mfs[:0]
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), p.prefix) {
			out = append(out, mf)
		}
	}
	return out, err
}

// maxScrapesInFlight bounds concurrent /metrics requests; more get 503 at once.
const maxScrapesInFlight = 4

// handler serves /metrics to authenticated users that authz allows.
func (m *metrics) handler(auth apiserver.Authenticator, authz pathAuthorizer) http.Handler {
	return guarded(auth, authz, promhttp.HandlerFor(m.gather, promhttp.HandlerOpts{MaxRequestsInFlight: maxScrapesInFlight}))
}

// Repaired implements resourcequota.Observer.
func (m *metrics) Repaired(ns, name string) { m.repairs.WithLabelValues(ns, name).Inc() }

// ControllerPanicked implements controller.PanicObserver.
func (m *metrics) ControllerPanicked(name string) { m.panics.WithLabelValues(name).Inc() }

// InitControllerPanics implements controller.PanicCounterInitializer: every controller's
// panic count is exported from its start, at zero.
func (m *metrics) InitControllerPanics(name string) { m.panics.WithLabelValues(name) }

// observeIndexedList counts a list selecting one value of an indexed field.
func (m *metrics) observeIndexedList(gr schema.GroupResource, indexed bool) {
	outcome := "scanned"
	if indexed {
		outcome = "indexed"
	}
	m.indexedLists.WithLabelValues(gr.String(), outcome).Inc()
}

// observeWrites records the batch size of one committed group-commit transaction.
func (m *metrics) observeWrites(n int) { m.writes.Observe(float64(n)) }

// observeWatchWaiting counts the watches waiting for their client.
func (m *metrics) observeWatchWaiting(delta int) { m.watchWaiting.Add(float64(delta)) }

// observeQueueWaiting counts the requests waiting for an in-flight seat.
func (m *metrics) observeQueueWaiting(delta int) { m.queueWaiting.Add(float64(delta)) }

// observeLongReadWaiting counts the pages of long reads waiting for a seat.
func (m *metrics) observeLongReadWaiting(delta int) { m.longReadWaiting.Add(float64(delta)) }

// observeRequest records the transactions of one combined etcd request.
func (m *metrics) observeRequest(txns int) { m.requests.Observe(float64(txns)) }

// observeQuota counts one admission decision.
func (m *metrics) observeQuota(err error) {
	switch {
	case err == nil:
		m.decisions.WithLabelValues("admitted").Inc()
	case apierrors.IsForbidden(err):
		m.decisions.WithLabelValues("refused").Inc()
	default:
		m.decisions.WithLabelValues("error").Inc()
	}
}

// quotaCollector exposes every quota's hard and used values from a cache of every
// ResourceQuota fed by a list and then the ResourceQuota watch: a scrape reads memory,
// never storage.
type quotaCollector struct {
	cache *objectCache
	desc  *prometheus.Desc
}

// newQuotaCollector starts filling the cache; it follows the watch until ctx ends.
func newQuotaCollector(ctx context.Context, store *registry.Store, log *slog.Logger) *quotaCollector {
	// The cache holds the watch hub's objects themselves (Collect only reads them): a copy
	// of every ResourceQuota event was 3% of a create's CPU spread over many namespaces.
	c := &quotaCollector{cache: &objectCache{byNS: map[string]map[string]runtime.Object{}, shared: true}, desc: prometheus.NewDesc("quotad_resourcequota",
		"Hard limit and usage of each resource of each ResourceQuota.",
		[]string{"namespace", "resourcequota", "resource", "type"}, nil)}
	go c.cache.run(ctx, store, store.Catalogue().Get(quotaGVR), log)
	return c
}

func (c *quotaCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends the cached values; they are gathered under the cache's read lock and sent
// after it, so a slow scrape never holds up the watch.
func (c *quotaCollector) Collect(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	c.cache.mu.RLock()
	for _, byName := range c.cache.byNS {
		for _, o := range byName {
			rq, ok := o.(*corev1.ResourceQuota)
			if !ok {
				continue
			}
			for name, q := range rq.Status.Hard {
				out = append(out, prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, q.AsApproximateFloat64(), rq.Namespace, rq.Name, string(name), "hard"))
			}
			for name, q := range rq.Status.Used {
				out = append(out, prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, q.AsApproximateFloat64(), rq.Namespace, rq.Name, string(name), "used"))
			}
		}
	}
	c.cache.mu.RUnlock()
	for _, m := range out {
		ch <- m
	}
}

// pathAuthorizer decides whether an authenticated user may use verb on a non-resource
// path such as /metrics or /debug/pprof/: as kube-apiserver, "get" on /metrics is allowed to
// whoever a ClusterRoleBinding grants that nonResourceURL (by default the system:monitoring
// group through the system:monitoring ClusterRole) and to system:masters (rbacFeed).
type pathAuthorizer interface {
	AuthorizePath(user auth.User, verb, path string) bool
}

// guarded serves h to authenticated users authz allows: anonymous requests get the same 401
// Status as the API paths, denied ones kube-apiserver's 403 for a non-resource path.
func guarded(authn apiserver.Authenticator, authz pathAuthorizer, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := authn.Authenticate(r)
		if !ok {
			writeStatus(w, metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized,
			})
			return
		}
		verb := strings.ToLower(r.Method)
		if !authz.AuthorizePath(user, verb, r.URL.Path) {
			st := apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("User %q cannot %s path %q", user.Name, verb, r.URL.Path)).Status()
			st.Kind, st.APIVersion = "Status", "v1"
			writeStatus(w, st)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// writeStatus writes a Status as the API edge does.
func writeStatus(w http.ResponseWriter, st metav1.Status) {
	b, err := json.Marshal(st)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(b)
}

// pprofHandler serves /debug/pprof/ to authenticated users authz allows.
func pprofHandler(auth apiserver.Authenticator, authz pathAuthorizer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return guarded(auth, authz, mux)
}

var quotaGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")
