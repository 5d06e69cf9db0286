package apiserver

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/quotad/quotad/internal/audit"
	"github.com/quotad/quotad/internal/auth"
)

// tokenAuth accepts one bearer token.
type tokenAuth string

func (t tokenAuth) Authenticate(r *http.Request) (auth.User, bool) {
	return auth.User{Name: "admin"}, r.Header.Get("Authorization") == "Bearer "+string(t)
}

// ownAuth is a SelfAuthenticating handler answering a secret.
type ownAuth struct{}

func (ownAuth) AuthenticatesItself() {}
func (ownAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	_, _ = w.Write([]byte(`{"key":"secret-response"}`))
}

// lockedBuffer is an io.WriteCloser safe for the backend's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) Close() error { return nil }
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSelfAuthenticatingExtra: an Extra handler that checks its own credentials gets
// requests without API credentials (others answer 401), and its bodies are never in the
// audit trail, even at RequestResponse.
func TestSelfAuthenticatingExtra(t *testing.T) {
	policy, err := audit.ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n"))
	if err != nil {
		t.Fatal(err)
	}
	sink := &lockedBuffer{}
	backend := audit.NewBackend(sink, audit.ModeBlocking, 0, slog.New(slog.DiscardHandler))
	s := New(Config{
		Logger: slog.New(slog.DiscardHandler), Auth: tokenAuth("good"),
		Audit: audit.NewAuditor(audit.NewChecker(policy), backend),
		Extra: map[string]http.Handler{
			"/plain": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }),
			"/own":   ownAuth{},
		},
	})
	for _, tc := range []struct {
		path string
		want int
	}{{"/plain", http.StatusUnauthorized}, {"/own", http.StatusOK}} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(`{"secret":"secret-request"}`)))
		if w.Code != tc.want {
			t.Errorf("anonymous POST %s: %d, want %d", tc.path, w.Code, tc.want)
		}
	}
	if err := backend.Close(); err != nil {
		t.Fatal(err)
	}
	log := sink.String()
	if !strings.Contains(log, `"requestURI":"/own"`) {
		t.Fatalf("no audit event of /own in %s", log)
	}
	if strings.Contains(log, "secret-request") || strings.Contains(log, "secret-response") {
		t.Fatalf("audit trail holds a self-authenticating path's bodies: %s", log)
	}
}
