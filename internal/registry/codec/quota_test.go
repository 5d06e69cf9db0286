package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestQuotaEncoderMatchesJSON: whatever a batch does to status.used, the spliced encoding is
// byte for byte encoding/json's, for quotas of every shape.
func TestQuotaEncoderMatchesJSON(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("ResourceQuota")
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	full := func() *corev1.ResourceQuota {
		q := &corev1.ResourceQuota{}
		q.Name, q.Namespace, q.UID, q.ResourceVersion = "compute", "team-a", "u-1", "42"
		q.Labels = map[string]string{"used": "{x}", "tier": "gold"}
		q.Annotations = map[string]string{`,"used":{`: `"}}"`}
		q.CreationTimestamp = metav1.Unix(1700000000, 0)
		q.Spec.Hard = list("pods", "10", "requests.cpu", "4", "requests.memory", "8Gi", "count/deployments.apps", "5",
			"requests.nvidia.com/gpu", "2", "hugepages-2Mi", "1Gi")
		q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}
		q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
			ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
		q.Status.Hard = q.Spec.Hard
		q.Status.Used = list("pods", "0", "requests.cpu", "0", "requests.memory", "0")
		return q
	}
	cases := []struct {
		name  string
		quota func() *corev1.ResourceQuota
	}{
		{"full", full},
		{"no used yet", func() *corev1.ResourceQuota { q := full(); q.Status.Used = nil; return q }},
		{"empty status", func() *corev1.ResourceQuota { q := full(); q.Status = corev1.ResourceQuotaStatus{}; return q }},
		{"used only", func() *corev1.ResourceQuota {
			q := full()
			q.Status.Hard = nil
			return q
		}},
		{"bare", func() *corev1.ResourceQuota { q := &corev1.ResourceQuota{}; q.Name = "b"; return q }},
	}
	values := []string{"0", "1", "999", "1k", "100m", "1500m", "16Mi", "1Gi", "100Ti", "1e3", "0.5", "12345678901234"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc := NewQuotaEncoder(gvk)
			for round := 0; round < 50; round++ {
				q := c.quota()
				switch {
				case round == 0:
				case round%7 == 0:
					q.Status.Used = nil
				default:
					q.Status.Used = corev1.ResourceList{}
					for _, name := range []string{"pods", "requests.cpu", "requests.memory", "count/deployments.apps", "requests.nvidia.com/gpu", "hugepages-2Mi"} {
						if rng.IntN(3) > 0 {
							v := resource.MustParse(values[rng.IntN(len(values))])
							v.Add(resource.MustParse(values[rng.IntN(len(values))]))
							q.Status.Used[corev1.ResourceName(name)] = v
						}
					}
				}
				want, err := EncodeForStorage(q, gvk)
				if err != nil {
					t.Fatal(err)
				}
				got, err := enc.Encode(q)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("round %d:\n got %s\nwant %s", round, got, want)
				}
				if q.ResourceVersion != c.quota().ResourceVersion {
					t.Fatalf("resourceVersion changed to %q", q.ResourceVersion)
				}
			}
			if enc.prefixes[c.quota().Name] == nil {
				t.Fatalf("no prefix kept for %q: every encoding was a full one", c.name)
			}
		})
	}
}

// TestQuotaEncoderFallsBack: a name JSON would escape is encoded in full, still exactly.
func TestQuotaEncoderFallsBack(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("ResourceQuota")
	q := &corev1.ResourceQuota{}
	q.Name = "odd"
	q.Status.Used = corev1.ResourceList{"pods": resource.MustParse("1")}
	enc := NewQuotaEncoder(gvk)
	if _, err := enc.Encode(q); err != nil {
		t.Fatal(err)
	}
	q.Status.Used = corev1.ResourceList{"pods": resource.MustParse("2"), `a<b`: resource.MustParse("1")}
	want, _ := EncodeForStorage(q, gvk)
	got, err := enc.Encode(q)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
}

func BenchmarkQuotaEncode(b *testing.B) {
	gvk := corev1.SchemeGroupVersion.WithKind("ResourceQuota")
	q := &corev1.ResourceQuota{}
	q.Name, q.Namespace, q.UID = "bench", "bench", "u-1"
	hard := corev1.ResourceList{"pods": resource.MustParse("20000"), "requests.cpu": resource.MustParse("100"),
		"requests.memory": resource.MustParse("100Ti"), "limits.cpu": resource.MustParse("100"), "limits.memory": resource.MustParse("100Ti")}
	q.Spec.Hard, q.Status.Hard = hard, hard
	used := func(i int) corev1.ResourceList {
		return corev1.ResourceList{"pods": *resource.NewQuantity(int64(i), resource.DecimalSI),
			"requests.cpu": *resource.NewMilliQuantity(int64(10*i), resource.DecimalSI), "requests.memory": *resource.NewQuantity(int64(i)<<24, resource.BinarySI),
			"limits.cpu": *resource.NewMilliQuantity(int64(10*i), resource.DecimalSI), "limits.memory": *resource.NewQuantity(int64(i)<<24, resource.BinarySI)}
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			q.Status.Used = used(i)
			if _, err := EncodeForStorage(q, gvk); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spliced", func(b *testing.B) {
		enc := NewQuotaEncoder(gvk)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			q.Status.Used = used(i)
			if _, err := enc.Encode(q); err != nil {
				b.Fatal(err)
			}
		}
	})
}
