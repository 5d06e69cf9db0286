package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/audit"
)

// The edge's limits, as kube-apiserver's flags set them by default.
const (
	// DefaultRequestTimeout is kube-apiserver's --request-timeout.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultMinRequestTimeout is kube-apiserver's --min-request-timeout: a watch without
	// timeoutSeconds lasts between it and twice it.
	DefaultMinRequestTimeout = 1800 * time.Second
	// writeGrace is how long past its deadline a request's answer may take to write (the
	// 504 itself is written at the deadline); a client that reads nothing for that long
	// loses its connection.
	writeGrace = 10 * time.Second
)

// Upstream's texts of the edge's own answers.
const (
	invalidTimeoutInURL = "invalid timeout specified in the request URL"
	requestTimedOut     = "request did not complete within the allotted timeout"
	tooManyRequestsText = "Too many requests, please try again later."
	panicText           = "This request caused apiserver to panic. Look in the logs for details."
)

// recorder is the ResponseWriter every request is served through: it remembers the
// status, the error answered and the user, for the request's log lines.
type recorder struct {
	http.ResponseWriter
	status int
	err    error
	user   string
	// penalty is the client whose refusal budget an answer refusing the request spends
	// (penalty.go); empty for clients never slowed down.
	penalty string

	// The request's audit ID, when it arrived, and its audit (nil when not audited).
	auditID  string
	received time.Time
	audit    *audit.Request

	// measured: the request is observed by Config.Requests once answered, with metric's
	// labels (metrics.go).
	measured bool
	metric   RequestLabels
}

// started notes the answer's status once, as it starts.
func (w *recorder) started(code int) {
	if w.status == 0 {
		w.status = code
		if w.audit != nil {
			w.audit.ResponseStarted(code)
		}
	}
}

func (w *recorder) WriteHeader(code int) {
	w.started(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	w.started(http.StatusOK)
	if w.audit != nil {
		w.audit.ResponseBody(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher (watches flush every batch of events).
func (w *recorder) Flush() {
	w.started(http.StatusOK)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) noteError(err error) { w.err = err }

// answerOnce writes a whole answer unless one was started; it reports whether it wrote.
func (w *recorder) answerOnce(code int, contentType string, body []byte, extra http.Header) bool {
	if w.status != 0 {
		return false
	}
	for k, v := range extra {
		w.Header()[k] = v
	}
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
	return true
}

// answerer is a ResponseWriter that can write a whole answer only when none was started.
type answerer interface {
	answerOnce(code int, contentType string, body []byte, extra http.Header) bool
}

// errorNoter remembers the error a request was answered with.
type errorNoter interface{ noteError(err error) }

// plainError is http.Error's answer (kube-apiserver's 429 and panic texts are written so),
// through answerOnce.
func plainError(w answerer, code int, text string, extra http.Header) bool {
	h := http.Header{"X-Content-Type-Options": {"nosniff"}}
	for k, v := range extra {
		h[k] = v
	}
	return w.answerOnce(code, "text/plain; charset=utf-8", []byte(text+"\n"), h)
}

// timeoutBody is kube-apiserver's 504 from its timeout filter: the Status without kind
// and apiVersion, JSON-encoded with a trailing newline, its media type left to sniffing.
func timeoutBody() []byte {
	st := apierrors.NewTimeoutError(requestTimedOut, 0).ErrStatus
	b, _ := json.Marshal(&st)
	return append(b, '\n')
}

// timeoutWriter is what a request with a deadline writes through, from the goroutine
// serving it: once the deadline passed and the edge answered 504, the handler's writes
// are dropped (http.ErrHandlerTimeout), as in kube-apiserver's timeout filter.
type timeoutWriter struct {
	rec      *recorder
	deadline time.Time
	ctx      context.Context
	header   http.Header

	mu          sync.Mutex
	timedOut    bool
	wroteHeader bool
	// answered: the handler itself answered with the timeout (its work ended at the
	// deadline), so the edge need not.
	answered bool
}

func newTimeoutWriter(rec *recorder, ctx context.Context, deadline time.Time) *timeoutWriter {
	return &timeoutWriter{rec: rec, ctx: ctx, deadline: deadline, header: rec.Header().Clone()}
}

func (tw *timeoutWriter) Header() http.Header {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return http.Header{}
	}
	return tw.header
}

// startLocked sends the handler's headers once.
func (tw *timeoutWriter) startLocked() {
	if !tw.wroteHeader {
		for k, v := range tw.header {
			tw.rec.Header()[k] = v
		}
		tw.wroteHeader = true
	}
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.startLocked()
	tw.rec.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	tw.startLocked()
	return tw.rec.Write(p)
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.timedOut {
		tw.startLocked()
		tw.rec.Flush()
	}
}

func (tw *timeoutWriter) noteError(err error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.timedOut {
		tw.rec.noteError(err)
	}
}

func (tw *timeoutWriter) answerOnce(code int, contentType string, body []byte, extra http.Header) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wroteHeader {
		return false
	}
	tw.wroteHeader = true
	return tw.rec.answerOnce(code, contentType, body, extra)
}

// expired reports whether the request's deadline has passed: any error the handler
// answers from then on is the timeout.
func (tw *timeoutWriter) expired() bool {
	return tw.ctx.Err() != nil || !time.Now().Before(tw.deadline)
}

// answerTimeout answers the timeout from the handler's goroutine.
func (tw *timeoutWriter) answerTimeout() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.wroteHeader, tw.answered = true, true
	tw.rec.noteError(apierrors.NewTimeoutError(requestTimedOut, 0))
	tw.rec.WriteHeader(http.StatusGatewayTimeout)
	_, _ = tw.rec.Write(timeoutBody())
}

// timeout ends the handler's use of the writer at the deadline and answers 504. It
// reports false when the handler had started an answer of its own, which can only be
// cut off (the connection is closed).
func (tw *timeoutWriter) timeout() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.timedOut = true
	if tw.answered {
		return true
	}
	if tw.wroteHeader {
		return false
	}
	tw.wroteHeader = true
	tw.rec.noteError(apierrors.NewTimeoutError(requestTimedOut, 0))
	tw.rec.WriteHeader(http.StatusGatewayTimeout)
	_, _ = tw.rec.Write(timeoutBody())
	return true
}

// requestTimeout is the time a non-watch request may take: ?timeout= (a Go duration) when
// it is positive and below the server's RequestTimeout, else RequestTimeout, as
// kube-apiserver's request deadline filter decides. A malformed value is upstream's 400.
func (s *Server) requestTimeout(r *http.Request) (time.Duration, error) {
	max := s.cfg.RequestTimeout
	v := query(r).Get("timeout")
	if v == "" {
		return max, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("%s - %s", invalidTimeoutInURL, err.Error()))
	}
	if d > 0 && d < max {
		return d, nil
	}
	return max, nil
}

// tooManyRequests is kube-apiserver's 429: plain text, Retry-After 1.
func tooManyRequests(w answerer) {
	plainError(w, http.StatusTooManyRequests, tooManyRequestsText, http.Header{"Retry-After": {"1"}})
}

// outcome is how a handler's goroutine ended.
type outcome struct {
	// abort: the answer was cut short (a panic after it started, or a handler's own
	// http.ErrAbortHandler); the connection must be closed.
	abort bool
}

// withDeadline serves h with the request's deadline on its context, on the connection's
// reads (a body that has not arrived by then fails) and, with writeGrace, on its writes.
// h runs on a goroutine of its own (a kept worker, handlerWorkers) so that the client gets
// the 504 at the deadline whatever h is blocked on; h's work ends because its context does.
// release runs when h returns.
func (s *Server) withDeadline(rec *recorder, r *http.Request, deadline time.Time, release func(), h func(http.ResponseWriter, *http.Request)) {
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	rc := http.NewResponseController(rec)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline.Add(writeGrace))
	tw := newTimeoutWriter(rec, ctx, deadline)
	r = r.WithContext(ctx)
	done := make(chan outcome, 1)
	s.workers.run(func() {
		defer release()
		var o outcome
		defer func() { done <- o }()
		defer func() {
			if p := recover(); p != nil {
				o.abort = p == http.ErrAbortHandler || !s.recovered(tw, r, p, debug.Stack())
			}
		}()
		h(tw, r)
	})
	select {
	case o := <-done:
		if o.abort {
			panic(http.ErrAbortHandler)
		}
	case <-ctx.Done():
		select {
		case o := <-done:
			if o.abort {
				panic(http.ErrAbortHandler)
			}
			return
		default:
		}
		if !tw.timeout() {
			panic(http.ErrAbortHandler)
		}
	}
}

// recovered handles a handler's panic: one log line with the stack, the panic observer,
// and upstream's 500 when no answer was started. It reports false when the answer had
// started (the caller cuts it off).
func (s *Server) recovered(w answerer, r *http.Request, p any, stack []byte) bool {
	s.notePanic(r, p, stack)
	return plainError(w, http.StatusInternalServerError, panicText, nil)
}

// notePanic logs a recovered panic with its stack and tells the panic observer.
func (s *Server) notePanic(r *http.Request, p any, stack []byte) {
	if a := audit.From(r.Context()); a != nil {
		a.Panicked(p)
	}
	s.logLimited(r.Context(), "panic:"+fmt.Sprint(p), errorLevel, "panic serving request",
		"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(stack))
	if s.cfg.ObservePanic != nil {
		s.cfg.ObservePanic()
	}
}
