package clusterquota

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/quantity"
)

// Selects reports whether a cluster quota's selector selects a namespace with these labels
// and annotations: the label selector (when set) must match and every annotation of the
// annotation selector must be present with that value, as OpenShift's matcher. An invalid
// label selector selects nothing (validation refuses it).
func Selects(sel ClusterResourceQuotaSelector, nsLabels, nsAnnotations map[string]string) bool {
	if sel.LabelSelector == nil && len(sel.AnnotationSelector) == 0 {
		return false
	}
	if sel.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil || !s.Matches(labels.Set(nsLabels)) {
			return false
		}
	}
	for k, v := range sel.AnnotationSelector {
		if got, ok := nsAnnotations[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// viewUIDPrefix marks the ResourceQuota views of cluster quotas, so that they are never
// taken for a namespace's own ResourceQuota of the same name, and so that quota's findings
// name the cluster quota.
const viewUIDPrefix = quota.ClusterQuotaViewUIDPrefix

// View returns the cluster quota as the ResourceQuota that admission checks a request in
// namespace ns against: its spec.quota, and status.total as its status (the refusal then
// names the cluster quota), and its annotations (its enforcement mode and thresholds). The
// view shares maps with crq; it must not be modified.
func View(crq *ClusterResourceQuota, ns string) corev1.ResourceQuota {
	return corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: crq.Name, Namespace: ns, UID: types.UID(viewUIDPrefix + string(crq.UID)), Annotations: crq.Annotations},
		Spec:       crq.Spec.Quota,
		Status:     corev1.ResourceQuotaStatus{Hard: crq.Status.Total.Hard, Used: crq.Status.Total.Used},
	}
}

// IsView reports whether a ResourceQuota is a cluster quota's view.
func IsView(rq *corev1.ResourceQuota) bool {
	return len(rq.UID) >= len(viewUIDPrefix) && string(rq.UID[:len(viewUIDPrefix)]) == viewUIDPrefix
}

// Charge returns a copy of crq whose status.total.used is used (the view's status.used after
// a request was admitted) and whose entry for ns moved by the same amounts.
//
// The copy shares everything but status.total.used, the namespaces slice and ns's entry
// with crq: neither may be modified afterwards (a batch charges a chain of such copies).
func Charge(crq *ClusterResourceQuota, ns string, used corev1.ResourceList) *ClusterResourceQuota {
	return ChargeAll(crq, []NamespaceCharge{{Namespace: ns, Before: crq.Status.Total.Used, After: used}})
}

// NamespaceCharge is one namespace's charge of a cluster quota: its view's status.used
// before and after the namespace's requests were admitted.
type NamespaceCharge struct {
	Namespace     string
	Before, After corev1.ResourceList
}

// ChargeAll returns a copy of crq charged in order with each of charges, as a chain of
// Charge calls would leave it (each charge's Before is the total the one before leaves),
// copying the namespaces slice once: the batches of many namespaces joined in one
// transaction (the registry's commit engine) charge it once each. status.total.used is the
// last charge's After.
//
// The copy shares everything but status.total.used, the namespaces slice and the charged
// namespaces' entries with crq: neither may be modified afterwards.
func ChargeAll(crq *ClusterResourceQuota, charges []NamespaceCharge) *ClusterResourceQuota {
	out := *crq
	if len(charges) == 0 {
		return &out
	}
	out.Status.Namespaces = slices.Clone(crq.Status.Namespaces)
	for _, c := range charges {
		entry := out.entry(c.Namespace)
		entry.Status.Used = entry.Status.Used.DeepCopy()
		if entry.Status.Used == nil {
			entry.Status.Used = corev1.ResourceList{}
		}
		for name, v := range c.After {
			delta := v
			if o, ok := c.Before[name]; ok {
				delta = quantity.Sub(v, o)
			}
			cur, ok := entry.Status.Used[name]
			if !ok {
				cur = zero()
			}
			entry.Status.Used[name] = canonical(quantity.Add(cur, delta))
		}
	}
	used := charges[len(charges)-1].After
	out.Status.Total.Used = nil
	if used != nil {
		out.Status.Total.Used = make(corev1.ResourceList, len(used))
		for name, v := range used {
			out.Status.Total.Used[name] = canonical(v.DeepCopy())
		}
	}
	return &out
}

// canonical returns q remembering its canonical text: a cluster quota's status is encoded
// whole by every transaction that charges it, most of its entries unchanged, and a quantity
// computed by arithmetic would otherwise be formatted again each time.
func canonical(q resource.Quantity) resource.Quantity {
	_ = q.String()
	return q
}

// CacheCanonical prepares a cluster quota's spec.quota.hard and status for a slot that
// charges it many times (quota.KeepCanonical: canonical texts remembered, the hards in int64
// form). crq must not be shared yet: its lists are modified in place.
func CacheCanonical(crq *ClusterResourceQuota) {
	quota.KeepCanonical(crq.Spec.Quota.Hard, true)
	quota.KeepCanonical(crq.Status.Total.Hard, true)
	quota.KeepCanonical(crq.Status.Total.Used, false)
	for _, e := range crq.Status.Namespaces {
		quota.KeepCanonical(e.Status.Hard, false)
		quota.KeepCanonical(e.Status.Used, false)
	}
}

func zero() resource.Quantity { return resource.Quantity{Format: resource.DecimalSI} }

// entry returns ns's entry, adding an empty one (in order) when missing.
func (in *ClusterResourceQuota) entry(ns string) *ResourceQuotaStatusByNamespace {
	i := sort.Search(len(in.Status.Namespaces), func(i int) bool { return in.Status.Namespaces[i].Namespace >= ns })
	if i < len(in.Status.Namespaces) && in.Status.Namespaces[i].Namespace == ns {
		return &in.Status.Namespaces[i]
	}
	in.Status.Namespaces = append(in.Status.Namespaces, ResourceQuotaStatusByNamespace{})
	copy(in.Status.Namespaces[i+1:], in.Status.Namespaces[i:])
	in.Status.Namespaces[i] = ResourceQuotaStatusByNamespace{Namespace: ns, Status: corev1.ResourceQuotaStatus{Hard: in.Spec.Quota.Hard.DeepCopy(), Used: corev1.ResourceList{}}}
	return &in.Status.Namespaces[i]
}

// FillEntryHard gives every entry of status.namespaces stored without hard (the stored
// form leaves it out when it equals spec.quota.hard, as every entry quotad computes does)
// spec.quota.hard as its hard. crq is modified in place.
func FillEntryHard(crq *ClusterResourceQuota) {
	if len(crq.Spec.Quota.Hard) == 0 {
		return
	}
	for i := range crq.Status.Namespaces {
		if e := &crq.Status.Namespaces[i]; e.Status.Hard == nil {
			e.Status.Hard = crq.Spec.Quota.Hard.DeepCopy()
		}
	}
}

// Usage is one namespace's usage under a cluster quota.
type Usage struct {
	Namespace string
	Used      corev1.ResourceList
}

// Status returns the complete status of a cluster quota from the usage of every namespace
// it selects (each masked to spec.quota.hard): hard is spec.quota.hard everywhere, total
// the sum.
func Status(spec ClusterResourceQuotaSpec, usage []Usage) ClusterResourceQuotaStatus {
	st := ClusterResourceQuotaStatus{Total: corev1.ResourceQuotaStatus{Hard: spec.Quota.Hard.DeepCopy(), Used: corev1.ResourceList{}}}
	for name := range spec.Quota.Hard {
		st.Total.Used[name] = zero()
	}
	sorted := append([]Usage(nil), usage...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Namespace < sorted[j].Namespace })
	for _, u := range sorted {
		used := corev1.ResourceList{}
		for name := range spec.Quota.Hard {
			v, ok := u.Used[name]
			if !ok {
				v = zero()
			}
			used[name] = v.DeepCopy()
			st.Total.Used[name] = quantity.Add(st.Total.Used[name], v)
		}
		st.Namespaces = append(st.Namespaces, ResourceQuotaStatusByNamespace{Namespace: u.Namespace, Status: corev1.ResourceQuotaStatus{Hard: spec.Quota.Hard.DeepCopy(), Used: used}})
	}
	return st
}

// WithNamespace returns a copy of crq with ns's entry set to used (masked to hard) and the
// total moved by the difference: a namespace that starts being selected.
func WithNamespace(crq *ClusterResourceQuota, ns string, used corev1.ResourceList) *ClusterResourceQuota {
	out := Without(crq, ns)
	e := out.entry(ns)
	for name := range out.Spec.Quota.Hard {
		v, ok := used[name]
		if !ok {
			v = zero()
		}
		e.Status.Used[name] = v.DeepCopy()
		if out.Status.Total.Used == nil {
			out.Status.Total.Used = corev1.ResourceList{}
		}
		t, ok := out.Status.Total.Used[name]
		if !ok {
			t = zero()
		}
		out.Status.Total.Used[name] = quantity.Add(t, v)
	}
	return out
}

// Without returns a copy of crq without ns's entry, its usage taken out of the total: a
// namespace that stops being selected (or is deleted).
func Without(crq *ClusterResourceQuota, ns string) *ClusterResourceQuota {
	out := crq.DeepCopy()
	for i, e := range out.Status.Namespaces {
		if e.Namespace != ns {
			continue
		}
		for name, v := range e.Status.Used {
			if t, ok := out.Status.Total.Used[name]; ok {
				out.Status.Total.Used[name] = quantity.Sub(t, v)
			}
		}
		out.Status.Namespaces = append(out.Status.Namespaces[:i], out.Status.Namespaces[i+1:]...)
		break
	}
	return out
}

// Has reports whether crq's status has an entry for ns.
func Has(crq *ClusterResourceQuota, ns string) bool {
	for _, e := range crq.Status.Namespaces {
		if e.Namespace == ns {
			return true
		}
	}
	return false
}

// Applied returns the namespaced view of crq that a tenant of ns reads.
func Applied(crq *ClusterResourceQuota, ns string) *AppliedClusterResourceQuota {
	c := crq.DeepCopy()
	out := &AppliedClusterResourceQuota{ObjectMeta: c.ObjectMeta, Spec: c.Spec, Status: c.Status}
	out.TypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "AppliedClusterResourceQuota"}
	out.Namespace = ns
	return out
}
