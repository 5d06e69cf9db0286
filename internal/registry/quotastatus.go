package registry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry/commit"
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

// writtenQuotaStatus sets a /status write's quota status: status.hard as written and
// status.used computed at rev for the names of both spec.hard and the written status.hard.
func (s *Store) writtenQuotaStatus(ctx context.Context, rq *corev1.ResourceQuota, rev int64) error {
	return commit.WrittenQuotaStatus(s.cfg.Quota, rq, s.objectsAt(ctx, rq.Namespace, rev))
}

// restoreQuotaStatus writes a quota whose status.hard a /status write set apart from
// spec.hard back to its exact status. The update changes nothing but the status, which
// its transaction recomputes; a failure is logged and left to the verifier.
func (s *Store) restoreQuotaStatus(ctx context.Context, res *Resource, rq *corev1.ResourceQuota) {
	if commit.Settled(rq) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_, err := s.Update(ctx, res, rq.Namespace, rq.Name, "", func(cur runtime.Object) (runtime.Object, error) { return cur, nil }, WriteOptions{})
	if err != nil {
		s.cfg.Logger.Warn("restoring resource quota status after a status write failed", "namespace", rq.Namespace, "name", rq.Name, "err", err)
	}
}
