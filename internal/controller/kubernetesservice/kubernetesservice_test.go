package kubernetesservice

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDesired(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name       string
		beats      []string
		subsets    int
		slicePort  int32
		sliceAddrs []string
	}{
		{"one replica", []string{"127.0.0.1:6443"}, 1, 6443, []string{"127.0.0.1"}},
		{"replicas on one port", []string{"10.0.0.2:6443", "10.0.0.1:6443"}, 1, 6443, []string{"10.0.0.1", "10.0.0.2"}},
		{"most replicas win the slice", []string{"10.0.0.1:7000", "10.0.0.2:6443", "10.0.0.3:6443"}, 2, 6443, []string{"10.0.0.2", "10.0.0.3"}},
		{"tie: lowest port", []string{"10.0.0.1:7000", "10.0.0.2:6443"}, 2, 6443, []string{"10.0.0.2"}},
		{"garbage ignored", []string{"nonsense", "10.0.0.1:6443"}, 1, 6443, []string{"10.0.0.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			beats := map[string]time.Time{}
			for _, b := range tc.beats {
				beats[b] = now
			}
			ep, slice, svc := Desired(beats, "10.96.0.1")
			if len(ep.Subsets) != tc.subsets {
				t.Errorf("subsets %+v", ep.Subsets)
			}
			var addrs []string
			for _, e := range slice.Endpoints {
				addrs = append(addrs, e.Addresses...)
			}
			if *slice.Ports[0].Port != tc.slicePort || len(addrs) != len(tc.sliceAddrs) {
				t.Fatalf("slice port %d addresses %v", *slice.Ports[0].Port, addrs)
			}
			for i := range addrs {
				if addrs[i] != tc.sliceAddrs[i] {
					t.Errorf("slice addresses %v, want %v", addrs, tc.sliceAddrs)
				}
			}
			if svc.Spec.ClusterIP != "10.96.0.1" || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(tc.slicePort) {
				t.Errorf("service %+v", svc.Spec)
			}
		})
	}
}
