package record_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/server/servertest"
)

// waitEvents lists the events of namespace default matching fieldSelector until done
// holds for them (the recorder writes asynchronously), and returns them.
func waitEvents(ctx context.Context, t *testing.T, s *servertest.Server, fieldSelector string, done func([]corev1.Event) bool) []corev1.Event {
	t.Helper()
	var items []corev1.Event
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := s.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: fieldSelector})
		if err != nil {
			return false, err
		}
		items = l.Items
		return done(items), nil
	})
	if err != nil {
		t.Fatalf("events %q: %v; last seen %+v", fieldSelector, err, items)
	}
	return items
}

func find(items []corev1.Event, match func(corev1.Event) bool) (corev1.Event, bool) {
	for _, e := range items {
		if match(e) {
			return e, true
		}
	}
	return corev1.Event{}, false
}

// TestRecorder checks client-go's recorder through the sink over the real store: one Event
// per distinct message with count and lastTimestamp bumped on repeats, the involved object
// and source as upstream, the aggregation of similar events, and the per-object spam filter
// (burst 25, then one per five minutes of the recorder's clock).
func TestRecorder(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fc := clocktesting.NewFakeClock(start)
	rec := record.NewRecorder(s.Store, "replicaset-controller", fc, nil)
	rec.Start(ctx)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "u1"}}

	before := time.Now().Truncate(time.Second)
	rec.Eventf(ctx, rs, corev1.EventTypeWarning, "FailedCreate", "Error creating: %s", "refused")
	fc.Step(time.Second)
	rec.Eventf(ctx, rs, corev1.EventTypeWarning, "FailedCreate", "Error creating: %s", "refused")
	rec.Event(ctx, rs, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: web-1-abcde")

	// The broadcaster writes in order: once the last event is there, so is the repeat.
	items := waitEvents(ctx, t, s, "involvedObject.name=web-1", func(items []corev1.Event) bool {
		_, ok := find(items, func(e corev1.Event) bool { return e.Reason == "SuccessfulCreate" })
		return ok
	})
	after := time.Now()
	if len(items) != 2 {
		t.Fatalf("events = %d, want 2: %+v", len(items), items)
	}
	fc2, _ := find(items, func(e corev1.Event) bool { return e.Reason == "FailedCreate" })
	want := corev1.ObjectReference{Kind: "ReplicaSet", Namespace: "default", Name: "web-1", UID: "u1", APIVersion: "apps/v1"}
	if fc2.Count != 2 || fc2.InvolvedObject != want || fc2.Source.Component != "replicaset-controller" || fc2.ReportingController != "replicaset-controller" ||
		fc2.Type != corev1.EventTypeWarning || fc2.Message != "Error creating: refused" {
		t.Errorf("FailedCreate event = %+v", fc2)
	}
	// client-go's recorder stamps an event with the wall clock (its clock is not
	// settable), and names it <object>.<those nanoseconds in hex>.
	hex, ok := strings.CutPrefix(fc2.Name, "web-1.")
	nanos, err := strconv.ParseInt(hex, 16, 64)
	if !ok || err != nil || !fc2.FirstTimestamp.Time.Equal(time.Unix(0, nanos).Truncate(time.Second)) {
		t.Errorf("FailedCreate name %q, firstTimestamp %v", fc2.Name, fc2.FirstTimestamp)
	}
	if fc2.FirstTimestamp.Time.Before(before) || fc2.LastTimestamp.Time.Before(fc2.FirstTimestamp.Time) || fc2.LastTimestamp.Time.After(after) {
		t.Errorf("FailedCreate timestamps %v, %v, want within [%v, %v]", fc2.FirstTimestamp, fc2.LastTimestamp, before, after)
	}
	if sc, _ := find(items, func(e corev1.Event) bool { return e.Reason == "SuccessfulCreate" }); sc.Count != 1 || sc.Type != corev1.EventTypeNormal {
		t.Errorf("SuccessfulCreate event = %+v", sc)
	}

	// flush records an event about another object (its own spam bucket) and waits for it:
	// the broadcaster handles events one at a time, in order, so every event recorded
	// before it has then been written or dropped.
	marker := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: "default", UID: "u9"}}
	flushes := 0
	flush := func() {
		t.Helper()
		flushes++
		msg := fmt.Sprintf("flush %d", flushes)
		rec.Event(ctx, marker, corev1.EventTypeNormal, "Flush", msg)
		waitEvents(ctx, t, s, "involvedObject.name=marker", func(items []corev1.Event) bool {
			_, ok := find(items, func(e corev1.Event) bool { return e.Message == msg })
			return ok
		})
	}
	combinedOf := func(items []corev1.Event) (corev1.Event, bool) {
		return find(items, func(e corev1.Event) bool { return strings.HasPrefix(e.Message, "(combined from similar events): ") })
	}

	// Aggregation and spam filter: the first 9 distinct messages of an object, type and
	// reason are events of their own; from the 10th on, one combined event, stamped by the
	// correlator's (fake) clock, counts them and shows the latest. The token bucket lets
	// 25 of the 30 through: the 9, and the combined event up to flood-24.
	other := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "flood", Namespace: "default", UID: "u2"}}
	for i := 0; i < 30; i++ {
		rec.Eventf(ctx, other, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: flood-%d", i)
	}
	flush()
	items = waitEvents(ctx, t, s, "involvedObject.name=flood", func([]corev1.Event) bool { return true })
	if len(items) != 10 {
		t.Fatalf("flood events = %d, want 9 + 1 combined: %+v", len(items), items)
	}
	for _, e := range items {
		if !strings.HasPrefix(e.Message, "(combined") && e.Count != 1 {
			t.Errorf("event %q count %d, want 1", e.Message, e.Count)
		}
	}
	c, _ := combinedOf(items)
	aggregated := start.Add(time.Second)
	if c.Message != "(combined from similar events): Created pod: flood-24" || c.Count != 16 ||
		c.Name != fmt.Sprintf("flood.%x", aggregated.UnixNano()) || !c.FirstTimestamp.Time.Equal(aggregated) || !c.LastTimestamp.Time.Equal(aggregated) {
		t.Errorf("combined event after the burst = %+v, want flood-24 counted 16", c)
	}

	// Five minutes refill one token: one more event gets through. The correlator counts
	// the five the filter dropped too (upstream: it observes an event before filtering it),
	// so the combined event counts all 22 flood events; the one after that is dropped.
	fc.Step(5 * time.Minute)
	rec.Eventf(ctx, other, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: flood-late")
	rec.Eventf(ctx, other, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: flood-dropped")
	flush()
	items = waitEvents(ctx, t, s, "involvedObject.name=flood", func([]corev1.Event) bool { return true })
	if len(items) != 10 {
		t.Fatalf("flood events = %d, want 9 + 1 combined: %+v", len(items), items)
	}
	c, _ = combinedOf(items)
	if c.Message != "(combined from similar events): Created pod: flood-late" || c.Count != 22 ||
		!c.FirstTimestamp.Time.Equal(aggregated) || !c.LastTimestamp.Time.Equal(aggregated.Add(5*time.Minute)) {
		t.Errorf("combined event = %+v, want flood-late counted 22", c)
	}
}

// TestRecorderClusterScoped: an event about a cluster-scoped object (a ClusterResourceQuota)
// lives in namespace default, as upstream's recorder puts it.
func TestRecorderClusterScoped(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := record.NewRecorder(s.Store, "quota-admission", clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), nil)
	rec.Start(ctx)
	ref := corev1.ObjectReference{Kind: "ClusterResourceQuota", APIVersion: "quota.openshift.io/v1", Name: "team-a", UID: "u3"}
	rec.EventRef(ctx, ref, corev1.EventTypeWarning, "QuotaExceeded", "over")
	items := waitEvents(ctx, t, s, "involvedObject.name=team-a", func(items []corev1.Event) bool { return len(items) > 0 })
	if len(items) != 1 || items[0].InvolvedObject != ref || items[0].Reason != "QuotaExceeded" || items[0].Message != "over" {
		t.Fatalf("events = %+v", items)
	}
}

// TestRecorderRecreatesDeleted: a repeat of an event deleted meanwhile is created again
// with its count, as upstream's broadcaster does when its patch finds no event (the sink
// returns the registry's NotFound as the *StatusError the broadcaster looks for).
func TestRecorderRecreatesDeleted(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := record.NewRecorder(s.Store, "replicaset-controller", clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), nil)
	rec.Start(ctx)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "default", UID: "u5"}}
	rec.Event(ctx, rs, corev1.EventTypeWarning, "FailedCreate", "refused")
	items := waitEvents(ctx, t, s, "involvedObject.name=gone", func(items []corev1.Event) bool { return len(items) == 1 })
	if err := s.Client.CoreV1().Events("default").Delete(ctx, items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.Event(ctx, rs, corev1.EventTypeWarning, "FailedCreate", "refused")
	items = waitEvents(ctx, t, s, "involvedObject.name=gone", func(items []corev1.Event) bool { return len(items) == 1 })
	if items[0].Count != 2 || items[0].Message != "refused" {
		t.Errorf("recreated event = %+v, want count 2", items[0])
	}
}
