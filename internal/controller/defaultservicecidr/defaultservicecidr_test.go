package defaultservicecidr

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller/fake"
)

func TestNeedsReady(t *testing.T) {
	cidrs := []string{"10.96.0.0/12"}
	sc := func(cidrs []string, conds ...metav1.ConditionStatus) *networkingv1.ServiceCIDR {
		o := &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
		for _, s := range conds {
			o.Status.Conditions = append(o.Status.Conditions, metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: s})
		}
		return o
	}
	deleting := sc(cidrs)
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name string
		sc   *networkingv1.ServiceCIDR
		want bool
	}{
		{"no condition", sc(cidrs), true},
		{"unknown", sc(cidrs, metav1.ConditionUnknown), true},
		{"ready", sc(cidrs, metav1.ConditionTrue), false},
		{"not ready is left alone", sc(cidrs, metav1.ConditionFalse), false},
		{"another range", sc([]string{"10.0.0.0/16"}), false},
		{"a second family", sc([]string{"10.96.0.0/12", "fd00::/108"}), false},
		{"being deleted", deleting, false},
	}
	for _, tc := range tests {
		if got := NeedsReady(tc.sc, cidrs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestReport: upstream's texts for a default ServiceCIDR the flags disagree with, and for one
// not Ready on the range they give (kube-apiserver's kubernetes-service-cidr-controller).
func TestReport(t *testing.T) {
	cidrs := []string{"172.30.0.0/16"}
	other := &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12"}}}
	notReady := &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}, Status: networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{
		{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionFalse, Reason: "Broken", Message: "someone set it"}}}}
	deleting := other.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name         string
		sc           *networkingv1.ServiceCIDR
		reason, text string
	}{
		{"another range", other, ReasonInconsistent, "The default ServiceCIDR [10.96.0.0/12] does not match the controller flag configurations [172.30.0.0/16]"},
		{"not ready", notReady, "Broken", "Configuration matches, but someone set it"},
		{"fine", &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}, "", ""},
		{"being deleted", deleting, "", ""},
	}
	for _, tc := range tests {
		if reason, text := Report(tc.sc, cidrs); reason != tc.reason || text != tc.text {
			t.Errorf("%s: %q %q, want %q %q", tc.name, reason, text, tc.reason, tc.text)
		}
	}
}

// TestInconsistentRangeReportedOnce: with --service-cluster-ip-range changed on a cluster
// whose default ServiceCIDR holds another range, the running controller leaves the range as
// it is and records one Warning event about it, however often it syncs; Sync alone (the
// server's start) records none.
func TestInconsistentRangeReportedOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(clocktesting.NewFakeClock(time.Now()))
	fc.Add(&networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: Name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12"}}})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := New(fc, quiet, nil, []string{"172.30.0.0/16"}).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	c := New(fc, quiet, nil, []string{"172.30.0.0/16"})
	go c.Start(ctx)
	events := func() []*corev1.Event {
		var out []*corev1.Event
		for _, o := range fc.Objects(corev1.SchemeGroupVersion.WithResource("events"), "default") {
			out = append(out, o.(*corev1.Event))
		}
		return out
	}
	var got []*corev1.Event
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = events()
		return len(got) > 0, nil
	}); err != nil {
		t.Fatal("no event about the inconsistent range")
	}
	// More syncs report nothing more: a repeat would bump the event's count. The recorder
	// writes in order, so once an event recorded after them is written, theirs would be.
	for i := range 3 {
		if err := c.sync(ctx, true); err != nil {
			t.Fatal(err, i)
		}
	}
	c.rec.Event(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, corev1.EventTypeNormal, "Sentinel", "after the syncs")
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = events()
		return len(got) > 1, nil
	}); err != nil {
		t.Fatal("the sentinel event was not written")
	}
	ev := got[slices.IndexFunc(got, func(e *corev1.Event) bool { return e.Reason == ReasonInconsistent })]
	if len(got) != 2 || ev.Count != 1 || ev.Type != corev1.EventTypeWarning || ev.Reason != ReasonInconsistent || ev.Source.Component != Component ||
		ev.InvolvedObject.Kind != "ServiceCIDR" || ev.InvolvedObject.Name != Name ||
		ev.Message != "The default ServiceCIDR [10.96.0.0/12] does not match the controller flag configurations [172.30.0.0/16]" {
		t.Fatalf("events %+v", got)
	}
	o, err := fc.Get(ctx, c.res(), "", Name)
	if err != nil || !slices.Equal(o.(*networkingv1.ServiceCIDR).Spec.CIDRs, []string{"10.96.0.0/12"}) {
		t.Fatalf("the stored range was changed: %v %v", o, err)
	}
}
