package quota_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/quota/quotatest"
)

// fuzzQuantity turns a fuzzed text into a quantity as it can reach quota: a text a decoder
// accepts (quantity.CheckText) parsed, or a text of the form <mantissa>e<exponent> that
// decoders now refuse, built as ParseQuantity builds it, without parsing: a value stored
// before the bound existed (hard: 1e1000000000 written straight to etcd).
func fuzzQuantity(s string) (resource.Quantity, bool) {
	if quantity.CheckText(s, field.NewPath("q")) == nil {
		q, err := resource.ParseQuantity(s)
		return q, err == nil
	}
	m, e, ok := strings.Cut(s, "e")
	if !ok {
		return resource.Quantity{}, false
	}
	mantissa, err1 := strconv.ParseInt(m, 10, 64)
	exp, err2 := strconv.ParseInt(e, 10, 32)
	if err1 != nil || err2 != nil {
		return resource.Quantity{}, false
	}
	return *resource.NewScaledQuantity(mantissa, resource.Scale(exp)), true
}

// parseAll turns fuzzed texts into quantities (fuzzQuantity), skipping the input unless
// all are quantities; bounded reports whether all are within quantity.Bound.
func parseAll(t *testing.T, values ...string) (qs []resource.Quantity, bounded bool) {
	bounded = true
	for _, v := range values {
		q, ok := fuzzQuantity(v)
		if !ok {
			t.Skip("not a quantity")
		}
		qs = append(qs, q)
		bounded = bounded && quantity.InBound(q)
	}
	return qs, bounded
}

func FuzzResourceAlgebra(f *testing.F) {
	f.Add("1", "512Mi", "250m", "3")
	f.Add("0", "0", "0", "0")
	f.Add("-1", "1Gi", "1e3", "1.5")
	f.Add("100n", "1Ki", "-2", "7E")
	// Stored before the bound: Quantity's own Cmp and Add take minutes on these.
	f.Add("1e1000000000", "1", "1e10000000", "-1e2000000000")
	f.Add("1", "0e2000000000", "5e-2000000000", "3")
	f.Fuzz(func(t *testing.T, a1, a2, b1, b2 string) {
		q, bounded := parseAll(t, a1, a2, b1, b2)
		a := corev1.ResourceList{"cpu": q[0], "memory": q[1]}
		b := corev1.ResourceList{"cpu": q[2], "pods": q[3]}
		quotatest.Within(t, quotatest.StallBound, fmt.Sprintf("%q %q %q %q", a1, a2, b1, b2), func() error {
			return checkResourceAlgebra(a, b, bounded)
		})
	})
}

// checkResourceAlgebra runs every list operation on a and b; the algebraic laws hold
// exactly when every value is within the bound (beyond it a huge value absorbs a small one).
func checkResourceAlgebra(a, b corev1.ResourceList, bounded bool) error {
	// Add then Subtract gives a back (names only in b become zero).
	back := quota.Subtract(quota.Add(a, b), b)
	for name, v := range a {
		if got := back[name]; bounded && quantity.Cmp(got, v) != 0 {
			return fmt.Errorf("(a+b)-b [%s] = %s, want %s", name, got.String(), v.String())
		}
	}
	if got := back["pods"]; bounded && !got.IsZero() {
		return fmt.Errorf("(a+b)-b [pods] = %s, want 0", got.String())
	}
	if !quota.Equals(quota.Add(a, b), quota.Add(b, a)) {
		return errors.New("Add is not commutative")
	}
	if neg := quota.IsNegative(quota.SubtractWithNonNegativeResult(a, b)); len(neg) > 0 {
		return fmt.Errorf("SubtractWithNonNegativeResult negative for %v", neg)
	}
	m := quota.Max(a, b)
	if ok, _ := quota.LessThanOrEqual(a, m); !ok {
		return errors.New("a > max(a, b)")
	}
	if ok, _ := quota.LessThanOrEqual(b, m); !ok {
		return errors.New("b > max(a, b)")
	}
	d := quota.Subtract(a, b)
	for _, v := range quota.Positive(d) {
		if v.Sign() <= 0 {
			return errors.New("Positive kept a non-positive value")
		}
	}
	if !quota.IsZero(quota.Subtract(quota.RemoveZeros(d), quota.RemoveZeros(d))) {
		return errors.New("x - x is not zero")
	}
	for _, v := range quota.RemoveZeros(d) {
		if v.IsZero() {
			return errors.New("RemoveZeros kept a zero")
		}
	}
	if got := quota.Mask(a, []corev1.ResourceName{"cpu", "pods"}); len(got) != 1 {
		return fmt.Errorf("Mask kept %v", got)
	}
	return nil
}

func FuzzCheckRequest(f *testing.F) {
	f.Add("500m", "256Mi", "1", "2", "1Gi", "1", "1", "0", byte(0))
	f.Add("0", "0", "", "1", "1Gi", "0", "5", "5", byte(1))
	f.Add("2", "2Gi", "2", "1", "1Gi", "3", "10", "11", byte(2))
	f.Add("", "", "", "0", "0", "0", "0", "0", byte(3))
	// Stored before the bound (hard, used, or the pod): Quantity.Cmp took minutes.
	f.Add("1", "1Gi", "", "1e1000000000", "1Gi", "1", "1e10000000", "1e10000000", byte(0))
	f.Add("1e1000000000", "1Gi", "", "1e10000000", "1Gi", "0", "3", "1", byte(1))
	f.Add("1", "1Gi", "", "2", "1Gi", "1e2000000000", "0e2000000000", "0", byte(2))
	f.Fuzz(func(t *testing.T, reqCPU, reqMem, limCPU, hardCPU, hardMem, usedCPU, hardPods, usedPods string, variant byte) {
		bounded := true
		parse := func(s string) (resource.Quantity, bool) {
			if s == "" {
				return resource.Quantity{}, false
			}
			q, ok := fuzzQuantity(s)
			bounded = bounded && (!ok || quantity.InBound(q))
			return q, ok
		}
		// 1. A pod with whatever parses, requests defaulted from limits.
		c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
		if q, ok := parse(reqCPU); ok {
			c.Resources.Requests["cpu"] = q
		}
		if q, ok := parse(reqMem); ok {
			c.Resources.Requests["memory"] = q
		}
		if q, ok := parse(limCPU); ok {
			c.Resources.Limits["cpu"] = q
			if _, set := c.Resources.Requests["cpu"]; !set {
				c.Resources.Requests["cpu"] = q
			}
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}

		// 2. Quotas from the fuzzed limits and usage.
		hard, used := corev1.ResourceList{}, corev1.ResourceList{}
		set := func(name corev1.ResourceName, h, u string) {
			hq, ok := parse(h)
			if !ok {
				return
			}
			hard[name] = hq
			uq, ok := parse(u)
			if !ok {
				uq = resource.Quantity{}
			}
			used[name] = uq
		}
		set("requests.cpu", hardCPU, usedCPU)
		set("requests.memory", hardMem, "0")
		set("pods", hardPods, usedPods)
		set("count/pods", hardPods, usedPods)
		compute := corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute"},
			Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
		quotas := []corev1.ResourceQuota{compute}
		switch variant % 4 {
		case 1:
			be := *compute.DeepCopy()
			be.Name = "best-effort"
			be.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
			be.Status.Hard = corev1.ResourceList{"pods": hard["pods"]}
			be.Status.Used = corev1.ResourceList{"pods": used["pods"]}
			quotas = append(quotas, be)
		case 2:
			pod.Spec.ActiveDeadlineSeconds = new(int64)
			term := *compute.DeepCopy()
			term.Name = "terminating"
			term.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
			quotas = append(quotas, term)
		case 3:
			pod.Status.Phase = corev1.PodSucceeded
		}
		quotatest.Within(t, quotatest.StallBound, fmt.Sprintf("%q", []string{reqCPU, reqMem, limCPU, hardCPU, hardMem, usedCPU, hardPods, usedPods}), func() error {
			return checkCreateDelete(quotas, pod, bounded)
		})
	})
}

// checkCreateDelete creates and deletes pod against quotas: an admitted create never raises
// usage above hard, a no-op update changes nothing, and (values within the bound) the
// delete credits exactly what the create charged.
func checkCreateDelete(quotas []corev1.ResourceQuota, pod *corev1.Pod, bounded bool) error {
	reg := evaluator.NewRegistry()
	before := deepCopyQuotas(quotas)

	// 3. Create: admitted increases never exceed hard.
	changed, err := quota.CheckRequest(quotas, create(podsGR, pod), reg, nil)
	if err != nil {
		return nil
	}
	for _, q := range changed {
		var orig corev1.ResourceQuota
		for _, o := range quotas {
			if o.Name == q.Name {
				orig = o
			}
		}
		for name, nu := range q.Status.Used {
			ou := orig.Status.Used[name]
			if quantity.Cmp(nu, ou) > 0 {
				if h, ok := q.Status.Hard[name]; ok && quantity.Cmp(nu, h) > 0 {
					return fmt.Errorf("%s: %s raised to %s above hard %s", q.Name, name, nu.String(), h.String())
				}
			}
		}
	}
	after := deepCopyQuotas(quotas)
	for _, q := range changed {
		for i := range after {
			if after[i].Name == q.Name {
				after[i] = q
			}
		}
	}

	// 4. An update that changes nothing changes no quota.
	same, err := quota.CheckRequest(after, update(podsGR, "", pod, pod), reg, nil)
	if err != nil || len(same) != 0 {
		return fmt.Errorf("no-op update: %v, %d changed", err, len(same))
	}

	// 5. Delete credits exactly what create charged.
	credited, err := quota.CheckRequest(after, del(podsGR, pod), reg, nil)
	if err != nil {
		return fmt.Errorf("delete refused: %v", err)
	}
	for _, q := range credited {
		for i := range after {
			if after[i].Name == q.Name {
				after[i] = q
			}
		}
	}
	for i := range before {
		if bounded && !quota.Equals(before[i].Status.Used, after[i].Status.Used) {
			return fmt.Errorf("%s: create+delete: %s -> %s", before[i].Name, show(before[i].Status.Used), show(after[i].Status.Used))
		}
	}
	return nil
}
