package clusterquota

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func str(l corev1.ResourceList) string {
	out := map[string]string{}
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return fmt.Sprint(out)
}

func TestSelects(t *testing.T) {
	labels := map[string]string{"team": "a", "env": "prod"}
	annotations := map[string]string{"openshift.io/requester": "alice"}
	for _, tt := range []struct {
		name string
		sel  ClusterResourceQuotaSelector
		want bool
	}{
		{"nothing selects nothing", ClusterResourceQuotaSelector{}, false},
		{"labels match", ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}, true},
		{"labels differ", ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}}, false},
		{"expression", ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "dev"}}}}}, true},
		{"annotations match", ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"openshift.io/requester": "alice"}}, true},
		{"annotation value differs", ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"openshift.io/requester": "bob"}}, false},
		{"both must match", ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, AnnotationSelector: map[string]string{"x": "y"}}, false},
		{"invalid selector selects nothing", ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}}}, false},
	} {
		if got := Selects(tt.sel, labels, annotations); got != tt.want {
			t.Errorf("%s: Selects = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestStatusArithmetic: Status sums the namespaces; Charge moves the total and one entry by
// the same amounts without touching its input; WithNamespace and Without move a namespace
// in and out.
func TestStatusArithmetic(t *testing.T) {
	crq := &ClusterResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "2")}}}
	crq.Status = Status(crq.Spec, []Usage{{Namespace: "b", Used: list("pods", "2", "requests.cpu", "500m", "secrets", "9")}, {Namespace: "a", Used: list("pods", "1")}})
	if got := str(crq.Status.Total.Used); got != "map[pods:3 requests.cpu:500m]" {
		t.Fatalf("total %s", got)
	}
	if crq.Status.Namespaces[0].Namespace != "a" || str(crq.Status.Namespaces[0].Status.Used) != "map[pods:1 requests.cpu:0]" {
		t.Fatalf("entries %+v", crq.Status.Namespaces)
	}
	charged := Charge(crq, "b", list("pods", "4", "requests.cpu", "700m"))
	if str(charged.Status.Total.Used) != "map[pods:4 requests.cpu:700m]" || str(charged.Status.Namespaces[1].Status.Used) != "map[pods:3 requests.cpu:700m]" {
		t.Fatalf("charged %+v", charged.Status)
	}
	if str(crq.Status.Total.Used) != "map[pods:3 requests.cpu:500m]" || str(crq.Status.Namespaces[1].Status.Used) != "map[pods:2 requests.cpu:500m]" {
		t.Fatalf("Charge modified its input: %+v", crq.Status)
	}
	// A namespace without an entry gets one.
	c2 := Charge(crq, "c", list("pods", "5", "requests.cpu", "500m"))
	if len(c2.Status.Namespaces) != 3 || c2.Status.Namespaces[2].Namespace != "c" || str(c2.Status.Namespaces[2].Status.Used) != "map[pods:2 requests.cpu:0]" || len(crq.Status.Namespaces) != 2 {
		t.Fatalf("new entry %+v", c2.Status.Namespaces)
	}
	out := Without(crq, "b")
	if str(out.Status.Total.Used) != "map[pods:1 requests.cpu:0]" || len(out.Status.Namespaces) != 1 || Has(out, "b") {
		t.Fatalf("without %+v", out.Status)
	}
	in := WithNamespace(out, "d", list("pods", "6"))
	if str(in.Status.Total.Used) != "map[pods:7 requests.cpu:0]" || !Has(in, "d") {
		t.Fatalf("with %+v", in.Status)
	}
}

// TestChargeAllIsChainedCharges: charging many namespaces at once (new ones, and one twice)
// leaves what a chain of Charge calls leaves, and its input as it was.
func TestChargeAllIsChainedCharges(t *testing.T) {
	crq := &ClusterResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: list("pods", "100", "requests.cpu", "20")}}}
	crq.Status = Status(crq.Spec, []Usage{{Namespace: "b", Used: list("pods", "2", "requests.cpu", "500m")}, {Namespace: "d", Used: list("pods", "1")}})
	before := crq.DeepCopy()
	steps := []struct {
		ns   string
		used corev1.ResourceList
	}{
		{"b", list("pods", "4", "requests.cpu", "700m")},
		{"a", list("pods", "5", "requests.cpu", "1200m")},
		{"d", list("pods", "4", "requests.cpu", "1")},
		{"b", list("pods", "6", "requests.cpu", "1100m")},
		{"e", list("pods", "7", "requests.cpu", "1100m", "secrets", "3")},
	}
	chained := crq
	var charges []NamespaceCharge
	for _, s := range steps {
		charges = append(charges, NamespaceCharge{Namespace: s.ns, Before: chained.Status.Total.Used, After: s.used})
		chained = Charge(chained, s.ns, s.used)
	}
	all := ChargeAll(crq, charges)
	if str(all.Status.Total.Used) != str(chained.Status.Total.Used) || len(all.Status.Namespaces) != len(chained.Status.Namespaces) {
		t.Fatalf("ChargeAll total %s over %d entries, chained %s over %d", str(all.Status.Total.Used), len(all.Status.Namespaces), str(chained.Status.Total.Used), len(chained.Status.Namespaces))
	}
	for i, e := range all.Status.Namespaces {
		c := chained.Status.Namespaces[i]
		if e.Namespace != c.Namespace || str(e.Status.Used) != str(c.Status.Used) || str(e.Status.Hard) != str(c.Status.Hard) {
			t.Errorf("entry %d: ChargeAll %s %s, chained %s %s", i, e.Namespace, str(e.Status.Used), c.Namespace, str(c.Status.Used))
		}
	}
	if got := str(all.Status.Namespaces[1].Status.Used); all.Status.Namespaces[1].Namespace != "b" || got != "map[pods:5 requests.cpu:800m]" {
		t.Errorf("b charged twice: %s", got)
	}
	if !reflect.DeepEqual(crq, before) {
		t.Errorf("ChargeAll modified its input:\n%+v\nwas\n%+v", crq.Status, before.Status)
	}
	if same := ChargeAll(crq, nil); same == crq || !reflect.DeepEqual(same, crq) {
		t.Errorf("no charges: want an equal copy")
	}
}

func TestValidate(t *testing.T) {
	ok := ClusterResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: ClusterResourceQuotaSpec{
		Selector: ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"a": "b"}},
		Quota:    corev1.ResourceQuotaSpec{Hard: list("pods", "1")}}}
	for _, tt := range []struct {
		name string
		mod  func(c *ClusterResourceQuota)
		want string
	}{
		{"valid", func(c *ClusterResourceQuota) {}, "<nil>"},
		{"no selector", func(c *ClusterResourceQuota) { c.Spec.Selector = ClusterResourceQuotaSelector{} },
			"spec.selector: Required value: must restrict the selected projects"},
		{"empty label selector", func(c *ClusterResourceQuota) {
			c.Spec.Selector = ClusterResourceQuotaSelector{LabelSelector: &metav1.LabelSelector{}}
		}, "[spec.selector: Required value: must restrict the selected projects, spec.selector.labels: Invalid value: {}: must restrict the selected projects]"},
		{"bad hard", func(c *ClusterResourceQuota) { c.Spec.Quota.Hard = list("pods", "-1") },
			"spec.quota.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0"},
	} {
		c := ok.DeepCopy()
		tt.mod(c)
		if got := fmt.Sprint(Validate(c).ToAggregate()); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
