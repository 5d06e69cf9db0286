package integration

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestFairSlowBodiesTakeNoSeat: a write whose body is still arriving holds no in-flight
// seat, so with --max-mutating-requests-inflight 2, three stalled bodies still let a
// fourth, normal create through; the stalled ones are then cut off at their deadline.
func TestFairSlowBodiesTakeNoSeat(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) { c.MaxMutatingRequestsInflight = 2 })
	ctx := edgeCtx(t)
	var stalled []*bufio.Reader
	for i := 0; i < 3; i++ {
		conn := edgeConn(t, ctx, s, false)
		sendHead(t, conn, s, http.MethodPost, "/api/v1/namespaces/default/configmaps?timeout=20s",
			map[string]string{"Content-Type": "application/json", "Content-Length": "1000"}, `{"apiVersion":"v1","kind":"ConfigMap",`)
		stalled = append(stalled, bufio.NewReader(conn))
	}
	cm, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("through")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create while three bodies stall: %v", err)
	}
	if cm.Name != "through" {
		t.Errorf("created %q", cm.Name)
	}
	for i, br := range stalled {
		if resp, body := readAnswer(t, br); resp.StatusCode != http.StatusGatewayTimeout || body != timeoutAnswer {
			t.Errorf("stalled body %d: %d %q, want the 504", i, resp.StatusCode, body)
		}
	}
}

// TestFairBodyBytesBound: the bodies held at once are bounded in bytes received: past
// the bound a write gets upstream's 429 (plain text, Retry-After 1) and changes nothing;
// once the body holding the bytes goes, writes are served again.
func TestFairBodyBytesBound(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) { c.MaxBodyBytesInFlight = 256 << 10 })
	ctx := edgeCtx(t)
	// 1. A body that has sent 200 KiB of the 1 MB it declares, then stalls.
	conn := edgeConn(t, ctx, s, false)
	sendHead(t, conn, s, http.MethodPost, "/api/v1/namespaces/default/configmaps",
		map[string]string{"Content-Type": "application/json", "Content-Length": "1000000"},
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"`+strings.Repeat("x", 200<<10))
	// 2. Once the server holds those bytes, another write is refused.
	const path = "/api/v1/namespaces/default/configmaps"
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"small"}}`
	waitAnswer(t, ctx, "a 429 while the big body is held", func() bool {
		resp, text := edgeDo(t, ctx, s, http.MethodPost, path+"?dryRun=All", "application/json", body)
		if resp.StatusCode == http.StatusCreated {
			return false
		}
		if resp.StatusCode != http.StatusTooManyRequests || text != "Too many requests, please try again later.\n" ||
			resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("write past the body bound: %d %q %v", resp.StatusCode, text, resp.Header)
		}
		return true
	})
	// 3. The big body's client goes; its bytes are given back and writes are served.
	conn.Close()
	waitAnswer(t, ctx, "a write served after the big body went", func() bool {
		resp, _ := edgeDo(t, ctx, s, http.MethodPost, path, "application/json", body)
		return resp.StatusCode == http.StatusCreated
	})
	cms, err := s.Client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 1 || cms.Items[0].Name != "small" {
		t.Errorf("config maps: %d, want only small", len(cms.Items))
	}
}

// waitAnswer repeats try until it reports true, until ctx ends.
func waitAnswer(t *testing.T, ctx context.Context, what string, try func() bool) {
	t.Helper()
	for !try() {
		if ctx.Err() != nil {
			t.Fatalf("never got %s", what)
		}
	}
}
