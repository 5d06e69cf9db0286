package apiserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// observed is one call of a RequestObserver.
type observed struct {
	labels RequestLabels
	code   int
	// delta is the long-running delta (0 for ObserveRequest).
	delta int
}

type recordingObserver struct {
	mu    sync.Mutex
	calls []observed
	// started is sent the labels of every long-running request that starts.
	started chan RequestLabels
}

func (o *recordingObserver) ObserveRequest(l *RequestLabels, code int, elapsed time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, observed{labels: *l, code: code})
}

func (o *recordingObserver) ObserveLongRunning(l *RequestLabels, delta int) {
	o.mu.Lock()
	o.calls = append(o.calls, observed{labels: *l, delta: delta})
	o.mu.Unlock()
	if delta > 0 {
		o.started <- *l
	}
}

func (o *recordingObserver) take() []observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.calls
	o.calls = nil
	return out
}

// TestRequestObserver sends real requests through the edge (on an embedded etcd) and
// checks what the observer is told: kube-apiserver's verbs (GET vs LIST, APPLY, WATCH),
// scopes, dry_run values and codes; a watch as long-running (+1 when it starts, -1 when
// it ends) and then answered; nothing for unknown resources or subresources.
func TestRequestObserver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	etcd, err := storage.StartEmbedded(ctx, t.TempDir(), logger, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	store := registry.NewStore(registry.Config{
		Storage: etcd.Store(), Catalogue: registry.NewCatalogue(), Logger: logger,
	})
	obs := &recordingObserver{started: make(chan RequestLabels, 1)}
	s := New(Config{Store: store, Logger: logger, Requests: obs})
	cm := func(name string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`)
	}
	core := func(verb, dryRun, resource, sub, scope string) RequestLabels {
		return RequestLabels{Verb: verb, DryRun: dryRun, Version: "v1", Resource: resource, Subresource: sub, Scope: scope}
	}
	tests := []struct {
		name, method, path, contentType string
		body                            []byte
		want                            []observed
	}{
		{"create namespace", http.MethodPost, "/api/v1/namespaces", "application/json", []byte(`{"metadata":{"name":"default"}}`),
			[]observed{{labels: core("POST", "", "namespaces", "", "resource"), code: 201}}},
		{"create", http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", cm("c"),
			[]observed{{labels: core("POST", "", "configmaps", "", "resource"), code: 201}}},
		{"dry run", http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", "application/json", cm("d"),
			[]observed{{labels: core("POST", "All", "configmaps", "", "resource"), code: 201}}},
		{"invalid dry run", http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=Some", "application/json", cm("d"),
			[]observed{{labels: core("POST", "invalid", "configmaps", "", "resource"), code: 422}}},
		{"conflict", http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", cm("c"),
			[]observed{{labels: core("POST", "", "configmaps", "", "resource"), code: 409}}},
		{"get", http.MethodGet, "/api/v1/namespaces/default/configmaps/c", "", nil,
			[]observed{{labels: core("GET", "", "configmaps", "", "resource"), code: 200}}},
		{"get missing", http.MethodGet, "/api/v1/namespaces/default/configmaps/nope", "", nil,
			[]observed{{labels: core("GET", "", "configmaps", "", "resource"), code: 404}}},
		{"list in a namespace", http.MethodGet, "/api/v1/namespaces/default/configmaps", "", nil,
			[]observed{{labels: core("LIST", "", "configmaps", "", "namespace"), code: 200}}},
		{"list everywhere", http.MethodGet, "/api/v1/configmaps", "", nil,
			[]observed{{labels: core("LIST", "", "configmaps", "", "cluster"), code: 200}}},
		{"merge patch", http.MethodPatch, "/api/v1/namespaces/default/configmaps/c", "application/merge-patch+json", []byte(`{"data":{"a":"b"}}`),
			[]observed{{labels: core("PATCH", "", "configmaps", "", "resource"), code: 200}}},
		{"apply", http.MethodPatch, "/api/v1/namespaces/default/configmaps/c?fieldManager=m&force=true", "application/apply-patch+yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {x: z}\n"),
			[]observed{{labels: core("APPLY", "", "configmaps", "", "resource"), code: 200}}},
		{"namespace status", http.MethodGet, "/api/v1/namespaces/default/status", "", nil,
			[]observed{{labels: core("GET", "", "namespaces", "status", "resource"), code: 200}}},
		{"delete collection", http.MethodDelete, "/api/v1/namespaces/default/configmaps", "", nil,
			[]observed{{labels: core("DELETE", "", "configmaps", "", "namespace"), code: 200}}},
		{"unknown resource", http.MethodGet, "/api/v1/namespaces/default/nothings", "", nil, nil},
		{"unknown subresource", http.MethodGet, "/api/v1/namespaces/default/configmaps/c/nothing", "", nil, nil},
		{"unknown group", http.MethodGet, "/apis/example.com/v1/widgets", "", nil, nil},
		{"discovery", http.MethodGet, "/api/v1", "", nil, nil},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(tc.method, tc.path, bytes.NewReader(tc.body))
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if got := obs.take(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %s %s answered %d %s: observed %+v, want %+v", tc.name, tc.method, tc.path, rec.Code, rec.Body, got, tc.want)
		}
	}

	// A watch (its initial event answers 200): long-running from its start to its end,
	// then answered.
	wctx, stop := context.WithCancel(ctx)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces?watch=true", nil).WithContext(wctx)
	done := make(chan struct{})
	sw := &signalWriter{ResponseRecorder: httptest.NewRecorder(), wrote: make(chan struct{})}
	go func() {
		defer close(done)
		s.ServeHTTP(sw, req)
	}()
	watchLabels := RequestLabels{Verb: "WATCH", Version: "v1", Resource: "namespaces", Scope: "cluster"}
	if l := <-obs.started; l != watchLabels {
		t.Errorf("long-running request started with %+v, want %+v", l, watchLabels)
	}
	<-sw.wrote
	stop()
	<-done
	want := []observed{{labels: watchLabels, delta: 1}, {labels: watchLabels, delta: -1}, {labels: watchLabels, code: 200}}
	if got := obs.take(); !slices.Equal(got, want) {
		t.Errorf("watch: observed %+v, want %+v", got, want)
	}
}

// signalWriter closes wrote at its first write.
type signalWriter struct {
	*httptest.ResponseRecorder
	once  sync.Once
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseRecorder.Write(p)
	w.once.Do(func() { close(w.wrote) })
	return n, err
}

// TestMetricVerb covers the verbs the table above cannot reach without pods.
func TestMetricVerb(t *testing.T) {
	tests := []struct {
		method, path, contentType, want string
	}{
		{http.MethodPost, "/api/v1/namespaces/d/pods/p/exec?command=ls", "", "CONNECT"},
		{http.MethodGet, "/api/v1/namespaces/d/pods/p/log?follow=true", "", "CONNECT"},
		{http.MethodGet, "/api/v1/namespaces/d/pods/p/proxy/x/y", "", "CONNECT"},
		{http.MethodGet, "/api/v1/namespaces/d/pods/p?watch=1", "", "WATCH"},
		{http.MethodHead, "/api/v1/namespaces/d/pods", "", "LIST"},
		{http.MethodPut, "/api/v1/namespaces/d/pods/p/status", "", "PUT"},
		{http.MethodPost, "/api/v1/namespaces/d/pods/p/binding", "", "POST"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/d/deployments/x/scale", "application/apply-patch+cbor", "APPLY"},
		{http.MethodDelete, "/api/v1/namespaces/d/pods/p", "", "DELETE"},
		{http.MethodOptions, "/api/v1/namespaces/d/pods/p", "", "other"},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req.Header.Set("Content-Type", tc.contentType)
		info, ok := parseAPIPath(req)
		if !ok {
			t.Fatalf("%s: not a resource path", tc.path)
		}
		if got := requestLabels(req, info); got.Verb != tc.want {
			t.Errorf("%s %s: verb %q, want %q", tc.method, tc.path, got.Verb, tc.want)
		}
		// The labels are the path's own strings and constants: nothing is allocated.
		if n := testing.AllocsPerRun(20, func() { _ = requestLabels(req, info) }); n != 0 {
			t.Errorf("%s %s: computing the labels allocates %v times", tc.method, tc.path, n)
		}
	}
}
