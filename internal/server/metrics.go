package server

import (
	"context"
	corev1 "k8s.io/api/core/v1"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/registry"
)

// metrics is quotad's Prometheus registry.
type metrics struct {
	reg       *prometheus.Registry
	repairs   *prometheus.CounterVec
	decisions *prometheus.CounterVec
	requests  prometheus.Histogram
	panics    prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_resourcequota_repairs_total",
			Help: "Quota status drifts found and repaired by the verifier (any drift is a bug).",
		}, []string{"namespace", "resourcequota"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotad_admission_quota_decisions_total",
			Help: "ResourceQuota admission decisions by result (admitted, refused, error).",
		}, []string{"result"}),
		requests: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "quotad_storage_transactions_per_request",
			Help:    "Namespace transactions committed together in one etcd request.",
			Buckets: []float64{1, 2, 4, 8, 16, 32},
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "quotad_apiserver_panics_total",
			Help: "Panics of request handlers recovered by the HTTP edge.",
		}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), m.repairs, m.decisions, m.requests, m.panics)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Repaired implements resourcequota.Observer.
func (m *metrics) Repaired(ns, name string) { m.repairs.WithLabelValues(ns, name).Inc() }

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

// quotaCollector exposes every quota's hard and used values at scrape time.
type quotaCollector struct {
	store *registry.Store
	desc  *prometheus.Desc
}

func newQuotaCollector(store *registry.Store) *quotaCollector {
	return &quotaCollector{store: store, desc: prometheus.NewDesc("quotad_resourcequota",
		"Hard limit and usage of each resource of each ResourceQuota.",
		[]string{"namespace", "resourcequota", "resource", "type"}, nil)}
}

func (c *quotaCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *quotaCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := c.store.Catalogue().Get(quotaGVR)
	objs, _, err := c.store.ListObjects(ctx, res, "")
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, o := range objs {
		rq := o.(*corev1.ResourceQuota)
		for name, q := range rq.Status.Hard {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, q.AsApproximateFloat64(), rq.Namespace, rq.Name, string(name), "hard")
		}
		for name, q := range rq.Status.Used {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, q.AsApproximateFloat64(), rq.Namespace, rq.Name, string(name), "used")
		}
	}
}

// pprofHandler serves /debug/pprof/ to authenticated callers.
func pprofHandler(auth apiserver.Authenticator) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := auth.Authenticate(r); !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

var quotaGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")
