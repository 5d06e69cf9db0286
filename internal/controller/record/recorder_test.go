package record_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestRecorder checks upstream's recorder behaviour through the real store: one Event per
// distinct message with count and lastTimestamp bumped on repeats, the involved object and
// source as upstream, the aggregation of similar events, and the per-object spam filter
// (burst 25).
func TestRecorder(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fc := clocktesting.NewFakeClock(start)
	rec := record.NewRecorder(s.Store, "replicaset-controller", fc, nil)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", UID: "u1"}}

	rec.Eventf(ctx, rs, corev1.EventTypeWarning, "FailedCreate", "Error creating: %s", "refused")
	fc.Step(time.Second)
	rec.Eventf(ctx, rs, corev1.EventTypeWarning, "FailedCreate", "Error creating: %s", "refused")
	rec.Event(ctx, rs, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: web-1-abcde")

	l, err := s.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byReason := map[string]corev1.Event{}
	for _, e := range l.Items {
		byReason[e.Reason] = e
	}
	if len(l.Items) != 2 {
		t.Fatalf("events = %d, want 2", len(l.Items))
	}
	fc2 := byReason["FailedCreate"]
	want := corev1.ObjectReference{Kind: "ReplicaSet", Namespace: "default", Name: "web-1", UID: "u1", APIVersion: "apps/v1"}
	if fc2.Count != 2 || !fc2.FirstTimestamp.Time.Equal(start) || !fc2.LastTimestamp.Time.Equal(start.Add(time.Second)) ||
		fc2.InvolvedObject != want || fc2.Source.Component != "replicaset-controller" || fc2.ReportingController != "replicaset-controller" ||
		fc2.Type != corev1.EventTypeWarning || fc2.Message != "Error creating: refused" || fc2.Name != fmt.Sprintf("web-1.%x", start.UnixNano()) {
		t.Errorf("FailedCreate event = %+v", fc2)
	}
	if sc := byReason["SuccessfulCreate"]; sc.Count != 1 || sc.Type != corev1.EventTypeNormal {
		t.Errorf("SuccessfulCreate event = %+v", sc)
	}
	// Spam filter: 25 events per object, then one per five minutes.
	other := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "flood", Namespace: "default", UID: "u2"}}
	for i := 0; i < 30; i++ {
		rec.Eventf(ctx, other, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: flood-%d", i)
	}
	fc.Step(5 * time.Minute)
	rec.Eventf(ctx, other, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: flood-late")
	l, err = s.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=flood"})
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's aggregator: the first 9 distinct messages are events of their own; from the
	// 10th on, one combined event counts them (the 16 the spam filter let through, and the
	// one after the refill) and shows the latest.
	if len(l.Items) != 10 {
		t.Fatalf("flood events = %d, want 9 + 1 combined", len(l.Items))
	}
	combined := 0
	for _, e := range l.Items {
		if e.Message == "(combined from similar events): Created pod: flood-late" {
			combined++
			if e.Count != 17 {
				t.Errorf("combined event count %d, want 17", e.Count)
			}
		} else if e.Count != 1 {
			t.Errorf("event %q count %d, want 1", e.Message, e.Count)
		}
	}
	if combined != 1 {
		t.Errorf("combined events %d, want 1: %+v", combined, l.Items)
	}
}

// TestRecorderClusterScoped: an event about a cluster-scoped object (a ClusterResourceQuota)
// lives in namespace default, as upstream's recorder puts it.
func TestRecorderClusterScoped(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := record.NewRecorder(s.Store, "quota-admission", clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), nil)
	ref := corev1.ObjectReference{Kind: "ClusterResourceQuota", APIVersion: "quota.openshift.io/v1", Name: "team-a", UID: "u3"}
	rec.EventRef(ctx, ref, corev1.EventTypeWarning, "QuotaExceeded", "over")
	l, err := s.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].InvolvedObject != ref || l.Items[0].Reason != "QuotaExceeded" || l.Items[0].Message != "over" {
		t.Fatalf("events = %+v", l.Items)
	}
}
