package integration

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// TestInflightLimit: without priority and fairness (kube-apiserver's plain max-in-flight
// filter), past --max-requests-inflight reads, a read gets upstream's 429 (plain text,
// Retry-After 1) at once while writes, bounded apart, and watches, not bounded, are served;
// once the reads in flight end, reads are served again.
func TestInflightLimit(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	s := servertest.Start(t, withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
		if !strings.HasSuffix(key, "/hold") {
			return false, storage.KV{}, nil
		}
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return true, storage.KV{}, storage.ErrNotFound
	}), func(c *server.Config) {
		c.MaxRequestsInflight = 2
		c.MaxMutatingRequestsInflight = 1
		c.NoPriorityAndFairness = true
	})
	ctx := edgeCtx(t)
	// 1. Two reads held in storage fill the read bound.
	var held sync.WaitGroup
	for i := 0; i < 2; i++ {
		held.Add(1)
		go func() {
			defer held.Done()
			edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps/hold", "", "")
		}()
	}
	for i := 0; i < 2; i++ {
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("the held reads did not reach storage")
		}
	}
	// 2. A third read is refused as upstream refuses it.
	resp, body := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps", "", "")
	if resp.StatusCode != http.StatusTooManyRequests || body != "Too many requests, please try again later.\n" ||
		resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("third read: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// 3. Writes have their own bound; watches none.
	if _, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("w")}, metav1.CreateOptions{}); err != nil {
		t.Errorf("write while reads are at their bound: %v", err)
	}
	w, err := s.Client.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=w"})
	if err != nil {
		t.Fatalf("watch while reads are at their bound: %v", err)
	}
	if ev := nextEvent(t, w); ev.Object.(*corev1.ConfigMap).Name != "w" {
		t.Errorf("watch event: %v", ev)
	}
	w.Stop()
	// 4. The held reads end; reads are served again.
	close(release)
	held.Wait()
	if resp, body := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("read after the bound freed: %d %s", resp.StatusCode, body)
	}
}

// TestHandlerPanic: a panic serving a request is recovered into upstream's 500, logged once
// with its stack, counted in quotad_apiserver_panics_total, and the server goes on serving.
func TestHandlerPanic(t *testing.T) {
	t.Parallel()
	logs := newEdgeLogs()
	s := servertest.Start(t, logs.option(), withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
		if strings.HasSuffix(key, "/boom") {
			panic("boom")
		}
		return false, storage.KV{}, nil
	}))
	ctx := edgeCtx(t)
	for i := 0; i < 2; i++ {
		resp, body := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps/boom", "", "")
		if want := "This request caused apiserver to panic. Look in the logs for details.\n"; resp.StatusCode != http.StatusInternalServerError || body != want {
			t.Errorf("panicking read: %d %q, want 500 %q", resp.StatusCode, body, want)
		}
	}
	line := logs.wait(t, ctx, "for the panic", func(l edgeLine) bool { return l.msg == "panic serving request" })
	if line.attrs["panic"] != "boom" || !strings.Contains(line.attrs["stack"], "hookedStore") || line.attrs["path"] != "/api/v1/namespaces/default/configmaps/boom" {
		t.Errorf("panic log line: %v", line.attrs)
	}
	// The same panic again is not logged again at once.
	if n := logs.count(func(l edgeLine) bool { return l.msg == "panic serving request" }); n != 1 {
		t.Errorf("%d panic lines for two identical panics, want 1", n)
	}
	resp, body := edgeDo(t, ctx, s, http.MethodGet, "/metrics", "", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "\nquotad_apiserver_panics_total 2\n") {
		t.Errorf("metrics: %d, panics counter missing or not 2", resp.StatusCode)
	}
	// (The namespace exists from the start; the controller's ConfigMaps may come later.)
	if _, err := s.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("serving after the panic: %v", err)
	}
}

// TestServerErrorsLogged: a 5xx answer is logged once with method, path, status, user,
// latency and error; every request is logged at the request log level.
func TestServerErrorsLogged(t *testing.T) {
	t.Parallel()
	logs := newEdgeLogs()
	s := servertest.Start(t, logs.option(), withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
		if strings.HasSuffix(key, "/broken") {
			return true, storage.KV{}, errBroken
		}
		return false, storage.KV{}, nil
	}))
	ctx := edgeCtx(t)
	resp, _ := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps/broken", "", "")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("broken read: %d", resp.StatusCode)
	}
	line := logs.wait(t, ctx, "for the 5xx", func(l edgeLine) bool { return l.msg == "request failed" })
	want := map[string]string{"method": "GET", "path": "/api/v1/namespaces/default/configmaps/broken", "status": "500", "user": "admin",
		"err": "Internal error occurred: disk on fire"}
	for k, v := range want {
		if line.attrs[k] != v {
			t.Errorf("5xx line %s = %q, want %q", k, line.attrs[k], v)
		}
	}
	if line.attrs["latency"] == "" {
		t.Error("5xx line without latency")
	}
	logs.wait(t, ctx, "for the request", func(l edgeLine) bool {
		return l.msg == "HTTP" && l.attrs["URI"] == "/api/v1/namespaces/default/configmaps/broken" && l.attrs["resp"] == "500" && l.attrs["verb"] == "GET"
	})
}

var errBroken = errorString("disk on fire")

type errorString string

func (e errorString) Error() string { return string(e) }
