package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// RequestLogLevel is the level of the one line logged per request (method, URI, status,
// user, latency): kube-apiserver logs requests at --v=2 and up, and quotad maps --v=N to
// slog.Level(-N).
const RequestLogLevel = slog.Level(-2)

const errorLevel = slog.LevelError

// Rate limit of repeated log lines: a line with the same key is logged at most once per
// logEvery; the next one says how many were left out.
const (
	logEvery   = 10 * time.Second
	logMaxKeys = 1024
)

// logLimiter remembers when each line was last logged.
type logLimiter struct {
	mu   sync.Mutex
	seen map[string]*logSeen
}

type logSeen struct {
	last       time.Time
	suppressed int
}

// allow reports whether the line with key may be logged at now, and how many lines with
// that key were left out since it last was.
func (l *logLimiter) allow(key string, now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]*logSeen{}
	}
	e := l.seen[key]
	if e != nil && now.Sub(e.last) < logEvery {
		e.suppressed++
		return false, 0
	}
	if e == nil {
		if len(l.seen) >= logMaxKeys {
			// Forget lines not seen within the period; all of them if that is not enough.
			for k, v := range l.seen {
				if now.Sub(v.last) >= logEvery {
					delete(l.seen, k)
				}
			}
			if len(l.seen) >= logMaxKeys {
				clear(l.seen)
			}
		}
		e = &logSeen{}
		l.seen[key] = e
	}
	suppressed, e.suppressed, e.last = e.suppressed, 0, now
	return true, suppressed
}

// logLimited logs a line unless one with the same key was logged within logEvery.
func (s *Server) logLimited(ctx context.Context, key string, level slog.Level, msg string, args ...any) {
	if !s.cfg.Logger.Enabled(ctx, level) {
		return
	}
	ok, suppressed := s.logs.allow(key, s.cfg.Clock.Now())
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	s.cfg.Logger.Log(ctx, level, msg, args...)
}

// logRequest writes the request's log lines once it is answered: one at RequestLogLevel
// for every request, and one error line (rate-limited) for a 5xx answer; it also tells the
// request observer.
func (s *Server) logRequest(rec *recorder, r *http.Request, start time.Time) {
	latency := time.Since(start)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	s.observeRequest(rec, status, latency)
	ctx := r.Context()
	if s.cfg.Logger.Enabled(ctx, RequestLogLevel) {
		s.cfg.Logger.Log(ctx, RequestLogLevel, "HTTP", "verb", r.Method, "URI", r.URL.RequestURI(),
			"latency", latency, "userAgent", r.UserAgent(), "user", rec.user, "srcIP", r.RemoteAddr, "resp", status)
	}
	if status >= 500 {
		errText := ""
		if rec.err != nil {
			errText = rec.err.Error()
		}
		s.logLimited(ctx, fmt.Sprintf("%d %s %s", status, r.Method, errText), errorLevel, "request failed",
			"method", r.Method, "path", r.URL.Path, "status", status, "user", rec.user, "latency", latency, "err", errText)
	}
}
