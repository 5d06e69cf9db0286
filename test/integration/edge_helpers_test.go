package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// edgeLogs is a slog handler keeping the server's log lines (from the request log level
// up) for tests to wait on.
type edgeLogs struct {
	mu      sync.Mutex
	lines   []edgeLine
	changed chan struct{}
}

// edgeLine is one log line: its message and attributes as text.
type edgeLine struct {
	msg   string
	attrs map[string]string
}

func newEdgeLogs() *edgeLogs { return &edgeLogs{changed: make(chan struct{})} }

// option makes the server log into l.
func (l *edgeLogs) option() servertest.Option {
	return func(c *server.Config) { c.Logger = slog.New(l) }
}

func (l *edgeLogs) Enabled(_ context.Context, level slog.Level) bool {
	return level >= apiserver.RequestLogLevel
}

func (l *edgeLogs) Handle(_ context.Context, r slog.Record) error {
	line := edgeLine{msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		line.attrs[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

func (l *edgeLogs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *edgeLogs) WithGroup(string) slog.Handler      { return l }

// wait returns the first line matching pred, waiting for it until ctx ends.
func (l *edgeLogs) wait(t *testing.T, ctx context.Context, what string, pred func(edgeLine) bool) edgeLine {
	t.Helper()
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if pred(line) {
				l.mu.Unlock()
				return line
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no log line %s", what)
		}
	}
}

// count returns how many lines match pred.
func (l *edgeLogs) count(pred func(edgeLine) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if pred(line) {
			n++
		}
	}
	return n
}

// hookedStore lets a test act on storage reads of chosen keys (hold them, fail them,
// panic) on the real storage path every request goes through.
type hookedStore struct {
	storage.Store
	// get, when it handles key, answers the read instead of storage.
	get func(ctx context.Context, key string) (handled bool, kv storage.KV, err error)
}

func (h *hookedStore) Get(ctx context.Context, key string) (storage.KV, error) {
	if handled, kv, err := h.get(ctx, key); handled {
		return kv, err
	}
	return h.Store.Get(ctx, key)
}

// withGetHook wraps the server's storage with a read hook.
func withGetHook(get func(ctx context.Context, key string) (bool, storage.KV, error)) servertest.Option {
	return func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store { return &hookedStore{Store: st, get: get} }
	}
}

// edgeConn opens a raw HTTP/1.1 TLS connection to the server (with a small receive buffer
// when small is set, so that a client that does not read is felt at once). The whole
// exchange has ctx's deadline.
func edgeConn(t *testing.T, ctx context.Context, s *servertest.Server, small bool) *tls.Conn {
	t.Helper()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(s.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	if small {
		if err := raw.(*net.TCPConn).SetReadBuffer(4096); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	conn := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := conn.HandshakeContext(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sendHead writes a request's head (and the start of its body) on a raw connection.
func sendHead(t *testing.T, conn io.Writer, s *servertest.Server, method, path string, header map[string]string, body string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n", method, path, s.Token)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
}

// readAnswer reads one response from a raw connection, with its body.
func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	return resp, string(b)
}

// edgeDo sends one request with the admin token over client-go's transport and returns
// the answer with its body.
func edgeDo(t *testing.T, ctx context.Context, s *servertest.Server, method, path, contentType, body string) (*http.Response, string) {
	t.Helper()
	transport, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// edgeCtx is a test's overall deadline for the edge tests.
func edgeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}
