package apiserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// stalledBody is a body that delivers its bytes and then fails as a read deadline does.
type stalledBody struct{ r io.Reader }

func (b *stalledBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *stalledBody) Close() error { return nil }

// TestReadBodyReservesWhatArrives: a body declaring the largest length allowed but
// sending a few bytes costs memory for those bytes, not for the declared length.
func TestReadBodyReservesWhatArrives(t *testing.T) {
	cases := []struct {
		name     string
		declared int64
		sent     int
		wantErr  bool
	}{
		{"huge declared, tiny sent", MaxBodyBytes, 20, true},
		{"unknown length, tiny sent", -1, 20, false},
		{"declared and sent agree", 100 << 10, 100 << 10, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent := bytes.Repeat([]byte("x"), tc.sent)
			var body io.ReadCloser = io.NopCloser(bytes.NewReader(sent))
			if tc.wantErr {
				body = &stalledBody{r: bytes.NewReader(sent)}
			}
			r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/configmaps", nil)
			r.Body, r.ContentLength = body, tc.declared
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got, err := readBody(r)
			runtime.ReadMemStats(&after)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && !bytes.Equal(got, sent) {
				t.Errorf("read %d bytes, want %d", len(got), len(sent))
			}
			// Allowed: a buffer doubling from initialBodyBuffer to what was sent (whose sum is
			// within 4 times that, 8 with the race detector's copies), plus what the test
			// itself allocates: far below a declared length of MaxBodyBytes.
			limit := uint64(8*max(tc.sent, initialBodyBuffer) + 64<<10)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
				t.Errorf("reading %d bytes of a body declaring %d allocated %d bytes, want at most %d", tc.sent, tc.declared, alloc, limit)
			}
		})
	}
}

// TestCheckBodyType pins upstream's 415 texts: built-in kinds accept protobuf, custom
// resources only JSON and YAML; no Content-Type is JSON.
func TestCheckBodyType(t *testing.T) {
	const builtin = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	const custom = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
	cases := []struct {
		contentType string
		protobuf    bool
		want        string // "" accepted
	}{
		{"", true, ""},
		{"application/json", true, ""},
		{"application/json; charset=utf-8", false, ""},
		{"APPLICATION/YAML", false, ""},
		{"application/vnd.kubernetes.protobuf", true, ""},
		{"application/vnd.kubernetes.protobuf", false, custom},
		{"text/plain", true, builtin},
		{"text/plain", false, custom},
		{"application/json;;", true, builtin},
		{"application/merge-patch+json", true, builtin},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		err := checkBodyType(r, tc.protobuf)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q (protobuf %v): %v, want accepted", tc.contentType, tc.protobuf, err)
		case tc.want != "":
			st := statusOf(err)
			if st.Code != http.StatusUnsupportedMediaType || st.Reason != "UnsupportedMediaType" || st.Message != tc.want {
				t.Errorf("%q (protobuf %v): %d %s %q, want 415 %q", tc.contentType, tc.protobuf, st.Code, st.Reason, st.Message, tc.want)
			}
		}
	}
}

// TestLogLimiter: the same line is logged once per period, the next one with the count of
// those left out; different lines do not limit each other.
func TestLogLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	steps := []struct {
		key            string
		at             time.Duration
		ok             bool
		wantSuppressed int
	}{
		{"a", 0, true, 0},
		{"a", time.Second, false, 0},
		{"b", time.Second, true, 0},
		{"a", 5 * time.Second, false, 0},
		{"a", logEvery, true, 2},
		{"a", logEvery + time.Second, false, 0},
		{"b", 3 * logEvery, true, 0},
	}
	var l logLimiter
	for i, st := range steps {
		ok, suppressed := l.allow(st.key, t0.Add(st.at))
		if ok != st.ok || suppressed != st.wantSuppressed {
			t.Errorf("step %d (%s at %v): ok %v suppressed %d, want %v %d", i, st.key, st.at, ok, suppressed, st.ok, st.wantSuppressed)
		}
	}
}

// TestLogLimiterForgets: the limiter's memory is bounded however many distinct lines
// there are.
func TestLogLimiterForgets(t *testing.T) {
	var l logLimiter
	t0 := time.Unix(1000, 0)
	for i := 0; i < 10*logMaxKeys; i++ {
		l.allow(strings.Repeat("k", i%50)+string(rune(i)), t0)
	}
	if n := len(l.seen); n > logMaxKeys {
		t.Errorf("limiter remembers %d lines, want at most %d", n, logMaxKeys)
	}
}

// captured is a slog handler keeping messages.
type captured struct{ msgs []string }

func (c *captured) Enabled(context.Context, slog.Level) bool { return true }
func (c *captured) Handle(_ context.Context, r slog.Record) error {
	c.msgs = append(c.msgs, r.Message)
	return nil
}
func (c *captured) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *captured) WithGroup(string) slog.Handler      { return c }

// TestHealthAndExtraBypassLimits: health checks and extra paths are served even when the
// API's read bound is reached, and every request is logged at the request level.
func TestHealthAndExtraBypassLimits(t *testing.T) {
	logs := &captured{}
	s := New(Config{Logger: slog.New(logs), MaxRequestsInflight: 1, Extra: map[string]http.Handler{
		"/metrics": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("m")) }),
	}})
	release, ok := s.inflight.acquire(context.Background(), false, "")
	if !ok {
		t.Fatal("first read refused")
	}
	defer release()
	for _, path := range []string{"/healthz", "/metrics"} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Errorf("%s: %d", path, w.Code)
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/version", nil))
	if w.Code != http.StatusTooManyRequests || w.Body.String() != tooManyRequestsText+"\n" || w.Header().Get("Retry-After") != "1" {
		t.Errorf("/version past the bound: %d %q", w.Code, w.Body.String())
	}
	if len(logs.msgs) != 3 || logs.msgs[0] != "HTTP" {
		t.Errorf("log lines %q, want one HTTP line per request", logs.msgs)
	}
}
