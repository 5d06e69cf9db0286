package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
)

// TestEncodeClusterQuota: the hand-written status encoding is byte for byte encoding/json's.
func TestEncodeClusterQuota(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	base := clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Labels: map[string]string{"a": "b"}, ResourceVersion: "7"},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"x": "y"}},
			Quota:    corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "2")},
		},
	}
	for name, st := range map[string]clusterquota.ClusterResourceQuotaStatus{
		"empty":       {},
		"no entries":  {Total: corev1.ResourceQuotaStatus{Hard: list("pods", "10"), Used: list("pods", "0")}, Namespaces: clusterquota.ResourceQuotasStatusByNamespace{}},
		"entries":     {Total: corev1.ResourceQuotaStatus{Hard: list("pods", "10", "requests.cpu", "2"), Used: list("pods", "3", "requests.cpu", "1500m")}, Namespaces: clusterquota.ResourceQuotasStatusByNamespace{{Namespace: "a", Status: corev1.ResourceQuotaStatus{Hard: list("pods", "10"), Used: list("pods", "1")}}, {Namespace: "b", Status: corev1.ResourceQuotaStatus{Used: list("pods", "2")}}}},
		"spec's hard": clusterquota.Status(base.Spec, []clusterquota.Usage{{Namespace: "b", Used: list("pods", "2")}, {Namespace: "a", Used: list("pods", "1", "requests.cpu", "250m")}}),
		"escaped key": {Total: corev1.ResourceQuotaStatus{Hard: list("example.com/fo\"o", "1")}},
	} {
		c := base
		c.Status = st
		got, err := EncodeClusterQuota(&c)
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json's, but for the entries' hards equal to spec.quota.hard (left out).
		stripped := c.DeepCopy()
		for i := range stripped.Status.Namespaces {
			if e := &stripped.Status.Namespaces[i]; sameText(e.Status.Hard, c.Spec.Quota.Hard) {
				e.Status.Hard = nil
			}
		}
		want, err := EncodeForStorage(stripped, clusterQuotaGVK)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		if c.ResourceVersion != "7" {
			t.Errorf("%s: resourceVersion changed", name)
		}
	}
}

// TestClusterQuotaEncoderReusesEntries: through charges, namespaces coming and going and a
// spec edit, the encoder writes exactly EncodeClusterQuota's bytes, and encodes again only
// the entries whose lists changed.
func TestClusterQuotaEncoderReusesEntries(t *testing.T) {
	hard := corev1.ResourceList{"pods": resource.MustParse("1000"), "requests.cpu": resource.MustParse("100")}
	crq := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", UID: "u", ResourceVersion: "3"},
		Spec:       clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: hard}},
	}
	var usage []clusterquota.Usage
	for i := 0; i < 20; i++ {
		usage = append(usage, clusterquota.Usage{Namespace: fmt.Sprintf("ns-%02d", i)})
	}
	crq.Status = clusterquota.Status(crq.Spec, usage)
	var enc ClusterQuotaEncoder
	check := func(step string, c *clusterquota.ClusterResourceQuota) {
		t.Helper()
		got, err := enc.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := EncodeClusterQuota(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", step, got, want)
		}
		if len(enc.entries) != len(c.Status.Namespaces) {
			t.Fatalf("%s: %d entries kept for %d namespaces", step, len(enc.entries), len(c.Status.Namespaces))
		}
	}
	kept := func() map[string]*byte {
		out := map[string]*byte{}
		for ns, e := range enc.entries {
			out[ns] = &e.b[0]
		}
		return out
	}
	check("first", crq)
	pod := func(c *clusterquota.ClusterResourceQuota, n int) corev1.ResourceList {
		used := c.Status.Total.Used.DeepCopy()
		p := used["pods"]
		p.Add(*resource.NewQuantity(int64(n), resource.DecimalSI))
		used["pods"] = p
		return used
	}
	for round := 0; round < 5; round++ {
		before := kept()
		var charges []clusterquota.NamespaceCharge
		cur := crq
		charged := map[string]bool{}
		for k := 0; k < 3; k++ {
			ns := fmt.Sprintf("ns-%02d", (round*7+k*5)%20)
			after := pod(cur, k+1)
			charges = append(charges, clusterquota.NamespaceCharge{Namespace: ns, Before: cur.Status.Total.Used, After: after})
			next := *cur
			next.Status.Total.Used = after
			cur = &next
			charged[ns] = true
		}
		crq = clusterquota.ChargeAll(crq, charges)
		check(fmt.Sprintf("round %d", round), crq)
		after := kept()
		for ns, b := range after {
			if reused := before[ns] == b; reused == charged[ns] {
				t.Errorf("round %d: %s charged %v, its bytes reused %v", round, ns, charged[ns], reused)
			}
		}
	}
	crq = clusterquota.WithNamespace(crq, "ns-99", corev1.ResourceList{"pods": resource.MustParse("4")})
	check("a namespace joins", crq)
	crq = clusterquota.Without(crq, "ns-03")
	check("a namespace leaves", crq)
	edited := *crq
	edited.Spec.Quota.Hard = corev1.ResourceList{"pods": resource.MustParse("2000"), "requests.cpu": resource.MustParse("100")}
	check("spec edited", &edited)
	check("as read back", mustDecodeCRQ(t, crq))
}

func mustDecodeCRQ(t *testing.T, crq *clusterquota.ClusterResourceQuota) *clusterquota.ClusterResourceQuota {
	t.Helper()
	b, err := EncodeClusterQuota(crq)
	if err != nil {
		t.Fatal(err)
	}
	var out clusterquota.ClusterResourceQuota
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	clusterquota.FillEntryHard(&out)
	return &out
}

// BenchmarkClusterQuotaCharge: what a joined transaction does to the cluster quota of
// quotabench's clusterquota scenario (100 namespaces, 5 resources): charge a pod in each of
// 11 namespaces, then encode the result once. stored-bytes is what etcd writes for it.
func BenchmarkClusterQuotaCharge(b *testing.B) {
	hard := corev1.ResourceList{}
	for name, v := range map[string]string{"pods": "20000", "requests.cpu": "100k", "requests.memory": "100Ti", "limits.cpu": "100k", "limits.memory": "100Ti"} {
		hard[corev1.ResourceName(name)] = resource.MustParse(v)
	}
	crq := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-1764250000000", UID: "0b8e6d4c-5f0e-4d8e-9a57-2f1b3c4d5e6f", ResourceVersion: "7"},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"quotabench": "bench-1764250000000"}}},
			Quota:    corev1.ResourceQuotaSpec{Hard: hard},
		},
	}
	var usage []clusterquota.Usage
	for i := 0; i < 100; i++ {
		usage = append(usage, clusterquota.Usage{Namespace: fmt.Sprintf("bench-1764250000000-%03d", i)})
	}
	crq.Status = clusterquota.Status(crq.Spec, usage)
	clusterquota.CacheCanonical(crq)
	pod := corev1.ResourceList{"pods": resource.MustParse("1"), "requests.cpu": resource.MustParse("10m"), "requests.memory": resource.MustParse("16Mi"), "limits.cpu": resource.MustParse("10m"), "limits.memory": resource.MustParse("16Mi")}
	size := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 11; k++ {
			used := corev1.ResourceList{}
			for name, v := range crq.Status.Total.Used {
				used[name] = quota.Add(corev1.ResourceList{name: v}, corev1.ResourceList{name: pod[name]})[name]
			}
			crq = clusterquota.Charge(crq, fmt.Sprintf("bench-1764250000000-%03d", (i*11+k)%100), used)
		}
		v, err := EncodeClusterQuota(crq)
		if err != nil {
			b.Fatal(err)
		}
		size = len(v)
	}
	b.ReportMetric(float64(size), "stored-bytes")
}
