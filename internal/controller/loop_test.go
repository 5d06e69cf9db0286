package controller_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/server/servertest"
)

// records is a slog.Handler keeping every record, for tests.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// matching returns the records with message msg.
func (r *records) matching(msg string) []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []slog.Record
	for _, rec := range r.recs {
		if rec.Message == msg {
			out = append(out, rec)
		}
	}
	return out
}

func attr(rec slog.Record, key string) (slog.Value, bool) {
	var v slog.Value
	found := false
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v, found = a.Value, true
			return false
		}
		return true
	})
	return v, found
}

// panicCounter is a controller.PanicObserver counting per controller.
type panicCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *panicCounter) ControllerPanicked(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[name]++
}

func (p *panicCounter) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[name]
}

// TestProcessRecoversPanics: a sync that panics does not take the process down; the
// panic is logged once at Error with its stack, counted, and the key is retried (with
// backoff) until its sync succeeds.
func TestProcessRecoversPanics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logs := &records{}
	panics := &panicCounter{}
	loop := controller.NewLoop("test", nil, slog.New(logs), panics, nil)
	q := controller.NewQueue("test")
	synced := make(chan string, 10)
	var mu sync.Mutex
	calls := map[string]int{}
	sync := func(ctx context.Context, key string) (time.Duration, error) {
		mu.Lock()
		calls[key]++
		n := calls[key]
		mu.Unlock()
		if key == "bad" && n < 3 {
			var m map[string]int
			m["boom"]++ // a nil map write: a runtime panic like any bug's
		}
		synced <- key
		return 0, nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop.Process(ctx, q, 2, sync)
	}()
	q.Add("bad")
	q.Add("good")
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case k := <-synced:
			got[k] = true
		case <-ctx.Done():
			t.Fatalf("keys synced: %v", got)
		}
	}
	cancel()
	<-done
	mu.Lock()
	if calls["bad"] != 3 || calls["good"] != 1 {
		t.Errorf("calls = %v, want bad retried until it succeeded (3) and good once", calls)
	}
	mu.Unlock()
	if n := panics.count("test"); n != 2 {
		t.Errorf("panics counted = %d, want 2", n)
	}
	recs := logs.matching("controller panic recovered")
	if len(recs) != 2 {
		t.Fatalf("panic log lines = %d, want 2", len(recs))
	}
	for _, rec := range recs {
		if rec.Level != slog.LevelError {
			t.Errorf("panic logged at %v, want ERROR", rec.Level)
		}
		if k, _ := attr(rec, "key"); k.String() != "bad" {
			t.Errorf("panic log key = %q", k)
		}
		if p, _ := attr(rec, "panic"); !strings.Contains(p.String(), "nil map") {
			t.Errorf("panic log value = %q", p)
		}
		if st, _ := attr(rec, "stack"); !strings.Contains(st.String(), "loop_test.go") {
			t.Errorf("panic log stack does not show the panicking function:\n%s", st)
		}
	}
	if recs := logs.matching("sync failed, retrying"); len(recs) != 0 {
		t.Errorf("a recovered panic was also logged as a failure: %d lines", len(recs))
	}
}

// TestProcessThrottlesRepeatedFailures: a key failing the same way again and again logs
// its first failure, then nothing until the throttle interval has passed, then one line
// carrying the count of the repeats it summarises. Expected failures log at Debug.
func TestProcessThrottlesRepeatedFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		level slog.Level
	}{
		{"unexpected", errors.New("etcd unavailable"), slog.LevelWarn},
		{"expected", controller.Expected(errors.New(`pods "p" is forbidden: exceeded quota`)), slog.LevelDebug},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			logs := &records{}
			clk := clocktesting.NewFakePassiveClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			loop := controller.NewLoop("test", nil, slog.New(logs), nil, clk)
			q := controller.NewQueue("test")
			calls := make(chan int)
			n := 0
			sync := func(ctx context.Context, key string) (time.Duration, error) {
				n++
				select {
				case calls <- n:
				case <-ctx.Done():
				}
				return 0, tc.err
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				loop.Process(ctx, q, 1, sync)
			}()
			q.Add("k")
			// Calls 1..4 fail within the interval; then the interval passes; call 5 fails
			// after it. Call 6 starting means call 5's failure was handled.
			for want := 1; want <= 6; want++ {
				select {
				case got := <-calls:
					if got != want {
						t.Fatalf("call %d, want %d", got, want)
					}
				case <-ctx.Done():
					t.Fatalf("call %d never came", want)
				}
				if want == 4 {
					clk.SetTime(clk.Now().Add(controller.DefaultThrottleInterval))
				}
			}
			cancel()
			<-done
			recs := logs.matching("sync failed, retrying")
			if len(recs) != 2 {
				t.Fatalf("failure log lines = %d, want 2 (the first, then one summary)", len(recs))
			}
			for _, rec := range recs {
				if rec.Level != tc.level {
					t.Errorf("failure logged at %v, want %v", rec.Level, tc.level)
				}
			}
			if _, ok := attr(recs[0], "repeats"); ok {
				t.Errorf("first failure carries repeats")
			}
			if r, _ := attr(recs[1], "repeats"); r.Int64() != 3 {
				t.Errorf("summary repeats = %v, want 3 (calls 2-4)", r)
			}
		})
	}
}

// TestThrottle walks the throttle's decisions.
func TestThrottle(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	th := controller.NewThrottle(clk, time.Minute)
	for i, step := range []struct {
		advance     time.Duration
		key, msg    string
		succeeded   bool
		wantLog     bool
		wantRepeats int
	}{
		{key: "a", msg: "x", wantLog: true},
		{key: "a", msg: "x"},
		{advance: 30 * time.Second, key: "a", msg: "x"},
		{key: "b", msg: "x", wantLog: true},
		{advance: 30 * time.Second, key: "a", msg: "x", wantLog: true, wantRepeats: 2},
		{key: "a", msg: "x"},
		{key: "a", msg: "y", wantLog: true},
		{key: "a", succeeded: true},
		{key: "a", msg: "y", wantLog: true},
	} {
		clk.SetTime(clk.Now().Add(step.advance))
		if step.succeeded {
			th.Succeeded(step.key)
			continue
		}
		log, repeats := th.Failed(step.key, step.msg)
		if log != step.wantLog || repeats != step.wantRepeats {
			t.Errorf("step %d: Failed(%s, %s) = %v, %d; want %v, %d", i, step.key, step.msg, log, repeats, step.wantLog, step.wantRepeats)
		}
	}
}

// TestWatchRecoversHandlerPanics: a watch handler that panics on one object (through a
// real watch of the registry) loses that event only: the panic is logged and counted and
// later events are delivered.
func TestWatchRecoversHandlerPanics(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logs := &records{}
	panics := &panicCounter{}
	loop := controller.NewLoop("watcher", s.Store, slog.New(logs), panics, nil)
	seen := make(chan string, 100)
	res := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("configmaps"))
	go loop.Watch(ctx, res, func(obj runtime.Object, deleted bool) {
		cm := obj.(*corev1.ConfigMap)
		if cm.Name == "boom" {
			panic("handler bug")
		}
		seen <- cm.Namespace + "/" + cm.Name
	})
	for _, name := range []string{"boom", "fine"} {
		if _, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for {
		select {
		case k := <-seen:
			if k == "default/fine" {
				if n := panics.count("watcher"); n != 1 {
					t.Errorf("panics counted = %d, want 1", n)
				}
				recs := logs.matching("controller panic recovered")
				if len(recs) != 1 {
					t.Fatalf("panic log lines = %d, want 1", len(recs))
				}
				if o, _ := attr(recs[0], "object"); o.String() != "default/boom" {
					t.Errorf("panic log object = %q", o)
				}
				return
			}
		case <-ctx.Done():
			t.Fatal("the event after the panic never came")
		}
	}
}
