package commit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
)

// QuotaStatus sets status.hard = spec.hard and status.used computed by acct (nil: quota
// accounting is off, used is left as is) from objects, the namespace's objects as stored
// at one revision; the quota counts itself, as written, in place of its stored version.
// It does no IO of its own.
func QuotaStatus(acct Quota, rq *corev1.ResourceQuota, objects func(schema.GroupResource) ([]runtime.Object, error)) error {
	rq.Status.Hard = rq.Spec.Hard.DeepCopy()
	if acct == nil {
		if rq.Status.Used == nil {
			rq.Status.Used = corev1.ResourceList{}
		}
		return nil
	}
	used, err := acct.Usage(rq, func(gr schema.GroupResource) ([]runtime.Object, error) {
		objs, err := objects(gr)
		if err != nil {
			return nil, err
		}
		if gr == quotaGR {
			out := objs[:0]
			for _, o := range objs {
				if o.(*corev1.ResourceQuota).Name != rq.Name {
					out = append(out, o)
				}
			}
			objs = append(out, rq)
		}
		return objs, nil
	})
	if err != nil {
		return InternalError(err)
	}
	if used == nil {
		used = corev1.ResourceList{}
	}
	rq.Status.Used = used
	return nil
}

// WrittenQuotaStatus is QuotaStatus for a /status write: status.hard as written and
// status.used computed for the names of both spec.hard and the written status.hard.
func WrittenQuotaStatus(acct Quota, rq *corev1.ResourceQuota, objects func(schema.GroupResource) ([]runtime.Object, error)) error {
	written := rq.Status.Hard.DeepCopy()
	spec := rq.Spec.Hard
	union := spec.DeepCopy()
	if union == nil {
		union = corev1.ResourceList{}
	}
	for name, v := range written {
		if _, ok := union[name]; !ok {
			union[name] = v
		}
	}
	rq.Spec.Hard = union
	err := QuotaStatus(acct, rq, objects)
	rq.Spec.Hard = spec
	rq.Status.Hard = written
	return err
}

// Settled reports whether a quota's status.hard is its spec.hard.
func Settled(q *corev1.ResourceQuota) bool { return quota.Equals(q.Status.Hard, q.Spec.Hard) }

// DecisionQuotas returns the quotas as admission judges them: a quota whose status.hard
// was written through /status is judged on spec.hard, with the used of its names (which
// the status write computed). It copies only the quotas it changes.
func DecisionQuotas(quotas []corev1.ResourceQuota) []corev1.ResourceQuota {
	return decisionQuotas(quotas, settledOf(quotas))
}

// settledOf reports for each quota whether it is Settled.
func settledOf(quotas []corev1.ResourceQuota) []bool {
	settled := make([]bool, len(quotas))
	for j := range quotas {
		settled[j] = Settled(&quotas[j])
	}
	return settled
}

// decisionQuotas is DecisionQuotas with each quota's Settled known (settled[j]).
func decisionQuotas(quotas []corev1.ResourceQuota, settled []bool) []corev1.ResourceQuota {
	out := append([]corev1.ResourceQuota(nil), quotas...)
	for j := range out {
		q := &out[j]
		if settled[j] {
			continue
		}
		used := corev1.ResourceList{}
		for name := range q.Spec.Hard {
			if v, ok := q.Status.Used[name]; ok {
				used[name] = v
			}
		}
		q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard.DeepCopy(), Used: used}
	}
	return out
}
