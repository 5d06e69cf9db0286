package registry

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/storage"
)

// AppliedClusterQuotas returns the cluster quotas that select namespace ns, as its
// AppliedClusterResourceQuotas, read at one revision.
func (s *Store) AppliedClusterQuotas(ctx context.Context, ns string) (*ListResult, error) {
	rev, err := s.cfg.Storage.Revision(ctx)
	if err != nil {
		return nil, internalError(err)
	}
	out := &ListResult{ResourceVersion: fmt.Sprint(rev), Items: []runtime.Object{}}
	n, err := s.commits.NamespaceAt(ctx, ns, rev)
	if err != nil {
		return nil, internalError(err)
	}
	if n == nil {
		return out, nil
	}
	res := s.cfg.Catalogue.Get(crqGVR)
	lr, err := s.cfg.Storage.List(ctx, res.KeyPrefix(""), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, internalError(err)
	}
	for _, kv := range lr.KVs {
		obj, err := decodeKV(res, kv)
		if err != nil {
			return nil, internalError(err)
		}
		c := obj.(*clusterquota.ClusterResourceQuota)
		if clusterquota.Selects(c.Spec.Selector, n.Labels, n.Annotations) {
			out.Items = append(out.Items, clusterquota.Applied(c, ns))
		}
	}
	return out, nil
}

// Named returns the item of an applied list named name, or upstream's 404.
func (l *ListResult) Named(res *Resource, name string) (runtime.Object, error) {
	for _, o := range l.Items {
		if a, ok := o.(*clusterquota.AppliedClusterResourceQuota); ok && a.Name == name {
			return a, nil
		}
	}
	return nil, apierrors.NewNotFound(res.GroupResource(), name)
}
