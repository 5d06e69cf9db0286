package commit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/storage"
)

// ClusterQuotaCheck compares one cluster quota's stored status with the status recomputed
// from storage at the same revision.
type ClusterQuotaCheck struct {
	Name string
	// Revision is the storage revision both were read at; ModRevision the quota's own.
	Revision, ModRevision int64
	Stored, Computed      clusterquota.ClusterResourceQuotaStatus
	// read is what the recomputation counted at Revision.
	read []counted
}

// Drifted reports whether stored and computed status differ: the total, or any
// namespace's entry (a missing or extra entry too).
func (c *ClusterQuotaCheck) Drifted() bool {
	a, b := c.Stored, c.Computed
	if !quota.Equals(a.Total.Hard, b.Total.Hard) || !quota.Equals(a.Total.Used, b.Total.Used) || len(a.Namespaces) != len(b.Namespaces) {
		return true
	}
	for i := range a.Namespaces {
		x, y := a.Namespaces[i], b.Namespaces[i]
		if x.Namespace != y.Namespace || !quota.Equals(x.Status.Hard, y.Status.Hard) || !quota.Equals(x.Status.Used, y.Status.Used) {
			return true
		}
	}
	return false
}

// String describes the drift for logs and test failures.
func (c *ClusterQuotaCheck) String() string {
	return fmt.Sprintf("clusterresourcequota %s at revision %d: stored %s, computed %s", c.Name, c.Revision, statusString(c.Stored), statusString(c.Computed))
}

func statusString(s clusterquota.ClusterResourceQuotaStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total hard=%v used=%v", ListString(s.Total.Hard), ListString(s.Total.Used))
	for _, e := range s.Namespaces {
		fmt.Fprintf(&b, " %s: used=%v", e.Namespace, ListString(e.Status.Used))
	}
	return b.String()
}

// CheckClusterQuotas recomputes every cluster quota from storage at one revision (the
// verifier's core and the tests' invariant checker, for cluster quotas).
func (e *Engine) CheckClusterQuotas(ctx context.Context) ([]ClusterQuotaCheck, error) {
	lr, err := e.cfg.Storage.List(ctx, e.env.KeyPrefix(crqGR, ""), storage.ListOptions{})
	if err != nil {
		return nil, InternalError(err)
	}
	out := make([]ClusterQuotaCheck, 0, len(lr.KVs))
	for _, kv := range lr.KVs {
		obj, err := e.env.Decode(crqGR, kv)
		if err != nil {
			return nil, InternalError(err)
		}
		crq := obj.(*clusterquota.ClusterResourceQuota)
		c := ClusterQuotaCheck{Name: crq.Name, Revision: lr.Revision, ModRevision: kv.ModRevision, Stored: *crq.Status.DeepCopy()}
		work := crq.DeepCopy()
		if c.read, err = e.computeClusterQuotaStatus(ctx, work, lr.Revision); err != nil {
			return nil, err
		}
		c.Computed = work.Status
		out = append(out, c)
	}
	return out, nil
}

// RepairClusterQuota writes a check's computed status, guarded so that it commits only if
// neither the cluster quota nor any namespace it selects changed since the check's
// revision (storage.ErrConflict, wrapped, otherwise: the caller checks again).
func (e *Engine) RepairClusterQuota(ctx context.Context, c ClusterQuotaCheck) error {
	key := e.env.KeyPrefix(crqGR, "") + c.Name
	sl := e.crq.slot(c.Name)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.rev = 0
	kv, err := e.cfg.Storage.Get(ctx, key)
	if err != nil {
		return err
	}
	obj, err := e.env.Decode(crqGR, kv)
	if err != nil {
		return err
	}
	crq := obj.(*clusterquota.ClusterResourceQuota)
	crq.Status = *c.Computed.DeepCopy()
	b, err := e.env.Encode(crqGR, crq)
	if err != nil {
		return err
	}
	cmps := append([]storage.Compare{{Target: storage.ModRevisionEquals, Key: key, Revision: c.ModRevision}}, e.usageGuards(c.read, c.Revision)...)
	_, err = e.cfg.Storage.Txn(ctx, storage.Txn{Compares: cmps, Ops: []storage.Op{{Type: storage.OpPut, Key: key, Value: b}}})
	if errors.Is(err, storage.ErrConflict) {
		return fmt.Errorf("cluster quota %s changed while repairing: %w", c.Name, err)
	}
	return err
}

// ListString formats a resource list with its names sorted, for logs and test failures.
func ListString(l corev1.ResourceList) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	out := "{"
	for i, k := range keys {
		if i > 0 {
			out += ","
		}
		q := l[corev1.ResourceName(k)]
		out += k + "=" + q.String()
	}
	return out + "}"
}
