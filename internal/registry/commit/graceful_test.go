package commit

import (
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/registry/graceful"
	"github.com/quotad/quotad/internal/registry/kinds/core"
)

// storeDelete is the write Store.Delete makes of a delete of the stored pod asking for
// grace seconds (nil: none) at now, decided as the store decides (graceful.Decide): a
// graceful delete, or one held by finalizers, marks the pod (an update: "marked"),
// otherwise it is removed ("removed"). A delete of a pod in a grace period it does not
// shorten writes nothing ("pending", nil write).
func (e *planEnv) storeDelete(name string, grace *int64, now metav1.Time) (*Write, string) {
	e.t.Helper()
	old, _ := e.stored(e.pods(), name)
	stamp, pending := graceful.Decide(core.Pod{}, old, grace, now)
	switch {
	case pending:
		return nil, "pending"
	case len(old.(*corev1.Pod).Finalizers) > 0 || stamp != nil && stamp.Grace > 0:
		return e.podUpdate("", name, func(p *corev1.Pod) { graceful.Mark(p, stamp, now) }), "marked"
	}
	return e.deletePod(name), "removed"
}

// dropFinalizers is an update removing the pod's finalizers; of a pod deleting with no
// grace period left it is its removal, as the store makes it (prepareUpdate).
func (e *planEnv) dropFinalizers(name string) *Write {
	e.t.Helper()
	old, _ := e.stored(e.pods(), name)
	p := old.(*corev1.Pod)
	if p.DeletionTimestamp != nil && graceful.NoGraceLeft(p) {
		return e.deletePod(name)
	}
	return e.podUpdate("", name, func(p *corev1.Pod) { p.Finalizers = nil })
}

// TestPlanGracefulDelete walks pods through graceful deletion as the store writes it and
// checks after every step that status.used is what the stored pods charge (I1) and what
// design.md §2 says: a pod in its grace period counts; the write that ends its counting
// (terminal status, zero-grace delete, removal) carries its credit; a terminating pod's
// charge still refuses a create that would exceed hard (I2).
func TestPlanGracefulDelete(t *testing.T) {
	e := newPlanEnv(t)
	e.commitSolo(e.createQuota(newQuota("q", hardOf("requests.cpu", "4", "pods", "4", "count/pods", "5"))))
	now := metav1.NewTime(time.Unix(1_000_000_000, 0))
	bound := func(name, cpu string, finalizers ...string) *corev1.Pod {
		p := newPod(name, cpu, corev1.PodRunning)
		p.Spec.NodeName = "n1"
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
		p.Finalizers = finalizers
		return p
	}
	e.commitSolo(e.createPod(bound("a", "1")))
	e.commitSolo(e.createPod(bound("b", "1")))
	e.commitSolo(e.createPod(bound("h", "1", "example.com/hold")))
	e.commitSolo(e.createPod(bound("k", "1", "example.com/hold")))
	unbound := newPod("u", "100m", corev1.PodPending)

	type step struct {
		name string
		// write returns the step's write (nil: nothing is written); want is used after it.
		write     func() (*Write, string)
		wantWhat  string
		refused   bool
		wantUsed  string
		wantGrace *int64 // the stored pod's deletionGracePeriodSeconds after the step
		pod       string
	}
	del := func(name string, grace *int64) func() (*Write, string) {
		return func() (*Write, string) { return e.storeDelete(name, grace, now) }
	}
	steps := []step{
		{name: "graceful delete of a bound pod marks it, used unchanged", pod: "a", write: del("a", nil), wantWhat: "marked",
			wantUsed: "count/pods=4 pods=4 requests.cpu=4", wantGrace: ptr.To[int64](30)},
		{name: "a longer second delete writes nothing", pod: "a", write: del("a", ptr.To[int64](60)), wantWhat: "pending",
			wantUsed: "count/pods=4 pods=4 requests.cpu=4", wantGrace: ptr.To[int64](30)},
		{name: "a shorter one shortens it, used unchanged", pod: "a", write: del("a", ptr.To[int64](5)), wantWhat: "marked",
			wantUsed: "count/pods=4 pods=4 requests.cpu=4", wantGrace: ptr.To[int64](5)},
		{name: "the terminating pod's charge refuses a create above hard", write: func() (*Write, string) {
			return e.createPod(unbound.DeepCopy()), ""
		}, refused: true, wantUsed: "count/pods=4 pods=4 requests.cpu=4"},
		{name: "terminal status of a terminating pod credits it then", pod: "a", write: func() (*Write, string) {
			return e.podUpdate("status", "a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), ""
		}, wantUsed: "count/pods=4 pods=3 requests.cpu=3", wantGrace: ptr.To[int64](5)},
		{name: "the node's zero-grace delete removes it", write: del("a", ptr.To[int64](0)), wantWhat: "removed",
			wantUsed: "count/pods=3 pods=3 requests.cpu=3"},
		{name: "graceful delete of b", pod: "b", write: del("b", ptr.To[int64](10)), wantWhat: "marked",
			wantUsed: "count/pods=3 pods=3 requests.cpu=3", wantGrace: ptr.To[int64](10)},
		{name: "b confirmed by its node: credited in the removal", write: del("b", ptr.To[int64](0)), wantWhat: "removed",
			wantUsed: "count/pods=2 pods=2 requests.cpu=2"},
		{name: "graceful delete of a pod held by finalizers", pod: "h", write: del("h", nil), wantWhat: "marked",
			wantUsed: "count/pods=2 pods=2 requests.cpu=2", wantGrace: ptr.To[int64](30)},
		{name: "its finalizers dropped in its grace period: still there, still counting", pod: "h", write: func() (*Write, string) {
			return e.dropFinalizers("h"), ""
		}, wantUsed: "count/pods=2 pods=2 requests.cpu=2", wantGrace: ptr.To[int64](30)},
		{name: "zero-grace delete of a pod held by finalizers: compute credited, still an object", pod: "k", write: del("k", ptr.To[int64](0)),
			wantWhat: "marked", wantUsed: "count/pods=2 pods=1 requests.cpu=1", wantGrace: ptr.To[int64](0)},
		{name: "its finalizers dropped: removed, count/pods credited", write: func() (*Write, string) {
			return e.dropFinalizers("k"), ""
		}, wantUsed: "count/pods=1 pods=1 requests.cpu=1"},
		{name: "an unbound pod", write: func() (*Write, string) {
			return e.createPod(unbound.DeepCopy()), ""
		}, wantUsed: "count/pods=2 pods=2 requests.cpu=1100m"},
		{name: "is removed at once", write: del("u", nil), wantWhat: "removed", wantUsed: "count/pods=1 pods=1 requests.cpu=1"},
	}
	for _, s := range steps {
		w, what := s.write()
		if what != s.wantWhat {
			t.Fatalf("%s: store's delete %q, want %q", s.name, what, s.wantWhat)
		}
		if w != nil {
			plan, err := e.plan(e.read(), []*Write{w}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := plan.results[0] != nil; got != s.refused {
				t.Fatalf("%s: refused %v (%v), want %v", s.name, got, plan.results[0], s.refused)
			}
			if e.kv.txn(plan.txn) == 0 {
				t.Fatalf("%s: transaction failed its guards", s.name)
			}
		}
		e.checkI1(s.name)
		used := e.used("q")
		if got := quotaShow(used); got != s.wantUsed {
			t.Errorf("%s: used %s, want %s", s.name, got, s.wantUsed)
		}
		if s.pod != "" {
			obj, _ := e.stored(e.pods(), s.pod)
			if obj == nil {
				t.Fatalf("%s: pod %s gone", s.name, s.pod)
			}
			g := obj.(*corev1.Pod).DeletionGracePeriodSeconds
			if (g == nil) != (s.wantGrace == nil) || g != nil && *g != *s.wantGrace {
				t.Errorf("%s: deletionGracePeriodSeconds %v, want %v", s.name, ptr.Deref(g, -1), ptr.Deref(s.wantGrace, -1))
			}
		}
	}
}

// quotaShow prints a resource list sorted by name: "a=1 b=2".
func quotaShow(l corev1.ResourceList) string {
	var out []string
	for _, n := range quota.ResourceNames(l) {
		v := l[n]
		out = append(out, string(n)+"="+v.String())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
