package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotad/quotad/internal/jsonpatch"
)

// The abusers whose requests are small but ask for much work: patches that grow or
// churn the object they patch, and selectors as long as a request line. A tenant with
// the edit role may send each of them.

// workTarget is the ConfigMap the patch abusers patch.
const workTarget = "abuse-target"

// phase is the abuse phase of a run: abusers repeat their requests while ctx lasts. The
// first request of each is sent on first (the whole run's, bounded) instead, so that every
// abuser gets at least one answer even when the machine is too slow for it to come back
// within the phase.
type phase struct{ ctx, first context.Context }

// repeat sends one request after another until the phase ends, counting the answers under
// kind.
func repeat(ph phase, out *outcomes, kind string, send func(ctx context.Context) (int, error)) {
	for n := 0; n == 0 || ph.ctx.Err() == nil; n++ {
		ctx := ph.ctx
		if n == 0 {
			ctx = ph.first
		}
		code, err := send(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			out.add(kind, "error")
			continue
		}
		out.add(kind, strconv.Itoa(code))
	}
}

// patchAbuser repeats a patch of type pt on path.
func patchAbuser(ph phase, a *api, path, pt, kind string, patch []byte, out *outcomes) {
	repeat(ph, out, kind, func(ctx context.Context) (int, error) {
		code, _, err := a.doType(ctx, http.MethodPatch, path, pt, patch)
		return code, err
	})
}

// copyBombPatch is 40 copies of a 1 KB annotations map into itself (2^40 KB if applied).
func copyBombPatch() []byte {
	return []byte(jsonpatch.CopyBomb(`{"k":"`+strings.Repeat("v", 1000)+`"}`, 40))
}

// churnPatch inserts 9,998 times at the head of an array of 200,000, then fails a test:
// it changes nothing, and each insertion copies the array.
func churnPatch() []byte {
	var b strings.Builder
	b.WriteString(`[{"op":"add","path":"/metadata/finalizers","value":[`)
	b.WriteString(strings.TrimSuffix(strings.Repeat(`"a",`, 200000), ","))
	b.WriteString(`]}`)
	b.WriteString(strings.Repeat(`,{"op":"add","path":"/metadata/finalizers/0","value":"b"}`, 9998))
	b.WriteString(`,{"op":"test","path":"/metadata/name","value":"not it"}]`)
	return []byte(b.String())
}

// mergeOrderPatch is a strategic merge patch ordering 40,000 containers.
func mergeOrderPatch() []byte {
	var b strings.Builder
	b.WriteString(`{"spec":{"$setElementOrder/containers":[`)
	for i := range 40000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"c%d"}`, i)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// longSelector is an 890 KB label selector: one `in` of about 100,000 values, its query
// escaped only where it must be.
func longSelector() string {
	var b strings.Builder
	b.WriteString("app%20in%20(x")
	for i := 0; b.Len() < 890_000; i++ {
		fmt.Fprintf(&b, ",v%d", i)
	}
	b.WriteString(")")
	return b.String()
}

// selectorAbuser repeats a list of the namespace's pods with the long selector.
func selectorAbuser(ph phase, a *api, ns string, out *outcomes) {
	path := "/api/v1/namespaces/" + ns + "/pods?labelSelector=" + longSelector()
	repeat(ph, out, "long-selector", func(ctx context.Context) (int, error) { return a.drain(ctx, path) })
}

// leaseWatch samples the controller leader's Lease while the abusers run: the
// transitions it counted and the longest time between two renewals seen.
type leaseWatch struct {
	mu          sync.Mutex
	first, last int32
	lastRenew   time.Time
	maxGap      time.Duration
	samples     atomic.Int64
	seen        bool
}

type leaseDoc struct {
	Spec struct {
		HolderIdentity   string `json:"holderIdentity"`
		LeaseTransitions int32  `json:"leaseTransitions"`
		RenewTime        string `json:"renewTime"`
	} `json:"spec"`
}

// run reads kube-system/kube-controller-manager every 200 ms until ctx ends.
func (l *leaseWatch) run(ctx context.Context, a *api) {
	for ctx.Err() == nil {
		code, b, err := a.do(ctx, http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager", nil)
		var d leaseDoc
		if err == nil && code == http.StatusOK && json.Unmarshal(b, &d) == nil {
			renew, _ := time.Parse("2006-01-02T15:04:05.000000Z07:00", d.Spec.RenewTime)
			l.mu.Lock()
			if !l.seen {
				l.first, l.seen = d.Spec.LeaseTransitions, true
			} else if !renew.IsZero() && !l.lastRenew.IsZero() && renew.After(l.lastRenew) {
				l.maxGap = max(l.maxGap, renew.Sub(l.lastRenew))
			}
			l.last = d.Spec.LeaseTransitions
			if renew.After(l.lastRenew) {
				l.lastRenew = renew
			}
			l.mu.Unlock()
			l.samples.Add(1)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// String reports the transitions and the longest renewal gap seen.
func (l *leaseWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen {
		return "lease: not read (leader election off?)"
	}
	return fmt.Sprintf("lease: transitions=%d longest-renewal-gap=%s (%d samples)", l.last-l.first, l.maxGap.Round(time.Millisecond), l.samples.Load())
}
