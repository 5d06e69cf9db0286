package server

import (
	"slices"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/apiserver"
)

// TestRequestMetricsBuckets pins the bucket boundaries to kube-apiserver's (its
// endpoints/metrics and admission/metrics packages): dashboards and SLOs built for
// kube-apiserver read quotad's histograms the same way. The lists are literals on purpose.
func TestRequestMetricsBuckets(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	l := &apiserver.RequestLabels{Verb: "POST", Version: "v1", Resource: "pods", Scope: "resource"}
	m.api.ObserveRequest(l, 201, time.Millisecond)
	m.admission.plugin("LimitRanger", false, admission.Create, time.Millisecond, false)
	m.admission.quota(admission.Create, time.Millisecond, true)
	m.admission.observe(admissionKey{validate: true, op: admission.Create}, time.Millisecond)
	m.observeWrites(3)
	want := map[string][]float64{
		"apiserver_request_duration_seconds":                        {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		"apiserver_admission_step_admission_duration_seconds":       {0.005, 0.025, 0.1, 0.5, 1.0, 2.5},
		"apiserver_admission_controller_admission_duration_seconds": {0.005, 0.025, 0.1, 0.5, 1.0, 2.5},
		"quotad_storage_writes_per_transaction":                     {1, 2, 4, 8, 16, 32, 64, 128, 256},
	}
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string][]string{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			var ls []string
			for _, lp := range mt.GetLabel() {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			labels[f.GetName()] = append(labels[f.GetName()], ls...)
		}
		bounds, ok := want[f.GetName()]
		if !ok {
			continue
		}
		var got []float64
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			got = append(got, b.GetUpperBound())
		}
		if !slices.Equal(got, bounds) {
			t.Errorf("%s buckets = %v, want %v", f.GetName(), got, bounds)
		}
		delete(want, f.GetName())
	}
	if len(want) != 0 {
		t.Errorf("histograms not gathered: %v", want)
	}
	for name, ls := range map[string][]string{
		"apiserver_request_total":                                   {"code=201", "component=apiserver", "dry_run=", "group=", "resource=pods", "scope=resource", "subresource=", "verb=POST", "version=v1"},
		"apiserver_request_duration_seconds":                        {"component=apiserver", "dry_run=", "group=", "resource=pods", "scope=resource", "subresource=", "verb=POST", "version=v1"},
		"apiserver_admission_controller_admission_duration_seconds": {"name=LimitRanger", "operation=CREATE", "rejected=false", "type=admit", "name=ResourceQuota", "operation=CREATE", "rejected=true", "type=validate"},
		"apiserver_admission_step_admission_duration_seconds":       {"operation=CREATE", "rejected=false", "type=validate"},
	} {
		if !slices.Equal(labels[name], ls) {
			t.Errorf("%s labels = %q, want %q", name, labels[name], ls)
		}
	}
}

// TestRequestMetricsAllocateNothing: once a label set was seen, observing a request, a
// long-running request or an admission step allocates nothing.
func TestRequestMetricsAllocateNothing(t *testing.T) {
	m := newMetrics()
	l := &apiserver.RequestLabels{Verb: "POST", Version: "v1", Resource: "pods", Scope: "resource"}
	w := &apiserver.RequestLabels{Verb: "WATCH", Version: "v1", Resource: "pods", Scope: "namespace"}
	observe := func() {
		m.api.ObserveRequest(l, 201, time.Millisecond)
		m.api.ObserveLongRunning(w, 1)
		m.api.ObserveLongRunning(w, -1)
		m.admission.plugin("LimitRanger", false, admission.Create, time.Millisecond, false)
		m.admission.quota(admission.Create, time.Millisecond, false)
		m.observeWrites(4)
	}
	observe()
	if n := testing.AllocsPerRun(100, observe); n != 0 {
		t.Errorf("observing allocates %v times", n)
	}
}

// BenchmarkObserveRequest is the metrics' cost per request at the edge: a create's
// apiserver_request_total and apiserver_request_duration_seconds, its admission steps and
// plugins (seven, as a pod create runs), and the ResourceQuota step.
func BenchmarkObserveRequest(b *testing.B) {
	m := newMetrics()
	l := &apiserver.RequestLabels{Verb: "POST", Version: "v1", Resource: "pods", Scope: "resource"}
	plugins := []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "Priority", "DefaultTolerationSeconds", "RuntimeClass", "ValidatingAdmissionPolicy"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.api.ObserveRequest(l, 201, time.Millisecond)
			m.admission.observe(admissionKey{op: admission.Create}, time.Millisecond)
			m.admission.observe(admissionKey{validate: true, op: admission.Create}, time.Millisecond)
			for _, p := range plugins {
				m.admission.plugin(p, false, admission.Create, time.Millisecond, false)
			}
			m.admission.quota(admission.Create, time.Millisecond, false)
		}
	})
}
