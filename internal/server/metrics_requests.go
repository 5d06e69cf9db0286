package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotad/quotad/internal/apiserver"
)

// Bucket boundaries of kube-apiserver's histograms, as its endpoints/metrics and
// admission/metrics packages define them.
var (
	requestDurationBuckets   = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	admissionDurationBuckets = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}
)

// apiserverComponent is the component label of kube-apiserver's request metrics.
const apiserverComponent = "apiserver"

// requestMetrics are kube-apiserver's request metrics: apiserver_request_total,
// apiserver_request_duration_seconds and apiserver_longrunning_requests. Unlike
// kube-apiserver, the duration histogram leaves out long-running requests (WATCH, CONNECT),
// whose lifetimes every latency query filters out anyway. It implements
// apiserver.RequestObserver. The children of each label set are resolved once and kept in
// a map keyed by the labels themselves, so observing a request allocates nothing and takes
// no lock.
type requestMetrics struct {
	total       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	longRunning *prometheus.GaugeVec

	children childCache[requestKey, requestChildren]
	gauges   childCache[apiserver.RequestLabels, prometheus.Gauge]
}

type requestKey struct {
	labels apiserver.RequestLabels
	code   int
}

type requestChildren struct {
	total    prometheus.Counter
	duration prometheus.Observer
}

func newRequestMetrics() *requestMetrics {
	return &requestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestDurationBuckets,
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
	}
}

func (m *requestMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.total, m.duration, m.longRunning}
}

// ObserveRequest implements apiserver.RequestObserver.
func (m *requestMetrics) ObserveRequest(l *apiserver.RequestLabels, code int, elapsed time.Duration) {
	c := m.children.get(requestKey{labels: *l, code: code}, func() requestChildren {
		c := requestChildren{
			total: m.total.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, apiserverComponent, strconv.Itoa(code)),
		}
		if !l.LongRunning() {
			c.duration = m.duration.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, apiserverComponent)
		}
		return c
	})
	c.total.Inc()
	if c.duration != nil {
		c.duration.Observe(elapsed.Seconds())
	}
}

// ObserveLongRunning implements apiserver.RequestObserver.
func (m *requestMetrics) ObserveLongRunning(l *apiserver.RequestLabels, delta int) {
	g := m.gauges.get(*l, func() prometheus.Gauge {
		return m.longRunning.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, apiserverComponent)
	})
	g.Add(float64(delta))
}
