package registry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/selector"
)

// watchApplied watches the AppliedClusterResourceQuotas of namespace ns: the cluster quotas'
// watch, each event turned into the namespace's view of the cluster quota. A cluster quota
// that stops selecting the namespace (its selector edited) is DELETED from the view. Which
// cluster quotas select the namespace is decided on the namespace's labels and annotations
// as the watch starts; a watch ends within the server's watch timeout, and the client's
// next list and watch see a relabelled namespace.
func (s *Store) watchApplied(ctx context.Context, res *Resource, ns string, opts WatchOptions) (<-chan Event, error) {
	var n *corev1.Namespace
	if ns != "" {
		var err error
		if n, err = s.commits.NamespaceAt(ctx, ns, 0); err != nil {
			return nil, internalError(err)
		}
	}
	sel := opts.Selector
	opts.Selector = selector.Selector{}
	opts.Shared = true
	src, err := s.Watch(ctx, s.cfg.Catalogue.Get(crqGVR), "", opts)
	if err != nil {
		return nil, err
	}
	out := make(chan Event, 64)
	go func() {
		defer close(out)
		shown := map[string]bool{}
		for ev := range src {
			crq, ok := ev.Object.(*clusterquota.ClusterResourceQuota)
			if !ok || ev.Type == watch.Error || ev.Type == watch.Bookmark {
				if !send(ctx, out, ev) {
					return
				}
				continue
			}
			selects := n != nil && ev.Type != watch.Deleted && clusterquota.Selects(crq.Spec.Selector, n.Labels, n.Annotations)
			if !selects && !shown[crq.Name] {
				continue
			}
			a := clusterquota.Applied(crq, ns)
			typ := watch.EventType("")
			switch {
			case selects && sel.Matches(res, a):
				typ = watch.Modified
				if !shown[crq.Name] {
					typ = watch.Added
				}
				shown[crq.Name] = true
			case shown[crq.Name]:
				typ = watch.Deleted
				delete(shown, crq.Name)
			}
			if typ == "" {
				continue
			}
			if !send(ctx, out, Event{Type: typ, Object: a, Initial: ev.Initial}) {
				return
			}
		}
	}()
	return out, nil
}

func send(ctx context.Context, out chan<- Event, ev Event) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
