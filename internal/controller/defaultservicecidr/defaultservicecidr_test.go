package defaultservicecidr

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
