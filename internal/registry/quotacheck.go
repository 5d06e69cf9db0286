package registry

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/storage"
)

// QuotaCheck compares one quota's stored status with the status recomputed from storage at
// the same revision.
type QuotaCheck struct {
	Namespace, Name string
	// Revision is the storage revision both were read at; ModRevision the quota's own.
	Revision, ModRevision int64
	Stored, Computed      corev1.ResourceQuotaStatus
}

// Drifted reports whether stored and computed status differ.
func (c *QuotaCheck) Drifted() bool {
	return !quota.Equals(c.Stored.Hard, c.Computed.Hard) || !quota.Equals(c.Stored.Used, c.Computed.Used)
}

// String describes the drift for logs and test failures.
func (c *QuotaCheck) String() string {
	return fmt.Sprintf("resourcequota %s/%s at revision %d: stored hard=%v used=%v, computed hard=%v used=%v",
		c.Namespace, c.Name, c.Revision, commit.ListString(c.Stored.Hard), commit.ListString(c.Stored.Used), commit.ListString(c.Computed.Hard), commit.ListString(c.Computed.Used))
}

// CheckQuotas recomputes every quota (of ns, or all namespaces when ns is "") from storage at
// one revision and returns the comparisons. This is both the verifier's core and the tests'
// invariant checker (design.md §2, I1 and I3).
func (s *Store) CheckQuotas(ctx context.Context, ns string) ([]QuotaCheck, error) {
	qres := s.cfg.Catalogue.Get(quotaGVR)
	lr, err := s.cfg.Storage.List(ctx, qres.KeyPrefix(ns), storage.ListOptions{})
	if err != nil {
		return nil, internalError(err)
	}
	out := make([]QuotaCheck, 0, len(lr.KVs))
	for _, kv := range lr.KVs {
		obj, err := decodeKV(qres, kv)
		if err != nil {
			return nil, internalError(err)
		}
		rq := obj.(*corev1.ResourceQuota)
		c := QuotaCheck{Namespace: rq.Namespace, Name: rq.Name, Revision: lr.Revision, ModRevision: kv.ModRevision, Stored: *rq.Status.DeepCopy()}
		work := rq.DeepCopy()
		if err := s.computeQuotaStatus(ctx, work, lr.Revision); err != nil {
			return nil, err
		}
		c.Computed = work.Status
		out = append(out, c)
	}
	return out, nil
}

// RepairQuota writes a check's computed status, guarded so that it commits only if neither
// the quota nor anything in its namespace changed since the check's revision. It returns
// storage.ErrConflict (wrapped) when something did: the caller checks again.
func (s *Store) RepairQuota(ctx context.Context, c QuotaCheck) error {
	qres := s.cfg.Catalogue.Get(quotaGVR)
	key := qres.Key(c.Namespace, c.Name)
	kv, err := s.cfg.Storage.Get(ctx, key)
	if err != nil {
		return err
	}
	obj, err := decodeKV(qres, kv)
	if err != nil {
		return err
	}
	rq := obj.(*corev1.ResourceQuota)
	if semantic.DeepEqual(rq.Status, c.Computed) {
		return nil
	}
	rq.Status = *c.Computed.DeepCopy()
	b, err := codec.EncodeForStorage(rq, qres.GVK())
	if err != nil {
		return err
	}
	_, err = s.cfg.Storage.Txn(ctx, storage.Txn{
		Compares: []storage.Compare{
			{Target: storage.ModRevisionEquals, Key: key, Revision: c.ModRevision},
			{Target: storage.RangeNotModifiedAfter, Key: commit.EpochKey(c.Namespace), Revision: c.Revision},
			{Target: storage.RangeNotModifiedAfter, Key: qres.KeyPrefix(c.Namespace), Revision: c.Revision},
		},
		// The quota set's key too, as every quota object write puts it: batches planned on
		// the quota as it was (pipelined, or guarding only the quotas they charge) fail and
		// are planned again on the repaired status.
		Ops: []storage.Op{{Type: storage.OpPut, Key: key, Value: b}, {Type: storage.OpPut, Key: commit.QuotaSetKey(c.Namespace)}},
	})
	if errors.Is(err, storage.ErrConflict) {
		return fmt.Errorf("quota %s/%s changed while repairing: %w", c.Namespace, c.Name, err)
	}
	return err
}
