package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/quotad/quotad/internal/auth"
)

func TestBackendRotatesBySize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "audit.log")
	w, err := OpenLog(LogOptions{Path: path, MaxSize: 1, MaxBackups: 3})
	if err != nil {
		t.Fatal(err)
	}
	b := NewBackend(w, ModeBlocking, 0, nil)
	pad := strings.Repeat("x", 1000)
	const n = 1500 // about 1.5 MB: more than one file of 1 MB
	far := time.Now().Add(time.Hour)
	for i := range n {
		line, _ := json.Marshal(map[string]any{"kind": "Event", "i": i, "pad": pad})
		if !b.Process(far, append(line, '\n')) {
			t.Fatalf("event %d dropped", i)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "audit*.log"))
	if len(files) != 2 {
		t.Fatalf("files = %v, want the log and one backup", files)
	}
	seen := 0
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", f, fi.Mode().Perm())
		}
		if fi.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over --audit-log-maxsize", f, fi.Size())
		}
		data, _ := os.ReadFile(f)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%s: line %q: %v", f, sc.Text(), err)
			}
			seen++
		}
	}
	if seen != n {
		t.Fatalf("%d events in the files, want %d", seen, n)
	}
	if fi, err := os.Stat(filepath.Join(dir, "logs")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("log dir: %v %v", fi, err)
	}
}

// stuckWriter blocks every Write until released, telling when a Write started.
type stuckWriter struct {
	entered chan struct{}
	release chan struct{}
	buf     bytes.Buffer
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.buf.Write(p)
}

func (s *stuckWriter) Close() error { return nil }

func TestBackendFullBuffer(t *testing.T) {
	for _, mode := range []Mode{ModeBlocking, ModeBatch} {
		t.Run(string(mode), func(t *testing.T) {
			w := &stuckWriter{entered: make(chan struct{}, 10), release: make(chan struct{})}
			b := NewBackend(w, mode, 1, nil)
			far := time.Now().Add(time.Hour)
			line := func(i int) []byte { return []byte(fmt.Sprintf("{\"i\":%d}\n", i)) }
			// 1. The writer takes event 0 and is stuck writing it; event 1 fills the buffer.
			if !b.Process(far, line(0)) {
				t.Fatal("event 0 dropped")
			}
			<-w.entered
			if !b.Process(far, line(1)) {
				t.Fatal("event 1 dropped")
			}
			// 2. A full buffer: past its deadline a request does not wait, in either mode.
			if b.Process(time.Now().Add(-time.Second), line(2)) {
				t.Fatal("event 2 taken by a full buffer")
			}
			// 3. With time left, blocking waits for room and batch drops at once.
			got := make(chan bool, 1)
			go func() { got <- b.Process(far, line(3)) }()
			if mode == ModeBatch && <-got {
				t.Fatal("batch mode took event 3 into a full buffer")
			}
			// 4. The writer comes unstuck: a blocked request's event goes in.
			close(w.release)
			if mode == ModeBlocking && !<-got {
				t.Fatal("blocking mode dropped event 3 with time left")
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			want, dropped := "{\"i\":0}\n{\"i\":1}\n{\"i\":3}\n", 1.0
			if mode == ModeBatch {
				want, dropped = "{\"i\":0}\n{\"i\":1}\n", 2
			}
			if w.buf.String() != want {
				t.Errorf("written %q, want %q", w.buf.String(), want)
			}
			if got := counterValue(t, b.failures); got != dropped {
				t.Errorf("apiserver_audit_error_total = %v, want %v", got, dropped)
			}
			// 5. After Close, events are dropped and counted, never block.
			if b.Process(far, line(4)) {
				t.Fatal("closed backend took an event")
			}
		})
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := c.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestStrictModeFailsTheRequest: in blocking-strict mode a RequestReceived event that
// cannot be stored by the request's deadline fails the request with upstream's 500; in
// blocking mode the request goes on.
func TestStrictModeFailsTheRequest(t *testing.T) {
	p, err := ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeBlockingStrict, ModeBlocking} {
		t.Run(string(mode), func(t *testing.T) {
			w := &stuckWriter{entered: make(chan struct{}, 10), release: make(chan struct{})}
			b := NewBackend(w, mode, 1, nil)
			far := time.Now().Add(time.Hour)
			b.Process(far, []byte("{}\n"))
			<-w.entered
			b.Process(far, []byte("{}\n")) // the buffer is full
			r := httptest.NewRequest(http.MethodGet, "/api/v1/pods?x=<b>", nil)
			past := time.Now().Add(-time.Second)
			a := NewAuditor(NewChecker(p), b).Start(r, "id", past, past, auth.Attributes{Verb: "list", ResourceRequest: true, Resource: "pods"}, nil, false)
			ok := a.Received()
			close(w.release)
			b.Close()
			if ok != (mode == ModeBlocking) {
				t.Fatalf("Received = %v", ok)
			}
			if counterValue(t, b.failures) != 1 {
				t.Errorf("dropped events = %v, want 1", counterValue(t, b.failures))
			}
			if mode == ModeBlockingStrict {
				rec := httptest.NewRecorder()
				FailedToStore(rec, r)
				if want := "Internal Server Error: \"/api/v1/pods?x=&lt;b&gt;\": failed to store audit event\n"; rec.Code != 500 || rec.Body.String() != want {
					t.Errorf("answer %d %q, want 500 %q", rec.Code, rec.Body.String(), want)
				}
			}
		})
	}
}
