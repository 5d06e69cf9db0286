package table

import (
	"fmt"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestKindsCTables checks the columns and cells of the DRA, ServiceCIDR and IPAddress
// printers, as upstream's kubectl get prints them.
func TestKindsCTables(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-90 * time.Second))
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, CreationTimestamp: created} }
	deleting := om("gone")
	deleting.DeletionTimestamp = &created
	node := "node-1"
	tests := []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{"device class", &resourcev1.DeviceClass{ObjectMeta: om("gpu")}, "[Name Age] [gpu 90s]"},
		{"pending claim", &resourcev1.ResourceClaim{ObjectMeta: om("c")}, "[Name State Age] [c pending 90s]"},
		{"reserved claim", &resourcev1.ResourceClaim{ObjectMeta: om("c"), Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{}, ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Name: "p"}}}}, "[Name State Age] [c allocated,reserved 90s]"},
		{"deleted claim", &resourcev1.ResourceClaim{ObjectMeta: deleting}, "[Name State Age] [gone deleted 90s]"},
		{"deleted allocated claim", &resourcev1.ResourceClaim{ObjectMeta: deleting, Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}},
			"[Name State Age] [gone deleted,allocated 90s]"},
		{"claim template", &resourcev1.ResourceClaimTemplate{ObjectMeta: om("t")}, "[Name Age] [t 90s]"},
		{"slice", &resourcev1.ResourceSlice{ObjectMeta: om("s"), Spec: resourcev1.ResourceSliceSpec{NodeName: &node, Driver: "d.example.com", Pool: resourcev1.ResourcePool{Name: "p"}}},
			"[Name Node Driver Pool Age] [s node-1 d.example.com p 90s]"},
		{"slice of all nodes", &resourcev1.ResourceSlice{ObjectMeta: om("s"), Spec: resourcev1.ResourceSliceSpec{Driver: "d.example.com", Pool: resourcev1.ResourcePool{Name: "p"}}},
			"[Name Node Driver Pool Age] [s  d.example.com p 90s]"},
		{"device taint rule", &resourcev1.DeviceTaintRule{ObjectMeta: om("maintenance"), Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Value: "yes", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: &created}}},
			"[Name Key Value Effect TimeAdded Age] [maintenance example.com/maintenance yes NoExecute 90s 90s]"},
		{"device taint rule without time added", &resourcev1.DeviceTaintRule{ObjectMeta: om("t"), Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "k", Effect: resourcev1.DeviceTaintEffectNone}}},
			"[Name Key Value Effect TimeAdded Age] [t k  None  90s]"},
		{"service cidr", &networkingv1.ServiceCIDR{ObjectMeta: om("kubernetes"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00::/108"}}},
			"[Name CIDRs Age] [kubernetes 10.96.0.0/12,fd00::/108 90s]"},
		{"ip address", &networkingv1.IPAddress{ObjectMeta: om("10.96.0.1"), Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}}},
			"[Name ParentRef] [10.96.0.1 services/default/kubernetes 90s]"},
		{"ip address of a grouped parent", &networkingv1.IPAddress{ObjectMeta: om("10.0.0.1"), Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "Example.com", Resource: "Gateways", Name: "gw"}}},
			"[Name ParentRef] [10.0.0.1 gateways.example.com/gw 90s]"},
		{"ip address without parent", &networkingv1.IPAddress{ObjectMeta: om("10.0.0.2")}, "[Name ParentRef] [10.0.0.2 <none> 90s]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := Convert([]runtime.Object{tc.obj}, now, metav1.IncludeNone, false)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, c := range tbl.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if got := fmt.Sprint(cols, tbl.Rows[0].Cells); got != tc.want {
				t.Errorf("table = %s\nwant    %s", got, tc.want)
			}
		})
	}
}
