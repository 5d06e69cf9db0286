package registry

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		"escaped key": {Total: corev1.ResourceQuotaStatus{Hard: list("example.com/fo\"o", "1")}},
	} {
		c := base
		c.Status = st
		got, err := encodeClusterQuota(&c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeForStorage(c.DeepCopy(), crqGVR.GroupVersion().WithKind("ClusterResourceQuota"))
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
