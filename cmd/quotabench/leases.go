package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// leaseJSON is the Lease each renewal sends: a node's heartbeat in kube-node-lease, as a
// kubelet (or KWOK) renews it every 10 s, at the revision the last renewal returned.
const leaseJSON = `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":%q,"namespace":"kube-node-lease","resourceVersion":%q},"spec":{"holderIdentity":%q,"leaseDurationSeconds":40,"renewTime":%q}}`

// runLeases is the leases scenario: o.clients nodes, each renewing its own Lease (PUT at the
// last revision it saw) until o.creates renewals are done in all. It is the write every
// node of a cluster makes, the most frequent of a large cluster's control plane.
func runLeases(a *api, o options) error {
	ctx := context.Background()
	names := make([]string, o.clients)
	rvs := make([]string, o.clients)
	for c := range names {
		names[c] = fmt.Sprintf("%s-%d", o.prefix, c)
		body := fmt.Appendf(nil, leaseJSON, names[c], "", names[c], microTime(time.Now()))
		code, b, err := a.do(ctx, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", body)
		if err != nil {
			return err
		}
		if code != http.StatusCreated {
			return fmt.Errorf("create lease %s: %d %s", names[c], code, b)
		}
		if rvs[c], err = resourceVersionOf(b); err != nil {
			return err
		}
	}
	st, elapsed := drive(a, o, o.creates, func(cc *conn, c, _ int, st *stats) bool {
		t0 := time.Now()
		code, b, err := cc.do(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"+names[c],
			fmt.Appendf(nil, leaseJSON, names[c], rvs[c], names[c], microTime(t0)))
		st.add(time.Since(t0))
		if err == nil && code == http.StatusOK {
			if rvs[c], err = resourceVersionOf(b); err == nil {
				st.admitted.Add(1)
				return true
			}
		}
		st.errs.Add(1)
		if err == nil {
			err = fmt.Errorf("%d %s", code, b)
		}
		st.firstErr.CompareAndSwap(nil, err.Error())
		return false // its lease's revision is unknown now: this client stops
	})
	sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
	fmt.Printf("\rscenario=leases clients=%d renewals=%d elapsed=%s\n", o.clients, st.admitted.Load(), elapsed.Round(time.Millisecond))
	fmt.Printf("renewals/s=%.0f p50=%s p99=%s max=%s errors=%d\n", float64(st.admitted.Load())/elapsed.Seconds(),
		pct(st.lat, 0.50).Round(10*time.Microsecond), pct(st.lat, 0.99).Round(10*time.Microsecond), pct(st.lat, 1).Round(10*time.Microsecond), st.errs.Load())
	if e := st.firstErr.Load(); e != nil {
		fmt.Printf("first error: %s\n", e)
	}
	return nil
}

// microTime formats t as a metav1.MicroTime.
func microTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

// resourceVersionOf reads metadata.resourceVersion of an object's JSON.
func resourceVersionOf(b []byte) (string, error) {
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return "", err
	}
	if o.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("no resourceVersion in %s", b)
	}
	return o.Metadata.ResourceVersion, nil
}
