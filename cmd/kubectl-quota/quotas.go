package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/quota/clusterquota"
)

// clients are the API clients of one command run.
type clients struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
	disc discovery.CachedDiscoveryInterface
}

// newClients makes the clients for cfg; discovery is cached for the run.
func newClients(cfg *rest.Config) (*clients, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{kube: kube, dyn: dyn, disc: memory.NewMemCacheClient(d)}, nil
}

// serves reports the name of the resource of kind that the server serves in gv, "" when
// it serves none (or not gv at all).
func (c *clients) serves(gv schema.GroupVersion, kind string) (string, error) {
	list, err := c.disc.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		if apierrors.IsNotFound(err) || errors.Is(err, memory.ErrCacheNotFound) {
			return "", nil
		}
		return "", err
	}
	for _, r := range list.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return r.Name, nil
		}
	}
	return "", nil
}

// shownQuota is one quota as the plugin shows it: a ResourceQuota, or a cluster quota as
// the ResourceQuota view that admission checks a namespace's requests against.
type shownQuota struct {
	// cluster is set for cluster quotas.
	cluster bool
	// namespace is the quota's namespace ("" for a cluster quota listed cluster-wide).
	namespace string
	quota     corev1.ResourceQuota
}

// label names the quota in tables: its name, or clusterresourcequota/<name>.
func (q shownQuota) label() string {
	if q.cluster {
		return "clusterresourcequota/" + q.quota.Name
	}
	return q.quota.Name
}

// ref names the quota in explanations: resourcequota/<name> or clusterresourcequota/<name>.
func (q shownQuota) ref() string {
	if q.cluster {
		return "clusterresourcequota/" + q.quota.Name
	}
	return "resourcequota/" + q.quota.Name
}

// resourceQuotas lists the ResourceQuotas of ns ("" for every namespace).
func (c *clients) resourceQuotas(ctx context.Context, ns string) ([]shownQuota, error) {
	list, err := c.kube.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]shownQuota, 0, len(list.Items))
	for _, rq := range list.Items {
		out = append(out, shownQuota{namespace: rq.Namespace, quota: rq})
	}
	return out, nil
}

var clusterQuotaGV = clusterquota.SchemeGroupVersion

// appliedClusterQuotas lists the cluster quotas selecting ns, through the namespaced
// quota.openshift.io/v1 appliedclusterresourcequotas view, as views of ns. It returns none,
// without an error, when the server does not serve them or the user may not list them.
func (c *clients) appliedClusterQuotas(ctx context.Context, ns string) ([]shownQuota, error) {
	res, err := c.serves(clusterQuotaGV, "AppliedClusterResourceQuota")
	if err != nil || res == "" {
		return nil, err
	}
	u, err := c.dyn.Resource(clusterQuotaGV.WithResource(res)).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ignorable(err) {
			return nil, nil
		}
		return nil, err
	}
	var list clusterquota.AppliedClusterResourceQuotaList
	if err := convert(u.UnstructuredContent(), &list); err != nil {
		return nil, err
	}
	out := make([]shownQuota, 0, len(list.Items))
	for i := range list.Items {
		a := &list.Items[i]
		crq := &clusterquota.ClusterResourceQuota{ObjectMeta: a.ObjectMeta, Spec: a.Spec, Status: a.Status}
		out = append(out, shownQuota{cluster: true, namespace: ns, quota: view(crq, ns)})
	}
	return out, nil
}

// clusterQuotas lists every ClusterResourceQuota, as views with no namespace. It returns
// none, without an error, when the server does not serve them or the user may not list them.
func (c *clients) clusterQuotas(ctx context.Context) ([]shownQuota, error) {
	res, err := c.serves(clusterQuotaGV, "ClusterResourceQuota")
	if err != nil || res == "" {
		return nil, err
	}
	u, err := c.dyn.Resource(clusterQuotaGV.WithResource(res)).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ignorable(err) {
			return nil, nil
		}
		return nil, err
	}
	var list clusterquota.ClusterResourceQuotaList
	if err := convert(u.UnstructuredContent(), &list); err != nil {
		return nil, err
	}
	out := make([]shownQuota, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, shownQuota{cluster: true, quota: view(&list.Items[i], "")})
	}
	return out, nil
}

// view is the cluster quota's view in ns (clusterquota.View) with the cluster quota's
// annotations, which carry its enforcement mode and warn-at threshold.
func view(crq *clusterquota.ClusterResourceQuota, ns string) corev1.ResourceQuota {
	v := clusterquota.View(crq, ns)
	v.Annotations = crq.Annotations
	return v
}

// ignorable reports whether a list error means "not for this user or server": forbidden,
// not found, or not allowed.
func ignorable(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err)
}

// convert turns unstructured content into a typed object through JSON, as a client
// decoding the response would.
func convert(content map[string]any, into any) error {
	b, err := json.Marshal(content)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("decoding %T: %w", into, err)
	}
	return nil
}

// sortQuotas orders ResourceQuotas before cluster quotas, each by namespace and name.
func sortQuotas(qs []shownQuota) {
	slices.SortStableFunc(qs, func(a, b shownQuota) int {
		if a.cluster != b.cluster {
			if a.cluster {
				return 1
			}
			return -1
		}
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.quota.Name, b.quota.Name)
	})
}
