package codec

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
)

var semantic = equality.Semantic

func resourceList(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// readBack is what a cluster quota reads back as once stored: an entry without a hard has
// spec.quota.hard's.
func readBack(c *clusterquota.ClusterResourceQuota) *clusterquota.ClusterResourceQuota {
	out := c.DeepCopy()
	for i := range out.Status.Namespaces {
		if e := &out.Status.Namespaces[i]; len(e.Status.Hard) == 0 && len(out.Spec.Quota.Hard) > 0 {
			e.Status.Hard = out.Spec.Quota.Hard.DeepCopy()
		}
	}
	return out
}

// TestEncodeClusterQuota: a cluster quota's entries are stored as rows when every entry can
// be one, else in OpenShift's shape byte for byte as encoding/json writes it (entries' hards
// equal to spec.quota.hard left out); everything else is encoding/json's; every form reads
// back as the cluster quota.
func TestEncodeClusterQuota(t *testing.T) {
	list := resourceList
	base := clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Labels: map[string]string{"a": "b"}, ResourceVersion: "7"},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"x": "y"}},
			Quota:    corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "2")},
		},
	}
	total := corev1.ResourceQuotaStatus{Hard: list("pods", "10", "requests.cpu", "2"), Used: list("pods", "3", "requests.cpu", "1500m")}
	entry := func(ns string, hard, used corev1.ResourceList) clusterquota.ResourceQuotaStatusByNamespace {
		return clusterquota.ResourceQuotaStatusByNamespace{Namespace: ns, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
	}
	for _, tc := range []struct {
		name string
		st   clusterquota.ClusterResourceQuotaStatus
		rows string // the stored rows; "": stored in OpenShift's shape
	}{
		{name: "empty"},
		{name: "no entries", st: clusterquota.ClusterResourceQuotaStatus{Total: total, Namespaces: clusterquota.ResourceQuotasStatusByNamespace{}}},
		{name: "spec's hard", st: clusterquota.Status(base.Spec, []clusterquota.Usage{{Namespace: "b", Used: list("pods", "2")}, {Namespace: "a", Used: list("pods", "1", "requests.cpu", "250m")}}),
			rows: `"namespaceRows":{"resources":["pods","requests.cpu"],"rows":[["a","1","250m"],["b","2","0"]]}`},
		{name: "values missing, hards left out or empty", st: clusterquota.ClusterResourceQuotaStatus{Total: total, Namespaces: clusterquota.ResourceQuotasStatusByNamespace{
			entry("a", nil, list("requests.cpu", "1500m")), entry("b", corev1.ResourceList{}, nil), entry("c", list("requests.cpu", "2", "pods", "10"), list("pods", "3"))}},
			rows: `"namespaceRows":{"resources":["pods","requests.cpu"],"rows":[["a",null,"1500m"],["b",null,null],["c","3",null]]}`},
		{name: "an entry's hard not spec's", st: clusterquota.ClusterResourceQuotaStatus{Total: total, Namespaces: clusterquota.ResourceQuotasStatusByNamespace{
			entry("a", list("pods", "10"), list("pods", "1")), entry("b", nil, list("pods", "2"))}}},
		{name: "an entry's used beyond spec's names", st: clusterquota.ClusterResourceQuotaStatus{Total: total, Namespaces: clusterquota.ResourceQuotasStatusByNamespace{
			entry("a", nil, list("pods", "1", "count/configmaps", "2"))}}},
		{name: "escaped key", st: clusterquota.ClusterResourceQuotaStatus{Total: corev1.ResourceQuotaStatus{Hard: list("example.com/fo\"o", "1")}}},
	} {
		c := base
		c.Status = tc.st
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
		if tc.rows != "" {
			// OpenShift's shape up to the entries, then the rows.
			at := bytes.Index(want, []byte(`"namespaces":`))
			want = append(append(append([]byte(nil), want[:at]...), tc.rows...), "}}"...)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, want)
		}
		if c.ResourceVersion != "7" {
			t.Errorf("%s: resourceVersion changed", tc.name)
		}
		var back clusterquota.ClusterResourceQuota
		if err := DecodeClusterQuota(got, &back); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		back.TypeMeta, back.ResourceVersion = c.TypeMeta, c.ResourceVersion
		if exp := readBack(&c); !semantic.DeepEqual(&back, exp) || (back.Status.Namespaces == nil) != (exp.Status.Namespaces == nil) {
			t.Errorf("%s: read back\n%+v\nwant\n%+v", tc.name, back, *exp)
		}
	}
}

// TestClusterQuotaEscapedNamesNotRows: a resource name JSON would escape, in spec.quota.hard
// and the entries, is stored by encoding/json (no rows, no hand-written status) and reads back.
func TestClusterQuotaEscapedNamesNotRows(t *testing.T) {
	hard := resourceList("example.com/fo\"o", "4", "pods", "10")
	c := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:       clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: hard}},
	}
	c.Status = clusterquota.Status(c.Spec, []clusterquota.Usage{{Namespace: "a", Used: resourceList("example.com/fo\"o", "1", "pods", "2")}})
	for _, enc := range []*ClusterQuotaEncoder{nil, {}} {
		b, err := enc.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := EncodeForStorage(c.DeepCopy(), clusterQuotaGVK)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("stored\n%s\nwant encoding/json's\n%s", b, want)
		}
		var back clusterquota.ClusterResourceQuota
		if err := DecodeClusterQuota(b, &back); err != nil {
			t.Fatal(err)
		}
		back.TypeMeta = c.TypeMeta
		if !semantic.DeepEqual(&back, readBack(c)) {
			t.Fatalf("read back %+v", back.Status)
		}
	}
}

// TestClusterQuotaRowsRoundTrip: random statuses (entries' used naming some of the resources,
// hards spec's, left out, empty or another) read back as they were, in whichever form they
// are stored; and a status in OpenShift's shape with every entry's hard, as stored before the
// rows, reads the same.
func TestClusterQuotaRowsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"pods", "requests.cpu", "requests.memory", "count/configmaps", "example.com/gpu"}
	values := []string{"0", "1", "1500m", "2Gi", "100Ti", "12", "3k"}
	pick := func(n int) corev1.ResourceList {
		l := corev1.ResourceList{}
		for _, name := range names[:n] {
			if rng.Intn(3) > 0 {
				l[corev1.ResourceName(name)] = resource.MustParse(values[rng.Intn(len(values))])
			}
		}
		return l
	}
	rows := 0
	for i := 0; i < 500; i++ {
		spec := pick(1 + rng.Intn(len(names)))
		c := &clusterquota.ClusterResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%d", i), UID: "u"},
			Spec:       clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: spec}},
		}
		c.Status.Total = corev1.ResourceQuotaStatus{Hard: spec.DeepCopy(), Used: pick(len(names))}
		for k := rng.Intn(6); k > 0; k-- {
			var hard corev1.ResourceList
			switch rng.Intn(8) {
			case 0:
				hard = pick(len(names))
			case 1:
				hard = corev1.ResourceList{}
			case 2, 3:
			default:
				hard = spec.DeepCopy()
			}
			used := pick(len(names))
			if rng.Intn(4) > 0 {
				// Masked to spec.quota.hard's names, as quotad computes it.
				for name := range used {
					if _, ok := spec[name]; !ok {
						delete(used, name)
					}
				}
			}
			c.Status.Namespaces = append(c.Status.Namespaces, clusterquota.ResourceQuotaStatusByNamespace{Namespace: fmt.Sprintf("ns-%d", k), Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}})
		}
		b, err := EncodeClusterQuota(c)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"namespaceRows"`)) {
			rows++
		}
		earlier, err := EncodeForStorage(readBack(c), clusterQuotaGVK)
		if err != nil {
			t.Fatal(err)
		}
		for form, v := range map[string][]byte{"stored": b, "earlier": earlier} {
			var back clusterquota.ClusterResourceQuota
			if err := DecodeClusterQuota(v, &back); err != nil {
				t.Fatalf("%d %s: %v: %s", i, form, err, v)
			}
			back.TypeMeta = c.TypeMeta
			if exp := readBack(c); !semantic.DeepEqual(&back, exp) {
				t.Fatalf("%d %s: %s read back\n%+v\nwant\n%+v", i, form, v, back.Status, exp.Status)
			}
		}
	}
	if rows < 100 || rows > 450 {
		t.Fatalf("%d of 500 stored as rows: the cases do not cover both forms", rows)
	}
}

// TestDecodeClusterQuotaRefusesBadRows: rows that do not match their names, or hold a value
// that is no quantity, are an error, not an entry made up.
func TestDecodeClusterQuotaRefusesBadRows(t *testing.T) {
	for _, rows := range []string{
		`{"resources":["pods"],"rows":[["a"]]}`,
		`{"resources":["pods"],"rows":[["a","1","2"]]}`,
		`{"resources":["pods"],"rows":[[null,"1"]]}`,
		`{"resources":["pods"],"rows":[["a","lots"]]}`,
	} {
		v := `{"kind":"ClusterResourceQuota","apiVersion":"quota.openshift.io/v1","metadata":{"name":"q"},"spec":{"quota":{"hard":{"pods":"1"}}},"status":{"total":{},"namespaceRows":` + rows + `}}`
		var c clusterquota.ClusterResourceQuota
		if err := DecodeClusterQuota([]byte(v), &c); err == nil {
			t.Errorf("%s: decoded as %+v", rows, c.Status)
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
		// Entries whose hard is no longer spec.quota.hard's (a spec edited, its status not yet
		// recomputed) are stored in OpenShift's shape, and kept by nobody.
		if rows := bytes.Contains(got, []byte(`"namespaceRows"`)); rows && len(enc.entries) != len(c.Status.Namespaces) {
			t.Fatalf("%s: %d entries kept for %d namespaces", step, len(enc.entries), len(c.Status.Namespaces))
		} else if rows != (step != "spec edited") {
			t.Fatalf("%s: stored as rows %v: %s", step, rows, got)
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
	if err := DecodeClusterQuota(b, &out); err != nil {
		t.Fatal(err)
	}
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

// TestClusterQuotaEncoderNoRows: an encoder with NoRows writes OpenShift's shape (the
// entries' hards equal to spec.quota.hard left out), byte for byte encoding/json's, and
// keeps the bytes of the entries no charge changed, as with rows.
func TestClusterQuotaEncoderNoRows(t *testing.T) {
	c := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:       clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: resourceList("pods", "10")}},
	}
	c.Status = clusterquota.Status(c.Spec, []clusterquota.Usage{{Namespace: "a", Used: resourceList("pods", "2")}, {Namespace: "b", Used: resourceList("pods", "1")}})
	enc := ClusterQuotaEncoder{NoRows: true}
	check := func(step string, c *clusterquota.ClusterResourceQuota) {
		t.Helper()
		got, err := enc.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		stripped := c.DeepCopy()
		for i := range stripped.Status.Namespaces {
			stripped.Status.Namespaces[i].Status.Hard = nil
		}
		want, err := EncodeForStorage(stripped, clusterQuotaGVK)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: stored\n%s\nwant\n%s", step, got, want)
		}
	}
	check("first", c)
	kept := &enc.entries["a"].b[0]
	total := resourceList("pods", "4")
	c = clusterquota.ChargeAll(c, []clusterquota.NamespaceCharge{{Namespace: "b", Before: c.Status.Total.Used, After: total}})
	check("b charged", c)
	if q := enc.entries["b"].used["pods"]; &enc.entries["a"].b[0] != kept || q.String() != "2" {
		t.Errorf("a's bytes encoded again, or b's not: %+v", enc.entries)
	}
}
