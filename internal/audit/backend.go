package audit

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/natefinch/lumberjack.v2"
)

// Mode is how the backend behaves when its buffer is full (--audit-log-mode).
type Mode string

// The modes, as upstream's.
const (
	// ModeBlocking: a request waits for room in the buffer, until its deadline; then its
	// event is dropped and counted. kube-apiserver's default for the log backend.
	ModeBlocking Mode = "blocking"
	// ModeBlockingStrict: as blocking, and a request whose RequestReceived event cannot be
	// stored fails with upstream's 500 instead of being served unaudited.
	ModeBlockingStrict Mode = "blocking-strict"
	// ModeBatch: a request never waits; an event that finds the buffer full is dropped and
	// counted.
	ModeBatch Mode = "batch"
)

// ParseMode checks an --audit-log-mode value ("" is blocking).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return ModeBlocking, nil
	case ModeBlocking, ModeBlockingStrict, ModeBatch:
		return Mode(s), nil
	}
	return "", fmt.Errorf("invalid audit log mode %s, allowed modes are %q", s, []string{string(ModeBatch), string(ModeBlocking), string(ModeBlockingStrict)})
}

// DefaultBufferSize is the events the backend holds before requests wait (upstream's
// --audit-log-batch-buffer-size).
const DefaultBufferSize = 10000

// LogOptions are kube-apiserver's --audit-log-* flags.
type LogOptions struct {
	// Path is the file events are written to; "-" is standard output.
	Path string
	// MaxAge (days), MaxBackups and MaxSize (megabytes) bound the rotated files, as
	// lumberjack reads them (0: keep every file; 100 MB).
	MaxAge, MaxBackups, MaxSize int
	// Compress gzips rotated files.
	Compress bool
}

// OpenLog opens the audit log: standard output for "-", otherwise the file (created 0600
// in a directory created 0700 if missing, as upstream) behind lumberjack's rotation.
func OpenLog(o LogOptions) (io.WriteCloser, error) {
	if o.Path == "-" {
		return nopCloser{os.Stdout}, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("ensureLogFile: %w", err)
	}
	f, err := os.OpenFile(o.Path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ensureLogFile: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("ensureLogFile: %w", err)
	}
	return &lumberjack.Logger{Filename: o.Path, MaxAge: o.MaxAge, MaxBackups: o.MaxBackups, MaxSize: o.MaxSize, Compress: o.Compress}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Backend writes encoded events, one per line, from one goroutine; requests hand it
// lines through a bounded buffer.
type Backend struct {
	w    io.WriteCloser
	mode Mode
	log  *slog.Logger

	lines chan []byte
	// stop is closed by Close: waiting senders give up, the writer drains and ends.
	stop chan struct{}
	done chan struct{}
	// mu: senders hold it shared while they may put a line in the buffer; Close holds it
	// alone to know no line arrives after the writer's last drain.
	mu     sync.RWMutex
	closed bool
	once   sync.Once

	events   prometheus.Counter
	failures prometheus.Counter
	errs     int
}

// NewBackend starts a Backend writing to w. bufferSize <= 0 is DefaultBufferSize.
func NewBackend(w io.WriteCloser, mode Mode, bufferSize int, log *slog.Logger) *Backend {
	if bufferSize <= 0 {
		bufferSize = DefaultBufferSize
	}
	if mode == "" {
		mode = ModeBlocking
	}
	if log == nil {
		log = slog.Default()
	}
	b := &Backend{
		w: w, mode: mode, log: log,
		lines: make(chan []byte, bufferSize), stop: make(chan struct{}), done: make(chan struct{}),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_event_total",
			Help: "Counter of audit events generated and sent to the audit backend.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name:        "apiserver_audit_error_total",
			Help:        "Counter of audit events that failed to be audited properly (dropped when the buffer stayed full, or not written).",
			ConstLabels: prometheus.Labels{"plugin": "log"},
		}),
	}
	go b.run()
	return b
}

// Collectors are the backend's metrics, for the server's registry.
func (b *Backend) Collectors() []prometheus.Collector {
	return []prometheus.Collector{b.events, b.failures}
}

// Mode is the backend's mode.
func (b *Backend) Mode() Mode { return b.mode }

// Process hands one encoded event (a line ending in '\n') to the writer. In blocking
// modes it waits for room until deadline; it reports false, and counts the event as
// failed, when the event was dropped.
func (b *Backend) Process(deadline time.Time, line []byte) bool {
	b.events.Inc()
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.failures.Inc()
		return false
	}
	select {
	case b.lines <- line:
		return true
	default:
	}
	if wait := time.Until(deadline); b.mode != ModeBatch && wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case b.lines <- line:
			return true
		case <-t.C:
		case <-b.stop:
		}
	}
	b.failures.Inc()
	return false
}

// run writes lines until Close, then what is left in the buffer.
func (b *Backend) run() {
	defer close(b.done)
	for {
		select {
		case l := <-b.lines:
			b.write(l)
		case <-b.stop:
			b.mu.Lock()
			b.closed = true
			b.mu.Unlock()
			for {
				select {
				case l := <-b.lines:
					b.write(l)
				default:
					return
				}
			}
		}
	}
}

func (b *Backend) write(l []byte) {
	if _, err := b.w.Write(l); err != nil {
		b.failures.Inc()
		b.errs++
		// The first failure and then one in a thousand are logged.
		if b.errs%1000 == 1 {
			b.log.Error("writing audit event failed", "err", err, "failures", b.errs)
		}
	}
}

// Close stops taking events, writes those buffered and closes the log.
func (b *Backend) Close() error {
	var err error
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		err = b.w.Close()
	})
	return err
}
