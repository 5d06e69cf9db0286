package graceful

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/registry/kinds/core"
)

// TestGracefulStamp pins upstream's BeforeDelete and the pod strategy's
// CheckGracefulDelete: which deletes mark a pod, with what, and which write nothing.
func TestGracefulStamp(t *testing.T) {
	now := metav1.NewTime(time.Unix(1_000_000, 0))
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }
	pod := func(node string, tgps *int64, phase corev1.PodPhase, ts *metav1.Time, grace *int64) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", DeletionTimestamp: ts, DeletionGracePeriodSeconds: grace},
			Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: tgps}, Status: corev1.PodStatus{Phase: phase}}
	}
	ts := func(d time.Duration) *metav1.Time { t := at(d); return &t }
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		requested *int64
		want      *Stamp
		pending   bool
	}{
		{name: "bound: terminationGracePeriodSeconds", pod: pod("n", ptr.To[int64](45), corev1.PodRunning, nil, nil),
			want: &Stamp{At: at(45 * time.Second), Grace: 45}},
		{name: "bound: the request wins", pod: pod("n", ptr.To[int64](45), corev1.PodRunning, nil, nil), requested: ptr.To[int64](5),
			want: &Stamp{At: at(5 * time.Second), Grace: 5}},
		{name: "bound: a negative request is 1", pod: pod("n", ptr.To[int64](45), corev1.PodRunning, nil, nil), requested: ptr.To[int64](-3),
			want: &Stamp{At: at(time.Second), Grace: 1}},
		{name: "bound, no period anywhere: at once", pod: pod("n", nil, corev1.PodRunning, nil, nil), want: &Stamp{At: now}},
		{name: "bound, grace 0 requested: at once", pod: pod("n", ptr.To[int64](45), corev1.PodRunning, nil, nil), requested: ptr.To[int64](0),
			want: &Stamp{At: now}},
		{name: "unbound: at once", pod: pod("", ptr.To[int64](45), corev1.PodPending, nil, nil), requested: ptr.To[int64](10),
			want: &Stamp{At: now}},
		{name: "succeeded: at once", pod: pod("n", ptr.To[int64](45), corev1.PodSucceeded, nil, nil), want: &Stamp{At: now}},
		{name: "failed: at once", pod: pod("n", ptr.To[int64](45), corev1.PodFailed, nil, nil), want: &Stamp{At: now}},
		{name: "deleting: no request is pending", pod: pod("n", ptr.To[int64](45), corev1.PodRunning, ts(30*time.Second), ptr.To[int64](30)),
			pending: true},
		{name: "deleting: a longer or equal request is pending", pod: pod("n", nil, corev1.PodRunning, ts(30*time.Second), ptr.To[int64](30)),
			requested: ptr.To[int64](30), pending: true},
		{name: "deleting: a shorter request moves the timestamp back", pod: pod("n", nil, corev1.PodRunning, ts(30*time.Second), ptr.To[int64](30)),
			requested: ptr.To[int64](10), want: &Stamp{At: at(10 * time.Second), Grace: 10}},
		{name: "deleting: never before now, still graceful", pod: pod("n", nil, corev1.PodRunning, ts(5*time.Second), ptr.To[int64](30)),
			requested: ptr.To[int64](10), want: &Stamp{At: now, Grace: 1}},
		{name: "deleting: grace 0 confirms", pod: pod("n", nil, corev1.PodRunning, ts(5*time.Second), ptr.To[int64](30)),
			requested: ptr.To[int64](0), want: &Stamp{At: now}},
		{name: "deleting with no grace left: an ordinary delete", pod: pod("n", nil, corev1.PodRunning, ts(0), ptr.To[int64](0)),
			requested: ptr.To[int64](10)},
		{name: "deleting with no grace recorded: an ordinary delete", pod: pod("n", nil, corev1.PodRunning, ts(0), nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pending := Decide(core.Pod{}, tc.pod, tc.requested, now)
			if pending != tc.pending {
				t.Fatalf("pending %v, want %v", pending, tc.pending)
			}
			if (got == nil) != (tc.want == nil) || got != nil && (!got.At.Equal(&tc.want.At) || got.Grace != tc.want.Grace) {
				t.Errorf("stamp %+v, want %+v", got, tc.want)
			}
		})
	}
}
