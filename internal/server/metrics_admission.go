package server

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/registry"
)

// admissionMetrics are kube-apiserver's admission latency histograms:
// apiserver_admission_step_admission_duration_seconds (each whole phase, admit or validate)
// and apiserver_admission_controller_admission_duration_seconds (each plugin; the
// ResourceQuota plugin's step is its decision together with the guarded transaction that
// charges it, as upstream's includes its quota status write). Children are resolved once
// per label set, so an observation allocates nothing.
type admissionMetrics struct {
	step       *prometheus.HistogramVec
	controller *prometheus.HistogramVec

	children childCache[admissionKey, prometheus.Observer]
}

// admissionKey is one label set; name is empty for a step.
type admissionKey struct {
	name     string
	validate bool
	op       admission.Operation
	rejected bool
}

func newAdmissionMetrics() *admissionMetrics {
	return &admissionMetrics{
		step: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_step_admission_duration_seconds",
			Help:    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
			Buckets: admissionDurationBuckets,
		}, []string{"type", "operation", "rejected"}),
		controller: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_controller_admission_duration_seconds",
			Help:    "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: admissionDurationBuckets,
		}, []string{"name", "type", "operation", "rejected"}),
	}
}

func (m *admissionMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.step, m.controller}
}

// observe records one observation of a step (name "") or a plugin.
func (m *admissionMetrics) observe(k admissionKey, elapsed time.Duration) {
	m.children.get(k, func() prometheus.Observer {
		typ := "admit"
		if k.validate {
			typ = "validate"
		}
		if k.name == "" {
			return m.step.WithLabelValues(typ, string(k.op), strconv.FormatBool(k.rejected))
		}
		return m.controller.WithLabelValues(k.name, typ, string(k.op), strconv.FormatBool(k.rejected))
	}).Observe(elapsed.Seconds())
}

// plugin is the chain's admission.PluginObserver.
func (m *admissionMetrics) plugin(name string, validate bool, op admission.Operation, elapsed time.Duration, rejected bool) {
	m.observe(admissionKey{name: name, validate: validate, op: op, rejected: rejected}, elapsed)
}

// quota is the registry's ObserveQuotaLatency: the ResourceQuota plugin's step.
func (m *admissionMetrics) quota(op admission.Operation, elapsed time.Duration, rejected bool) {
	m.observe(admissionKey{name: admission.ResourceQuota, validate: true, op: op, rejected: rejected}, elapsed)
}

// timedAdmission measures each admission phase the registry runs (the chain's plugins and
// the checks wired around them; ResourceQuota runs apart, as
// the write's batch plans its transaction).
type timedAdmission struct {
	next    registry.Admission
	metrics *admissionMetrics
}

func (a timedAdmission) Admit(ctx context.Context, attrs *admission.Attributes) error {
	start := time.Now()
	err := a.next.Admit(ctx, attrs)
	a.metrics.observe(admissionKey{op: attrs.Operation, rejected: err != nil}, time.Since(start))
	return err
}

func (a timedAdmission) Validate(ctx context.Context, attrs *admission.Attributes) error {
	start := time.Now()
	err := a.next.Validate(ctx, attrs)
	a.metrics.observe(admissionKey{validate: true, op: attrs.Operation, rejected: err != nil}, time.Since(start))
	return err
}
