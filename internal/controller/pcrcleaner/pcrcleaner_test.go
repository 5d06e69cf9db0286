package pcrcleaner

import (
	"context"
	"io"
	"log/slog"
	goruntime "runtime"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var pcrsGVR = certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests")

// pcr is a request in ns created at created, with a condition of type cond ("" for a
// pending one).
func pcr(ns, name string, created time.Time, cond string) *certificatesv1.PodCertificateRequest {
	p := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "p", NodeName: "n"}}
	if cond != "" {
		p.Status.Conditions = []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.NewTime(created)}}
	}
	return p
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestClean: a pass deletes every request created at least 15 minutes ago, pending,
// issued, denied or failed alike, in every namespace, guarded by its UID, and keeps the
// younger ones and those already being deleted.
func TestClean(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name    string
		pcr     *certificatesv1.PodCertificateRequest
		deleted bool
	}{
		{name: "pending, old", pcr: pcr("a", "r", now.Add(-time.Hour), ""), deleted: true},
		{name: "issued, old", pcr: pcr("a", "r", now.Add(-16*time.Minute), certificatesv1.PodCertificateRequestConditionTypeIssued), deleted: true},
		{name: "denied, old", pcr: pcr("b", "r", now.Add(-16*time.Minute), certificatesv1.PodCertificateRequestConditionTypeDenied), deleted: true},
		{name: "failed, old", pcr: pcr("c", "r", now.Add(-16*time.Minute), certificatesv1.PodCertificateRequestConditionTypeFailed), deleted: true},
		{name: "exactly 15 minutes", pcr: pcr("a", "r", now.Add(-15*time.Minute), ""), deleted: true},
		{name: "a moment younger", pcr: pcr("a", "r", now.Add(-15*time.Minute+time.Nanosecond), certificatesv1.PodCertificateRequestConditionTypeIssued)},
		{name: "pending, young", pcr: pcr("a", "r", now.Add(-time.Minute), "")},
		{name: "created in the future (skew)", pcr: pcr("a", "r", now.Add(time.Hour), "")},
		{name: "old, already being deleted", pcr: func() *certificatesv1.PodCertificateRequest {
			p := pcr("a", "r", now.Add(-time.Hour), "")
			p.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
			p.Finalizers = []string{"example.com/hold"}
			return p
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := fake.New(clocktesting.NewFakeClock(now))
			fc.Add(tc.pcr)
			c := New(fc, quiet(), Options{Clock: clocktesting.NewFakeClock(now)})
			c.Clean(context.Background())
			gone := fc.Object(pcrsGVR, tc.pcr.Namespace, "r") == nil
			if gone != tc.deleted {
				t.Fatalf("deleted %v, want %v", gone, tc.deleted)
			}
			acts := fc.Actions()
			if !tc.deleted && len(acts) != 0 {
				t.Errorf("writes %+v, want none", acts)
			}
			if tc.deleted && (len(acts) != 1 || acts[0].Verb != "delete" || acts[0].Err != nil) {
				t.Errorf("writes %+v, want one delete", acts)
			}
		})
	}
}

// TestCleanThresholdOption: a shorter threshold deletes younger requests.
func TestCleanThresholdOption(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0.Add(time.Minute))
	fc := fake.New(clk)
	fc.Add(pcr("a", "old", t0, ""), pcr("a", "young", t0.Add(50*time.Second), ""))
	New(fc, quiet(), Options{Clock: clk, Threshold: 30 * time.Second}).Clean(context.Background())
	if fc.Object(pcrsGVR, "a", "old") != nil || fc.Object(pcrsGVR, "a", "young") == nil {
		t.Errorf("old %v, young %v: want only young kept", fc.Object(pcrsGVR, "a", "old"), fc.Object(pcrsGVR, "a", "young"))
	}
}

// replacing is the fake client where, after each list, a request named replace is
// deleted and created again (a new UID) and one named vanish is deleted: what may happen
// between a pass's read and its deletes.
type replacing struct {
	*fake.Client
}

func (r replacing) ListEach(ctx context.Context, res *registry.Resource, ns string, opts registry.ListOptions, pageSize int64, page func(string, []runtime.Object) error) error {
	if err := r.Client.ListEach(ctx, res, ns, opts, pageSize, page); err != nil {
		return err
	}
	for _, name := range []string{"replace", "vanish"} {
		if _, err := r.Client.Delete(ctx, res, "a", name, metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
			return err
		}
	}
	r.Client.Add(pcr("a", "replace", t0, ""))
	r.Client.Actions()
	return nil
}

// TestCleanGuardedByUID: a request replaced after the pass read it is kept (the delete's
// UID precondition fails), one deleted meanwhile is no error, and the pass goes on to
// the next.
func TestCleanGuardedByUID(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0.Add(time.Hour))
	fc := fake.New(clk)
	fc.Add(pcr("a", "replace", t0, ""), pcr("a", "vanish", t0, ""), pcr("a", "z", t0, ""))
	New(replacing{fc}, quiet(), Options{Clock: clk}).Clean(context.Background())
	if fc.Object(pcrsGVR, "a", "replace") == nil {
		t.Error("the replaced request was deleted")
	}
	if fc.Object(pcrsGVR, "a", "z") != nil {
		t.Error("the pass stopped before the last request")
	}
	acts := fc.Actions()
	if len(acts) != 3 {
		t.Fatalf("writes %+v, want three deletes", acts)
	}
	if !apierrors.IsConflict(acts[0].Err) || !apierrors.IsNotFound(acts[1].Err) || acts[2].Err != nil {
		t.Errorf("delete errors %v, %v, %v: want a conflict, not found, none", acts[0].Err, acts[1].Err, acts[2].Err)
	}
}

// TestStartPeriod: a running cleaner passes at once and then a period after each pass
// ends; a request is deleted by the first pass at or past its 15 minutes, not before.
func TestStartPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	fc := fake.New(clk)
	fc.Add(pcr("a", "r", t0, ""))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = New(fc, quiet(), Options{Clock: clk}).Start(ctx)
	}()
	// waitPass waits until the cleaner waits on its period again (its pass is over).
	waitPass := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("the cleaner does not wait for its next pass")
			}
			goruntime.Gosched()
		}
	}
	// Passes at +0, +5m and +10m keep the request; the one at +15m deletes it.
	for i := 0; i < 3; i++ {
		waitPass()
		if fc.Object(pcrsGVR, "a", "r") == nil {
			t.Fatalf("deleted by the pass at +%v", clk.Since(t0))
		}
		clk.Step(DefaultPeriod)
	}
	waitPass()
	if fc.Object(pcrsGVR, "a", "r") != nil {
		t.Fatalf("kept by the pass at +%v", clk.Since(t0))
	}
	// A period not yet over runs no pass.
	fc.Add(pcr("a", "s", t0, ""))
	clk.Step(DefaultPeriod - time.Second)
	if fc.Object(pcrsGVR, "a", "s") == nil || !clk.HasWaiters() {
		t.Fatal("a pass ran before its period ended")
	}
	cancel()
	<-done
}
