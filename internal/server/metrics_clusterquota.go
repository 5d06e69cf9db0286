package server

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry"
)

// clusterQuotaCollector exposes every cluster quota's hard and used values, in total
// (quotad_clusterresourcequota) and per selected namespace
// (quotad_clusterresourcequota_namespace), from a cache fed by the cluster quotas' watch.
type clusterQuotaCollector struct {
	cache       *objectCache
	total, byNS *prometheus.Desc
}

func newClusterQuotaCollector(ctx context.Context, store *registry.Store, log *slog.Logger) *clusterQuotaCollector {
	c := &clusterQuotaCollector{
		cache: &objectCache{byNS: map[string]map[string]runtime.Object{}, shared: true},
		total: prometheus.NewDesc("quotad_clusterresourcequota",
			"Hard limit and usage of each resource of each ClusterResourceQuota, over every namespace it selects.",
			[]string{"clusterresourcequota", "resource", "type"}, nil),
		byNS: prometheus.NewDesc("quotad_clusterresourcequota_namespace",
			"Hard limit and usage of each resource of each ClusterResourceQuota in each namespace it selects.",
			[]string{"clusterresourcequota", "namespace", "resource", "type"}, nil),
	}
	go c.cache.run(ctx, store, store.Catalogue().Get(clusterquota.SchemeGroupVersion.WithResource("clusterresourcequotas")), log)
	return c
}

func (c *clusterQuotaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.total
	ch <- c.byNS
}

// Collect sends the cached values, gathered under the cache's read lock.
func (c *clusterQuotaCollector) Collect(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	c.cache.mu.RLock()
	for _, byName := range c.cache.byNS {
		for _, o := range byName {
			q, ok := o.(*clusterquota.ClusterResourceQuota)
			if !ok {
				continue
			}
			for name, v := range q.Status.Total.Hard {
				out = append(out, prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, v.AsApproximateFloat64(), q.Name, string(name), "hard"))
			}
			for name, v := range q.Status.Total.Used {
				out = append(out, prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, v.AsApproximateFloat64(), q.Name, string(name), "used"))
			}
			for _, e := range q.Status.Namespaces {
				for name, v := range e.Status.Hard {
					out = append(out, prometheus.MustNewConstMetric(c.byNS, prometheus.GaugeValue, v.AsApproximateFloat64(), q.Name, e.Namespace, string(name), "hard"))
				}
				for name, v := range e.Status.Used {
					out = append(out, prometheus.MustNewConstMetric(c.byNS, prometheus.GaugeValue, v.AsApproximateFloat64(), q.Name, e.Namespace, string(name), "used"))
				}
			}
		}
	}
	c.cache.mu.RUnlock()
	for _, m := range out {
		ch <- m
	}
}
