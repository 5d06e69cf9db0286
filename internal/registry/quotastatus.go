package registry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
)

// A write to a ResourceQuota's /status is accepted as upstream accepts it: the stored
// status.hard is the one written (a conformance spec writes it and reads it back, from the
// answer and from a watch). quotad then restores the exact status at once, in its own next
// write, and admission never decides on a written status.hard:
//
//   - the status write's transaction stores status.used computed from storage for every name
//     of spec.hard and of the written status.hard, so I1 holds at its revision too;
//   - charges judge each quota on spec.hard (decisionQuotas), so I2 holds whatever was
//     written, and a charge that touches the quota writes it restored;
//   - right after the status write commits, restoreQuotaStatus writes the quota with
//     status.hard = spec.hard and status.used recomputed (the verifier repairs it later if
//     that write fails).

// statusKeepsMeta reports whether a /status write applies the object's metadata (labels,
// annotations, finalizers, owners) as upstream's status strategy of the kind does: a
// Namespace's status strategy keeps only the spec, a Pod's the spec and the owner
// references (its strategy's PrepareForUpdate restores those).
func statusKeepsMeta(obj runtime.Object) bool {
	switch obj.(type) {
	case *corev1.Namespace, *corev1.Pod:
		return true
	}
	return false
}

// writtenQuotaStatus sets a /status write's quota status: status.hard as written and
// status.used computed at rev for the names of both spec.hard and the written status.hard.
func (s *Store) writtenQuotaStatus(ctx context.Context, rq *corev1.ResourceQuota, rev int64) error {
	return writtenQuotaStatusOf(s.cfg.Quota, rq, s.objectsAt(ctx, rq.Namespace, rev))
}

// quotaStatus sets status.hard = spec.hard and status.used computed by acct (nil: quota
// accounting is off, used is left as is) from objects, the namespace's objects as stored
// at one revision; the quota counts itself, as written, in place of its stored version.
// It does no IO of its own.
func quotaStatus(acct Quota, rq *corev1.ResourceQuota, objects func(schema.GroupResource) ([]runtime.Object, error)) error {
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
		if gr == quotaGVR.GroupResource() {
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
		return internalError(err)
	}
	if used == nil {
		used = corev1.ResourceList{}
	}
	rq.Status.Used = used
	return nil
}

// writtenQuotaStatusOf is quotaStatus for a /status write: status.hard as written and
// status.used computed for the names of both spec.hard and the written status.hard.
func writtenQuotaStatusOf(acct Quota, rq *corev1.ResourceQuota, objects func(schema.GroupResource) ([]runtime.Object, error)) error {
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
	err := quotaStatus(acct, rq, objects)
	rq.Spec.Hard = spec
	rq.Status.Hard = written
	return err
}

// quotaSettled reports whether a quota's status.hard is its spec.hard.
func quotaSettled(q *corev1.ResourceQuota) bool { return quota.Equals(q.Status.Hard, q.Spec.Hard) }

// decisionQuotas returns the quotas as admission judges them: a quota whose status.hard
// was written through /status is judged on spec.hard, with the used of its names (which
// the status write computed). It copies only the quotas it changes.
func decisionQuotas(quotas []corev1.ResourceQuota) []corev1.ResourceQuota {
	out := append([]corev1.ResourceQuota(nil), quotas...)
	for j := range out {
		q := &out[j]
		if quotaSettled(q) {
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

// restoreQuotaStatus writes a quota whose status.hard a /status write set apart from
// spec.hard back to its exact status. The update changes nothing but the status, which
// its transaction recomputes; a failure is logged and left to the verifier.
func (s *Store) restoreQuotaStatus(ctx context.Context, res *Resource, rq *corev1.ResourceQuota) {
	if quotaSettled(rq) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_, err := s.Update(ctx, res, rq.Namespace, rq.Name, "", func(cur runtime.Object) (runtime.Object, error) { return cur, nil }, WriteOptions{})
	if err != nil {
		s.cfg.Logger.Warn("restoring resource quota status after a status write failed", "namespace", rq.Namespace, "name", rq.Name, "err", err)
	}
}
