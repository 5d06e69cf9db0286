package integration

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// logRecords is a slog.Handler keeping every record of the server, Debug included.
type logRecords struct {
	mu    sync.Mutex
	recs  []slog.Record
	attrs []slog.Attr
	root  *logRecords
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(l.attrs...)
	root := l.rootOf()
	root.mu.Lock()
	defer root.mu.Unlock()
	root.recs = append(root.recs, r)
	return nil
}

func (l *logRecords) WithAttrs(as []slog.Attr) slog.Handler {
	return &logRecords{attrs: append(append([]slog.Attr(nil), l.attrs...), as...), root: l.rootOf()}
}

func (l *logRecords) WithGroup(string) slog.Handler { return l }

func (l *logRecords) rootOf() *logRecords {
	if l.root != nil {
		return l.root
	}
	return l
}

// lines returns the records with message msg whose attributes contain every want
// (key → substring of the value).
func (l *logRecords) lines(msg string, want map[string]string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.recs {
		if r.Message != msg {
			continue
		}
		got := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			got[a.Key] = a.Value.String()
			return true
		})
		match := true
		for k, v := range want {
			if !strings.Contains(got[k], v) {
				match = false
			}
		}
		if match {
			out = append(out, r)
		}
	}
	return out
}

// TestControllerLogsQuotaRefusalsOnce: a ReplicaSet held short by quota fails its sync
// again and again (each refusal a FailedCreate Event naming the pod it refused), but the
// server logs that expected failure once, at Debug, instead of a WARN line per retry.
func TestControllerLogsQuotaRefusalsOnce(t *testing.T) {
	t.Parallel()
	logs := &logRecords{}
	s := servertest.Start(t, func(c *server.Config) { c.Logger = slog.New(logs) })
	ctx := ctxT(t)
	const ns = "starved"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "1"})
	w, err := s.Client.CoreV1().Events(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=FailedCreate"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	rs := &appsv1.ReplicaSet{ObjectMeta: meta("web"), Spec: appsv1.ReplicaSetSpec{
		Replicas: int32p(2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: podTemplate("web")}}
	if _, err := s.Client.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. Wait for the fifth refusal: each attempt is a pod named afresh, so each refusal
	// is an Event of its own.
	refused := map[string]bool{}
	for len(refused) < 5 {
		if ev, ok := nextEvent(t, w).Object.(*corev1.Event); ok {
			refused[ev.Message] = true
		}
	}
	// 2. One log line for them all, at Debug.
	refusals := logs.lines("sync failed, retrying", map[string]string{"controller": "replicaset", "err": "exceeded quota"})
	if len(refusals) != 1 {
		t.Fatalf("%d log lines for 5 quota refusals, want 1", len(refusals))
	}
	if refusals[0].Level != slog.LevelDebug {
		t.Errorf("quota refusal logged at %v, want DEBUG (it is reported as an Event)", refusals[0].Level)
	}
}
