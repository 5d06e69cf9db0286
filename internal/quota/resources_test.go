package quota_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota"
)

func TestResourceListAlgebra(t *testing.T) {
	a := rl(t, "cpu=1", "memory=1Gi", "pods=2")
	b := rl(t, "cpu=500m", "memory=2Gi", "secrets=3")
	tests := []struct {
		name string
		got  corev1.ResourceList
		want string
	}{
		{"Add", quota.Add(a, b), "cpu=1500m memory=3Gi pods=2 secrets=3"},
		{"Add zero takes the other's format", quota.Add(rl(t, "memory=0"), rl(t, "memory=512Mi")), "memory=512Mi"},
		{"Subtract", quota.Subtract(a, b), "cpu=500m memory=-1Gi pods=2 secrets=-3"},
		{"SubtractWithNonNegativeResult", quota.SubtractWithNonNegativeResult(a, b), "cpu=500m memory=0 pods=2 secrets=0"},
		{"Max", quota.Max(a, b), "cpu=1 memory=2Gi pods=2 secrets=3"},
		{"Mask", quota.Mask(a, []corev1.ResourceName{"cpu", "pods", "services"}), "cpu=1 pods=2"},
		{"RemoveZeros", quota.RemoveZeros(rl(t, "cpu=0", "pods=1", "memory=0Mi")), "pods=1"},
		{"Positive", quota.Positive(quota.Subtract(a, b)), "cpu=500m pods=2"},
	}
	for _, tt := range tests {
		if s := show(tt.got); s != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, s, tt.want)
		}
	}
	if show(a) != "cpu=1 memory=1Gi pods=2" || show(b) != "cpu=500m memory=2Gi secrets=3" {
		t.Error("inputs were modified")
	}
}

func TestResourceListPredicates(t *testing.T) {
	if !quota.Equals(rl(t, "cpu=1", "memory=1Gi"), rl(t, "cpu=1000m", "memory=1024Mi")) {
		t.Error("Equals must compare numerically")
	}
	if quota.Equals(rl(t, "cpu=1"), rl(t, "cpu=1", "memory=0")) {
		t.Error("Equals must compare name sets")
	}
	if quota.Equals(rl(t, "cpu=1"), rl(t, "memory=1")) {
		t.Error("Equals must compare names")
	}
	ok, exceeded := quota.LessThanOrEqual(rl(t, "cpu=2", "memory=1Gi", "pods=9", "secrets=1"), rl(t, "cpu=1", "memory=2Gi", "pods=3", "services=1"))
	if ok || names(exceeded) != "cpu pods" {
		t.Errorf("LessThanOrEqual = %v %v", ok, exceeded)
	}
	if ok, _ := quota.LessThanOrEqual(rl(t, "cpu=1"), rl(t, "cpu=1")); !ok {
		t.Error("equal values are within the limit")
	}
	if !quota.IsZero(nil) || !quota.IsZero(rl(t, "cpu=0")) || quota.IsZero(rl(t, "cpu=0", "pods=1")) {
		t.Error("IsZero")
	}
	if got := names(quota.IsNegative(rl(t, "memory=-1", "cpu=-1m", "pods=0"))); got != "cpu memory" {
		t.Errorf("IsNegative = %s", got)
	}
	if got := names(quota.ResourceNames(rl(t, "pods=1", "cpu=1", "count/pods=1"))); got != "count/pods cpu pods" {
		t.Errorf("ResourceNames = %s", got)
	}
	x := []corev1.ResourceName{"pods", "cpu", "cpu", "memory"}
	y := []corev1.ResourceName{"memory", "services", "cpu"}
	if got := names(quota.Intersection(x, y)); got != "cpu memory" {
		t.Errorf("Intersection = %s", got)
	}
	if got := names(quota.Difference(x, y)); got != "pods" {
		t.Errorf("Difference = %s", got)
	}
	if !quota.Contains(x, "memory") || quota.Contains(x, "services") {
		t.Error("Contains")
	}
	if !quota.ContainsPrefix([]string{"hugepages-"}, "hugepages-2Mi") || quota.ContainsPrefix([]string{"hugepages-"}, "requests.hugepages-2Mi") {
		t.Error("ContainsPrefix")
	}
}

func TestResourceNameClassification(t *testing.T) {
	tests := []struct {
		name                                     corev1.ResourceName
		standardQuota, standard, integer, extend bool
	}{
		{"cpu", true, true, false, false},
		{"storage", false, true, false, false},
		{"requests.storage", true, true, false, false},
		{"pods", true, true, true, false},
		{"services.loadbalancers", true, true, true, false},
		{"hugepages-2Mi", true, true, false, false},
		{"requests.hugepages-2Mi", true, true, false, false},
		{"count/pods", false, false, true, true},
		{"gold.storageclass.storage.k8s.io/requests.storage", false, false, true, true},
		{"requests.example.com/gpu", false, false, false, false},
		{"example.com/gpu", false, false, true, true},
		{"kubernetes.io/foo", false, false, false, false},
		{"foo", false, false, false, false},
	}
	for _, tt := range tests {
		if got := quota.IsStandardQuotaResourceName(tt.name); got != tt.standardQuota {
			t.Errorf("IsStandardQuotaResourceName(%s) = %v", tt.name, got)
		}
		if got := quota.IsStandardResourceName(tt.name); got != tt.standard {
			t.Errorf("IsStandardResourceName(%s) = %v", tt.name, got)
		}
		if got := quota.IsIntegerResourceName(tt.name); got != tt.integer {
			t.Errorf("IsIntegerResourceName(%s) = %v", tt.name, got)
		}
		if got := quota.IsExtendedResourceName(tt.name); got != tt.extend {
			t.Errorf("IsExtendedResourceName(%s) = %v", tt.name, got)
		}
	}
}

func TestObjectCountNames(t *testing.T) {
	for _, tt := range []struct {
		name   corev1.ResourceName
		group  string
		res    string
		parsed bool
	}{
		{"count/pods", "", "pods", true},
		{"count/replicasets.apps", "apps", "replicasets", true},
		{"count/foos.quota.integration.test.k8s.io", "quota.integration.test.k8s.io", "foos", true},
		{"count/", "", "", false},
		{"pods", "", "", false},
	} {
		gr, ok := quota.ParseObjectCountName(tt.name)
		if ok != tt.parsed || gr.Group != tt.group || gr.Resource != tt.res {
			t.Errorf("ParseObjectCountName(%s) = %v %v", tt.name, gr, ok)
		}
		if ok && quota.ObjectCountName(gr) != tt.name {
			t.Errorf("ObjectCountName(%v) = %s", gr, quota.ObjectCountName(gr))
		}
	}
}
