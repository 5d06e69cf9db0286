package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// clusterQuotaBody is a ClusterResourceQuota selecting the namespaces labelled
// quotabench=<name>.
func clusterQuotaBody(name string, pods int) m {
	return m{"apiVersion": "quota.openshift.io/v1", "kind": "ClusterResourceQuota", "metadata": m{"name": name},
		"spec": m{
			"selector": m{"labels": m{"matchLabels": m{"quotabench": name}}},
			"quota":    m{"hard": m{"pods": fmt.Sprint(pods), "requests.cpu": "100k", "requests.memory": "100Ti", "limits.cpu": "100k", "limits.memory": "100Ti"}},
		}}
}

// runClusterQuota runs the cluster quota scenarios.
//
//   - clusterquota: the same creates twice in one run, first into one namespace under a
//     ResourceQuota, then spread over --namespaces namespaces under one ClusterResourceQuota
//     (and no ResourceQuota), and reports both rates and their ratio.
//   - clustertight: --creates spread over --namespaces namespaces under one cluster quota of
//     --hard pods: exactly --hard must be admitted.
func runClusterQuota(a *api, o options) error {
	ctx := context.Background()
	name := o.prefix
	hard := o.creates * 2
	if o.scenario == "clustertight" {
		hard = o.hard
	}
	var nss []string
	for i := 0; i < o.namespaces; i++ {
		nss = append(nss, fmt.Sprintf("%s-%03d", o.prefix, i))
	}
	if !o.noSetup {
		if err := a.mustCreate(ctx, "/apis/quota.openshift.io/v1/clusterresourcequotas", clusterQuotaBody(name, hard)); err != nil {
			return err
		}
		for _, ns := range nss {
			if err := a.mustCreate(ctx, "/api/v1/namespaces", m{"apiVersion": "v1", "kind": "Namespace", "metadata": m{"name": ns, "labels": m{"quotabench": name}}}); err != nil {
				return err
			}
		}
	}
	single := o.prefix + "-one"
	if o.scenario == "clusterquota" && !o.noSetup {
		if err := a.mustCreate(ctx, "/api/v1/namespaces", m{"apiVersion": "v1", "kind": "Namespace", "metadata": m{"name": single}}); err != nil {
			return err
		}
		if err := a.mustCreate(ctx, "/api/v1/namespaces/"+single+"/resourcequotas", quotaBody(hard)); err != nil {
			return err
		}
	}
	// The controllers' own writes in new namespaces (kube-root-ca.crt, the default
	// ServiceAccount) are done before any load starts, so that neither phase measures them.
	if !o.noSetup {
		wait := nss
		if o.scenario == "clusterquota" {
			wait = append(wait, single)
		}
		if err := waitPublished(ctx, a, wait); err != nil {
			return err
		}
	}
	// Each phase runs in parts (--alternate), in turn with the other phase's parts, and is
	// reported after its last part (with one part, as it ends).
	parts := max(o.alternate, 1)
	if o.scenario != "clusterquota" {
		parts = 1
	}
	type phase struct {
		what string
		nss  []string
		st   stats
		took time.Duration
	}
	one := &phase{what: "one namespace, one ResourceQuota", nss: []string{single}}
	cluster := &phase{what: "one ClusterResourceQuota", nss: nss}
	order := []*phase{one, cluster}
	switch {
	case o.scenario != "clusterquota":
		order = []*phase{cluster}
	case o.clusterFirst:
		order = []*phase{cluster, one}
	}
	for k := 0; k < parts; k++ {
		from, to := k*o.creates/parts, (k+1)*o.creates/parts
		for _, ph := range order {
			st, elapsed := runLoadFrom(a, o, ph.nss, from, to-from)
			ph.st.merge(st)
			ph.took += elapsed
			if k == parts-1 {
				report(o, ph.what, len(ph.nss), &ph.st, ph.took)
			}
		}
	}
	_, b, err := a.do(ctx, http.MethodGet, "/apis/quota.openshift.io/v1/clusterresourcequotas/"+name, nil)
	if err != nil {
		return err
	}
	var q struct {
		Status struct {
			Total struct {
				Used map[string]string `json:"used"`
			} `json:"total"`
			Namespaces []struct{} `json:"namespaces"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	n, err := resource.ParseQuantity(q.Status.Total.Used["pods"])
	if err != nil {
		return fmt.Errorf("cluster quota %s used pods %q: %w", name, q.Status.Total.Used["pods"], err)
	}
	fmt.Printf("cluster-quota-used-pods=%d namespaces-in-status=%d hard=%d\n", n.Value(), len(q.Status.Namespaces), hard)
	if one.took > 0 {
		fmt.Printf("ratio cluster/one=%.2f\n", one.took.Seconds()/cluster.took.Seconds())
	}
	return nil
}

// report prints one load's numbers.
func report(o options, what string, namespaces int, st *stats, elapsed time.Duration) {
	sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
	fmt.Printf("\r%s: clients=%d namespaces=%d attempts=%d elapsed=%s\n", what, o.clients, namespaces, o.creates, elapsed.Round(time.Millisecond))
	fmt.Printf("creates/s=%.0f p50=%s p99=%s max=%s\n", float64(o.creates)/elapsed.Seconds(),
		pct(st.lat, 0.50).Round(10*time.Microsecond), pct(st.lat, 0.99).Round(10*time.Microsecond), pct(st.lat, 1).Round(10*time.Microsecond))
	fmt.Printf("admitted=%d refused=%d errors=%d load-generator-cpu-per-create=%s\n", st.admitted.Load(), st.refused.Load(), st.errs.Load(), (st.cpu / time.Duration(max(o.creates, 1))).Round(time.Microsecond))
	if e := st.firstErr.Load(); e != nil {
		fmt.Printf("first error: %s\n", e)
	}
}

// waitPublished waits (up to a minute) until every namespace of nss that exists holds what
// the controllers write into a new namespace: the root CA publisher's kube-root-ca.crt and
// the service account controller's default ServiceAccount (paced, as kube-controller-manager's
// writes are: about 5 s for 100 namespaces at 20/s, which a phase would otherwise share).
func waitPublished(ctx context.Context, a *api, nss []string) error {
	deadline := time.Now().Add(time.Minute)
	for _, ns := range nss {
		for _, path := range []string{"/api/v1/namespaces/" + ns + "/configmaps/kube-root-ca.crt", "/api/v1/namespaces/" + ns + "/serviceaccounts/default"} {
			for {
				code, _, err := a.do(ctx, http.MethodGet, path, nil)
				if err != nil {
					return err
				}
				if code == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("%s: not created within a minute", path)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	return nil
}
