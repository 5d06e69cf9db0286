package servicecidrs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	cidr := func(name string, deletedAgo time.Duration, finalized bool, ready *metav1.Condition, ranges ...string) *networkingv1.ServiceCIDR {
		sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: ranges}}
		if deletedAgo > 0 {
			sc.DeletionTimestamp = &metav1.Time{Time: now.Add(-deletedAgo)}
		}
		if finalized {
			sc.Finalizers = []string{"example.com/other", Finalizer}
		}
		if ready != nil {
			sc.Status.Conditions = []metav1.Condition{*ready}
		}
		return sc
	}
	ip := func(name string) *networkingv1.IPAddress {
		return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	readyTrue := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Message: ReadyMessage}
	terminating := &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Terminating", Message: TerminatingMessage}
	defaultReady := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Message: "Kubernetes default Service CIDR is ready"}
	yes, no := true, false
	def := cidr("kubernetes", 0, true, readyTrue, "10.96.0.0/12")
	tests := []struct {
		name   string
		sc     *networkingv1.ServiceCIDR
		others []*networkingv1.ServiceCIDR
		ips    []string
		want   Decision
	}{
		{"new: finalizer and Ready", cidr("a", 0, false, nil, "192.168.0.0/24"), nil, nil, Decision{SetFinalizer: &yes, Ready: readyTrue}},
		{"settled", cidr("a", 0, true, readyTrue, "192.168.0.0/24"), nil, nil, Decision{}},
		{"the default's message replaced", cidr("kubernetes", 0, true, defaultReady, "10.96.0.0/12"), nil, nil, Decision{Ready: readyTrue}},
		{"a Ready set False by hand made True", cidr("a", 0, true, terminating, "192.168.0.0/24"), nil, nil, Decision{Ready: readyTrue}},
		{"deleting, an address only it holds", cidr("a", time.Minute, true, readyTrue, "192.168.0.0/24"), []*networkingv1.ServiceCIDR{def}, []string{"192.168.0.10", "10.96.0.1"},
			Decision{Ready: terminating}},
		{"deleting, still blocked: nothing written", cidr("a", time.Minute, true, terminating, "192.168.0.0/24"), []*networkingv1.ServiceCIDR{def}, []string{"192.168.0.10"}, Decision{}},
		{"deleting, its address also in another", cidr("a", time.Minute, true, terminating, "192.168.0.0/24"),
			[]*networkingv1.ServiceCIDR{def, cidr("b", 0, true, readyTrue, "192.168.0.0/25")}, []string{"192.168.0.10"}, Decision{SetFinalizer: &no}},
		{"deleting, inside a larger range", cidr("a", time.Minute, true, readyTrue, "10.96.5.0/24"), []*networkingv1.ServiceCIDR{def}, []string{"10.96.5.7"}, Decision{SetFinalizer: &no}},
		{"deleting, the same range twice", cidr("a", time.Minute, true, readyTrue, "192.168.0.0/24"),
			[]*networkingv1.ServiceCIDR{cidr("b", time.Minute, true, readyTrue, "192.168.0.0/24")}, []string{"192.168.0.10"}, Decision{SetFinalizer: &no}},
		{"deleting, network and broadcast addresses are no range's", cidr("a", time.Minute, true, readyTrue, "192.168.0.0/24"), nil, []string{"192.168.0.0", "192.168.0.255"},
			Decision{SetFinalizer: &no}},
		{"deleting, an IPv6 range's last address is its own", cidr("a", time.Minute, true, readyTrue, "fd00::/120"), nil, []string{"fd00::ff"}, Decision{Ready: terminating}},
		{"deleting, nothing blocks, in the grace period", cidr("a", 3*time.Second, true, readyTrue, "192.168.0.0/24"), nil, nil, Decision{RecheckAfter: 7 * time.Second}},
		{"deleted, finalizer already gone", cidr("a", time.Minute, false, readyTrue, "192.168.0.0/24"), nil, nil, Decision{}},
	}
	for _, tc := range tests {
		var ips []*networkingv1.IPAddress
		for _, n := range tc.ips {
			ips = append(ips, ip(n))
		}
		got := Decide(tc.sc, append([]*networkingv1.ServiceCIDR{tc.sc}, tc.others...), ips, now)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, diff)
		}
	}
}
