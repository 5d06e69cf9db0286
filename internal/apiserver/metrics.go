package apiserver

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RequestLabels are the labels kube-apiserver's request metrics (apiserver_request_total,
// apiserver_request_duration_seconds, apiserver_longrunning_requests) give a resource
// request, computed as its endpoints/metrics package computes them. The component label is
// always "apiserver" and is left to the observer.
type RequestLabels struct {
	// Verb is upstream's reported verb: GET (a named object), LIST, WATCH, POST, PUT,
	// PATCH, APPLY (a server-side apply patch), DELETE (of one object or a collection),
	// CONNECT (pods' log, exec, attach, portforward and proxy subresources) or "other".
	Verb string
	// DryRun is "" without ?dryRun, "All" with it, "invalid" for another value.
	DryRun                                string
	Group, Version, Resource, Subresource string
	// Scope is "resource" (a named object, or any create), "namespace" or "cluster".
	Scope string
}

// LongRunning reports whether the request is long-running as upstream's check decides
// (watches and the connect subresources): it is counted in apiserver_longrunning_requests
// while open, and quotad leaves it out of apiserver_request_duration_seconds.
func (l *RequestLabels) LongRunning() bool { return l.Verb == "WATCH" || l.Verb == "CONNECT" }

// RequestObserver is told of the API requests kube-apiserver's request metrics count: every
// request to a served resource (or one of its subresources) that passed authentication and
// authorization, once answered. Requests to unknown resources, non-resource paths, and
// requests refused before authorization are not observed, as upstream, whose metrics are
// recorded by its installed routes: so the label values are bounded by the catalogue.
// Implementations must be safe for concurrent use and cheap: they run on every request.
type RequestObserver interface {
	// ObserveRequest is told of an answered request, its HTTP status and how long it took
	// from its arrival (a long-running request's whole life).
	ObserveRequest(l *RequestLabels, code int, elapsed time.Duration)
	// ObserveLongRunning is told when a long-running request starts (+1) and ends (-1).
	ObserveLongRunning(l *RequestLabels, delta int)
}

// connectSubresource reports whether sub is one of upstream's validConnectRequests, whose
// requests are CONNECT.
func connectSubresource(sub string) bool {
	switch sub {
	case "log", "exec", "portforward", "attach", "proxy":
		return true
	}
	return false
}

// servedSubresource reports whether a resource may serve the subresource (the handlers
// answer 404 for any other); it keeps the subresource label's values bounded.
func servedSubresource(sub string) bool {
	switch sub {
	case "", "status", "scale", "binding", "eviction", "token", "approval", "finalize", "resize", "ephemeralcontainers":
		return true
	}
	return connectSubresource(sub)
}

// measure records the request's labels on w when its observer is set and its route is a
// served resource, so that it is observed once answered.
func (s *Server) measure(w *recorder, r *http.Request, info requestInfo) {
	if s.cfg.Requests == nil || !servedSubresource(info.Subresource) ||
		s.cfg.Store.Catalogue().Get(schema.GroupVersionResource{Group: info.Group, Version: info.Version, Resource: info.Resource}) == nil {
		return
	}
	w.measured = true
	w.metric = requestLabels(r, info)
}

// longRunning tells the observer that a long-running request measure selected starts
// being served; the function it returns, that it ended.
func (s *Server) longRunning(w *recorder) (end func()) {
	if !w.measured || !w.metric.LongRunning() {
		return func() {}
	}
	s.cfg.Requests.ObserveLongRunning(&w.metric, 1)
	return func() { s.cfg.Requests.ObserveLongRunning(&w.metric, -1) }
}

// observeRequest tells the observer of an answered request measure selected.
func (s *Server) observeRequest(w *recorder, code int, elapsed time.Duration) {
	if w.measured {
		s.cfg.Requests.ObserveRequest(&w.metric, code, elapsed)
	}
}

// requestLabels computes a resource request's labels as upstream's CleanScope,
// CanonicalVerb, CleanVerb and cleanDryRun do.
func requestLabels(r *http.Request, info requestInfo) RequestLabels {
	l := RequestLabels{Group: info.Group, Version: info.Version, Resource: info.Resource, Subresource: info.Subresource, Scope: "cluster"}
	switch {
	case info.Name != "" || info.Verb == "create":
		l.Scope = "resource"
	case info.Namespace != "":
		l.Scope = "namespace"
	}
	l.Verb = metricVerb(r, info, l.Scope)
	l.DryRun = dryRunLabel(r.URL)
	return l
}

// rawWatchParam reports whether a raw query's first watch parameter is true as upstream's
// metrics read it (anything but "0" or "false", in any case), without allocating.
func rawWatchParam(q string) bool {
	for q != "" {
		var part string
		part, q, _ = strings.Cut(q, "&")
		if k, v, _ := strings.Cut(part, "="); k == "watch" {
			return v != "0" && !strings.EqualFold(v, "false")
		}
	}
	return false
}

// metricVerb is the verb upstream reports: from the HTTP method, GET split into GET and
// LIST by scope, watches WATCH, server-side apply APPLY, connect subresources CONNECT.
func metricVerb(r *http.Request, info requestInfo, scope string) string {
	if connectSubresource(info.Subresource) {
		return "CONNECT"
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case info.Verb == "watch" || rawWatchParam(r.URL.RawQuery):
			// A named GET with a watch parameter is served as a get, and reported as a
			// watch, as upstream reports it.
			return "WATCH"
		case scope == "resource":
			return "GET"
		}
		return "LIST"
	case http.MethodPost:
		return "POST"
	case http.MethodPut:
		return "PUT"
	case http.MethodPatch:
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			return "APPLY"
		}
		return "PATCH"
	case http.MethodDelete:
		return "DELETE"
	}
	return "other"
}

// dryRunLabel is upstream's cleanDryRun: it reads the query only when it names dryRun.
func dryRunLabel(u *url.URL) string {
	if !strings.Contains(u.RawQuery, "dryRun") {
		return ""
	}
	vals := u.Query()["dryRun"]
	for _, v := range vals {
		if v != "All" {
			return "invalid"
		}
	}
	if len(vals) == 0 {
		return ""
	}
	return "All"
}
