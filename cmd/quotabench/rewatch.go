package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// boundPodJSON is a pod already bound to a node (spec.nodeName), as a node agent sees it.
const boundPodJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"app":"rewatch"}},"spec":{"nodeName":%q,"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"10m","memory":"16Mi"},"limits":{"cpu":"10m","memory":"16Mi"}}}]}}`

// rewatchNodes is how many nodes the rewatch scenario's pods are bound to.
const rewatchNodes = 100

// createNodes creates the rewatchNodes nodes that the bound pods of namespace ns are bound
// to, so that no controller collects those pods as orphans (the pod garbage collector
// deletes the pods of a node missing for 40 s, which would leave a server holding bound
// pods busy deleting them).
func createNodes(ctx context.Context, a *api, ns string) error {
	for i := 0; i < rewatchNodes; i++ {
		node := m{"apiVersion": "v1", "kind": "Node", "metadata": m{"name": fmt.Sprintf("%s-node-%d", ns, i)}}
		if err := a.mustCreate(ctx, "/api/v1/nodes", node); err != nil {
			return err
		}
	}
	return nil
}

// runRewatch is the rewatch scenario: o.creates pods bound to nodes, then o.namespaces
// watches of every bound pod from resourceVersion 0 (the field selector spec.nodeName!=),
// one after the other, each read to its o.creates-th initial event (so the server should
// hold no other bound pods). It is what KWOK's pod watch
// asks for each time its watch ends (its informer sets resourceVersion 0 on every watch):
// every bound pod again, while the pods bound since wait behind them. Then o.nodeLists lists
// of one node's pods (spec.nodeName=<node>), as each kubelet lists them when it starts.
func runRewatch(a *api, o options) error {
	ctx := context.Background()
	ns := o.prefix
	if !o.noSetup {
		if err := a.mustCreate(ctx, "/api/v1/namespaces", m{"apiVersion": "v1", "kind": "Namespace", "metadata": m{"name": ns}}); err != nil {
			return err
		}
		if err := createNodes(ctx, a, ns); err != nil {
			return err
		}
		st, _ := drive(a, o, o.creates, func(cc *conn, _, i int, st *stats) bool {
			body := fmt.Appendf(nil, boundPodJSON, fmt.Sprintf("p-%d", i), fmt.Sprintf("%s-node-%d", ns, i%rewatchNodes))
			code, b, err := cc.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", body)
			switch {
			case err != nil:
				st.errs.Add(1)
				st.firstErr.CompareAndSwap(nil, err.Error())
				return false
			case code != http.StatusCreated && code != http.StatusConflict:
				st.errs.Add(1)
				st.firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s", code, b))
				return false
			}
			st.admitted.Add(1)
			return true
		})
		if e := st.firstErr.Load(); e != nil {
			return fmt.Errorf("creating the pods: %s", e)
		}
	}
	// The watches go over HTTP/2, as client-go's do.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: a.tls.Clone(), ForceAttemptHTTP2: true}}
	path := "/api/v1/pods?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=60&fieldSelector=spec.nodeName%21%3D"
	var first, all []time.Duration
	var events int
	for r := 0; r < o.namespaces; r++ {
		f, d, n, err := readInitialEvents(ctx, client, a, path, o.creates)
		if err != nil {
			return err
		}
		first, all, events = append(first, f), append(all, d), n
	}
	// A node's list of its own pods, as a kubelet starts: o.nodeLists, one node after
	// another.
	var lists []time.Duration
	for r := 0; r < o.nodeLists; r++ {
		t0 := time.Now()
		code, b, err := a.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/pods?fieldSelector=spec.nodeName%%3D%s-node-%d", ns, r%rewatchNodes), nil)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("list: %d %s", code, b)
		}
		lists = append(lists, time.Since(t0))
	}
	sort.Slice(first, func(i, j int) bool { return first[i] < first[j] })
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	sort.Slice(lists, func(i, j int) bool { return lists[i] < lists[j] })
	fmt.Printf("\rscenario=rewatch pods=%d watches=%d events=%d node-lists=%d attempts=%d\n", o.creates, len(all), events, len(lists), len(all)+len(lists))
	fmt.Printf("first-event p50=%s max=%s all-events p50=%s max=%s node-list p50=%s max=%s\n",
		pct(first, 0.5).Round(time.Millisecond), pct(first, 1).Round(time.Millisecond),
		pct(all, 0.5).Round(time.Millisecond), pct(all, 1).Round(time.Millisecond),
		pct(lists, 0.5).Round(100*time.Microsecond), pct(lists, 1).Round(100*time.Microsecond))
	return nil
}

// readInitialEvents opens the watch at path and reads it until want ADDED events came; it
// returns the time to the first event and to the last, and how many there were.
func readInitialEvents(ctx context.Context, client *http.Client, a *api, path string, want int) (first, all time.Duration, n int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("Accept", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, 0, fmt.Errorf("watch: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	added := []byte(`{"type":"ADDED"`)
	for sc.Scan() {
		if n == 0 {
			first = time.Since(t0)
		}
		if bytes.HasPrefix(sc.Bytes(), added) {
			if n++; n == want {
				return first, time.Since(t0), n, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, n, err
	}
	return 0, 0, n, fmt.Errorf("watch ended after %d of %d events", n, want)
}
