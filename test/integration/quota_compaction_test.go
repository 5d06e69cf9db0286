package integration

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// compactingStore, once armed, compacts etcd at its current revision (after writing a key
// of its own, so that there is a newer revision) just before the first read of key at a
// revision: the revision a write's quota state was first read at is compacted between that
// read and the next ones at it.
type compactingStore struct {
	storage.Store
	key          string
	armed, fired atomic.Bool
}

func (c *compactingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if prefix == c.key && opts.Revision > 0 && c.armed.Load() && c.fired.CompareAndSwap(false, true) {
		res, err := c.Store.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/quotad-test/compaction", Value: []byte("x")}}})
		if err != nil {
			return storage.ListResult{}, err
		}
		if err := c.Store.(interface {
			Compact(context.Context, int64) error
		}).Compact(ctx, res.Revision); err != nil {
			return storage.ListResult{}, err
		}
	}
	return c.Store.List(ctx, prefix, opts)
}

// TestQuotaStateCompactedBetweenReads: a create whose namespace state (quotas, then the
// quota-set key at their revision) is overtaken by a compaction at the current revision is
// admitted, read again at a newer revision, instead of failing with a 500 "revision
// compacted" (seen in test/ha, which compacts at the current revision).
func TestQuotaStateCompactedBetweenReads(t *testing.T) {
	t.Parallel()
	const ns = "compacted"
	cs := &compactingStore{key: commit.QuotaSetKey(ns)}
	s := servertest.Start(t, func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store { cs.Store = st; return cs }
	})
	ctx := ctxT(t)
	mkNamespace(t, s, ns)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}}}
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs.armed.Store(true)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after a compaction overtook its quota state: %v", err)
	}
	if !cs.fired.Load() {
		t.Fatal("the compaction hook never ran: the quota-set key was not read at a revision")
	}
	got, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := got.Status.Used[corev1.ResourcePods]; used.Value() != 1 {
		t.Fatalf("used pods %s, want 1", used.String())
	}
}
