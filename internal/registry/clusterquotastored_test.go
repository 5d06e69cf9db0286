package registry

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/codec"
)

// TestClusterQuotaStoredForm: a cluster quota stored without its entries' hards reads back
// in OpenShift's shape (every entry's hard is spec.quota.hard), and a value stored in the
// earlier form, with every entry's hard, reads the same.
func TestClusterQuotaStoredForm(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	crq := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", UID: "u"},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"x": "y"}},
			Quota:    corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "2")},
		},
	}
	var usage []clusterquota.Usage
	for i := 0; i < 20; i++ {
		usage = append(usage, clusterquota.Usage{Namespace: fmt.Sprintf("ns-%02d", 19-i), Used: list("pods", fmt.Sprint(i%3), "requests.cpu", fmt.Sprintf("%dm", 10*i))})
	}
	crq.Status = clusterquota.Status(crq.Spec, usage)
	// A charge as a batch makes it (a new entry among them).
	crq = clusterquota.Charge(crq, "ns-new", list("pods", "11", "requests.cpu", "2"))
	res := NewCatalogue().Get(crqGVR)
	newForm, err := codec.EncodeClusterQuota(crq)
	if err != nil {
		t.Fatal(err)
	}
	earlier := *crq
	oldForm, err := codec.EncodeForStorage(&earlier, crqGVR.GroupVersion().WithKind("ClusterResourceQuota"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(newForm, []byte(`"status":{"hard"`)) || !bytes.Contains(oldForm, []byte(`"status":{"hard"`)) {
		t.Fatalf("entries' hards: stored %s, earlier form %s", newForm, oldForm)
	}
	t.Logf("stored %d bytes, %d with every entry's hard", len(newForm), len(oldForm))
	for name, b := range map[string][]byte{"stored": newForm, "earlier form": oldForm} {
		obj, err := decodeStored(res, b, 5)
		if err != nil {
			t.Fatal(err)
		}
		got := obj.(*clusterquota.ClusterResourceQuota)
		if len(got.Status.Namespaces) != 21 {
			t.Fatalf("%s: %d entries", name, len(got.Status.Namespaces))
		}
		if !semantic.DeepEqual(got.Status, crq.Status) {
			t.Errorf("%s: read back\n%+v\nwant\n%+v", name, got.Status, crq.Status)
		}
		for _, e := range got.Status.Namespaces {
			if !quota.Equals(e.Status.Hard, crq.Spec.Quota.Hard) {
				t.Errorf("%s: %s's hard %v", name, e.Namespace, e.Status.Hard)
			}
		}
	}
}
