package apiserver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/quota/quotatest"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// fuzzTarget is one request shape the fuzzer fills with a body.
type fuzzTarget struct {
	method, path, contentType string
}

var fuzzTargets = []fuzzTarget{
	{http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", "application/json"},
	{http.MethodPost, "/api/v1/namespaces/default/pods?dryRun=All&fieldValidation=Strict", "application/json"},
	{http.MethodPost, "/api/v1/namespaces/default/resourcequotas?dryRun=All", "application/yaml"},
	{http.MethodPost, "/api/v1/namespaces/default/services?dryRun=All", "application/vnd.kubernetes.protobuf"},
	{http.MethodPost, "/apis/apps/v1/namespaces/default/deployments?dryRun=All&fieldValidation=Warn", "application/json"},
	{http.MethodPut, "/api/v1/namespaces/default/configmaps/c?dryRun=All", "application/json"},
	{http.MethodPut, "/api/v1/namespaces/default/configmaps/c?dryRun=All", "application/vnd.kubernetes.protobuf"},
	{http.MethodPatch, "/api/v1/namespaces/default/configmaps/c?dryRun=All", "application/json-patch+json"},
	{http.MethodPatch, "/api/v1/namespaces/default/configmaps/c?dryRun=All", "application/merge-patch+json"},
	{http.MethodPatch, "/api/v1/namespaces/default/configmaps/c?dryRun=All", "application/strategic-merge-patch+json"},
	{http.MethodPatch, "/api/v1/namespaces/default/configmaps/c?dryRun=All&fieldManager=f", "application/apply-patch+yaml"},
	{http.MethodPatch, "/apis/apps/v1/namespaces/default/deployments/d/scale?dryRun=All", "application/merge-patch+json"},
	{http.MethodPut, "/apis/apps/v1/namespaces/default/deployments/d/scale?dryRun=All", "application/json"},
	{http.MethodPut, "/apis/apps/v1/namespaces/default/deployments/d/status?dryRun=All", "application/json"},
	{http.MethodDelete, "/api/v1/namespaces/default/configmaps/c?dryRun=All", "application/json"},
	{http.MethodDelete, "/api/v1/namespaces/default/configmaps?dryRun=All", "application/vnd.kubernetes.protobuf"},
	{http.MethodPut, "/api/v1/namespaces/default/finalize", "application/json"},
}

// newFuzzServer serves the HTTP edge on an embedded etcd holding a configmap "c" and a
// deployment "d" in "default".
func newFuzzServer(f *testing.F) http.Handler {
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	etcd, err := storage.StartEmbedded(ctx, f.TempDir(), logger, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { etcd.Close() })
	store := registry.NewStore(registry.Config{
		Storage: etcd.Store(), Catalogue: registry.NewCatalogue(), Logger: logger,
	})
	h := apiserver.New(apiserver.Config{Store: store, Logger: logger})
	for _, seed := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"metadata":{"name":"default"}}`},
		{"/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"},"data":{"k":"v"}}`},
		{"/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, seed.path, bytes.NewReader([]byte(seed.body)))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			f.Fatalf("seeding %s: %d %s", seed.path, rec.Code, rec.Body)
		}
	}
	return h
}

// FuzzHandlers sends arbitrary bodies to the write handlers: no request panics or fails
// with a 5xx; each is answered 2xx or 4xx.
func FuzzHandlers(f *testing.F) {
	for i := range fuzzTargets {
		for _, body := range []string{
			`{"metadata":{"name":"c"},"data":{"k":"v"}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`,
			`[{"op":"add","path":"/data/x","value":"y"}]`, `[{"op":"move","from":"/metadata","path":"/metadata/x"}]`,
			`{"spec":{"replicas":-1}}`, `{"metadata":{"resourceVersion":"1"}}`, `{"kind":"DeleteOptions","propagationPolicy":"Orphan"}`,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "{", "", "null", "[", "\x00k8s", `{"spec":{"finalizers":[""]}}`,
			// Quantities that stalled the decoders or comparisons before they were bounded.
			`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"1e1000000000"}}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1e-1000000000"}}}]}}`,
			`{"spec":{"hard":{"pods":"` + strings.Repeat("9", 100000) + `"}}}`,
		} {
			f.Add(uint8(i), []byte(body))
		}
	}
	h := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		tg := fuzzTargets[int(which)%len(fuzzTargets)]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tg.method, tg.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", tg.contentType)
		// No input may stall a handler: the bound is far above any honest request's cost.
		quotatest.Within(t, 20*time.Second, tg.method+" "+tg.path, func() error {
			h.ServeHTTP(rec, req)
			return nil
		})
		if rec.Code >= 500 || rec.Code < 200 {
			t.Fatalf("%s %s (%s) with %q: %d %s", tg.method, tg.path, tg.contentType, body, rec.Code, rec.Body)
		}
	})
}
