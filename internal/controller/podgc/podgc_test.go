package podgc

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

// recording is the fake client, recording each delete's grace period.
type recording struct {
	*fake.Client
	mu     sync.Mutex
	graces []string
}

func (r *recording) Delete(ctx context.Context, res *registry.Resource, ns, name string, opts metav1.DeleteOptions, wopts registry.WriteOptions) (*registry.DeleteResult, error) {
	r.mu.Lock()
	g := "nil"
	if opts.GracePeriodSeconds != nil {
		g = time.Duration(*opts.GracePeriodSeconds).String()
	}
	r.graces = append(r.graces, name+":"+g)
	r.mu.Unlock()
	return r.Client.Delete(ctx, res, ns, name, opts, wopts)
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

func mkPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(t0)},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func on(node string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = node } }
func phase(ph corev1.PodPhase, reason string) podOpt {
	return func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = ph, reason }
}
func created(d time.Duration) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t0.Add(d)) }
}
func generation(g int64) podOpt { return func(p *corev1.Pod) { p.Generation = g } }
func terminating() podOpt {
	return func(p *corev1.Pod) {
		ts, g := metav1.NewTime(t0.Add(30*time.Second)), int64(30)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &g
	}
}

func mkNode(name string, ready bool, taints ...corev1.Taint) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

var outOfService = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

func names(c *fake.Client) string {
	var out []string
	for _, o := range c.Objects(corev1.SchemeGroupVersion.WithResource("pods"), "") {
		out = append(out, o.(*corev1.Pod).Name)
	}
	return strings.Join(out, ",")
}

// gc runs a pass once the collector's cache holds every pod of the fake, as its watch
// would.
func gc(ctx context.Context, c *Controller, rc *recording) {
	c.cache = (*controller.SharedPods)(nil).Sub(collectable)
	for _, o := range rc.Objects(corev1.SchemeGroupVersion.WithResource("pods"), "") {
		c.PodChanged(o.(*corev1.Pod), false)
	}
	c.GC(ctx)
}

func newGC(clk *clocktesting.FakeClock, threshold int) (*Controller, *recording) {
	rc := &recording{Client: fake.New(clk)}
	return New(rc, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{TerminatedPodThreshold: threshold, Clock: clk}), rc
}

// TestTerminatedBeyondThreshold: the terminated pods beyond the threshold go, evicted
// first, then the oldest, name breaking ties; a pod with no phase counts as terminated.
func TestTerminatedBeyondThreshold(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c, rc := newGC(clk, 2)
	rc.Add(mkNode("n1", true),
		mkPod("run", on("n1")),
		mkPod("ok-old", on("n1"), phase(corev1.PodSucceeded, ""), created(1*time.Second)),
		mkPod("ok-b", on("n1"), phase(corev1.PodSucceeded, ""), created(2*time.Second)),
		mkPod("ok-a", on("n1"), phase(corev1.PodSucceeded, ""), created(2*time.Second)),
		mkPod("evicted-new", on("n1"), phase(corev1.PodFailed, "Evicted"), created(9*time.Second)),
		mkPod("nophase", on("n1"), phase("", ""), created(8*time.Second)),
	)
	gc(context.Background(), c, rc)
	// 5 terminated, threshold 2: evicted-new, ok-old, ok-a go.
	if got, want := names(rc.Client), "nophase,ok-b,run"; got != want {
		t.Errorf("pods left %s, want %s", got, want)
	}
	if got, want := strings.Join(rc.graces, " "), "evicted-new:0s ok-old:0s ok-a:0s"; got != want {
		t.Errorf("deletes %s, want %s", got, want)
	}
	// Terminal pods are deleted without a status write.
	for _, a := range rc.Actions() {
		if a.Verb == "update" {
			t.Errorf("terminal pod written: %+v", a)
		}
	}
	// Threshold 0: the pass is off.
	c2, rc2 := newGC(clk, 0)
	rc2.Add(mkPod("a", phase(corev1.PodSucceeded, "")), mkPod("b", phase(corev1.PodFailed, "")))
	gc(context.Background(), c2, rc2)
	if got := names(rc2.Client); got != "a,b" {
		t.Errorf("threshold 0 collected: left %s", got)
	}
}

// TestOrphanedAfterQuarantine: pods of a missing node go once the node has been missing
// for the quarantine time, marked Failed with the DisruptionTarget condition first; a
// node that appears meanwhile keeps its pods.
func TestOrphanedAfterQuarantine(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c, rc := newGC(clk, 0)
	rc.Add(mkNode("n1", true), mkPod("kept", on("n1")), mkPod("orphan", on("gone"), generation(3)), mkPod("done", on("gone"), phase(corev1.PodSucceeded, "")),
		mkPod("late", on("late")), mkPod("pending"))
	ctx := context.Background()
	gc(ctx, c, rc)
	clk.Step(DefaultQuarantine - time.Second)
	gc(ctx, c, rc)
	if got := names(rc.Client); got != "done,kept,late,orphan,pending" {
		t.Fatalf("collected during quarantine: left %s", got)
	}
	rc.Add(mkNode("late", false))
	rc.Actions()
	clk.Step(time.Second)
	// Watch the orphan's last state before it goes.
	_, from := rc.Changes(0)
	gc(ctx, c, rc)
	if got := names(rc.Client); got != "kept,late,pending" {
		t.Fatalf("after quarantine: left %s", got)
	}
	var verbs []string
	for _, a := range rc.Actions() {
		verbs = append(verbs, a.Verb+" "+a.Name+"/"+a.Subresource)
	}
	if got, want := strings.Join(verbs, ", "), "delete done/, update orphan/status, delete orphan/"; got != want {
		t.Errorf("writes %s, want %s", got, want)
	}
	changes, _ := rc.Changes(from)
	var marked *corev1.Pod
	for _, ch := range changes {
		if p, ok := ch.Object.(*corev1.Pod); ok && p.Name == "orphan" && ch.Type == watch.Modified {
			marked = p
		}
	}
	if marked == nil {
		t.Fatal("the orphan was not marked before its deletion")
	}
	if marked.Status.Phase != corev1.PodFailed || marked.Status.ObservedGeneration != 3 || len(marked.Status.Conditions) != 1 {
		t.Fatalf("orphan marked %+v", marked.Status)
	}
	cond := marked.Status.Conditions[0]
	if cond.Type != corev1.DisruptionTarget || cond.Status != corev1.ConditionTrue || cond.Reason != "DeletionByPodGC" ||
		cond.Message != "PodGC: node no longer exists" || cond.ObservedGeneration != 3 || !cond.LastTransitionTime.Time.Equal(clk.Now()) {
		t.Errorf("orphan's condition %+v", cond)
	}
	if got := strings.Join(rc.graces, " "); got != "done:0s orphan:0s" {
		t.Errorf("deletes %s, want grace 0", got)
	}
}

// TestTerminatingPasses: terminating pods on a NotReady node with the out-of-service
// taint, and terminating pods bound to no node, are force-deleted; others wait.
func TestTerminatingPasses(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c, rc := newGC(clk, 0)
	rc.Add(mkNode("oos", false, outOfService), mkNode("notready", false), mkNode("readyoos", true, outOfService),
		mkPod("t-oos", on("oos"), terminating()), mkPod("run-oos", on("oos")),
		mkPod("t-notready", on("notready"), terminating()), mkPod("t-readyoos", on("readyoos"), terminating()),
		mkPod("t-unscheduled", terminating(), phase(corev1.PodPending, "")), mkPod("unscheduled", phase(corev1.PodPending, "")))
	gc(context.Background(), c, rc)
	if got, want := names(rc.Client), "run-oos,t-notready,t-readyoos,unscheduled"; got != want {
		t.Errorf("left %s, want %s", got, want)
	}
	if got, want := strings.Join(rc.graces, " "), "t-oos:0s t-unscheduled:0s"; got != want {
		t.Errorf("deletes %s, want %s", got, want)
	}
}

// TestStartRunsEveryPeriod: Start collects at once and on each tick of the clock.
func TestStartRunsEveryPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c, rc := newGC(clk, 0)
	rc.Add(mkPod("orphan", on("gone")))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Start(ctx) }()
	// Each step fires the ticker once the collector waits on it (no sleeps: the clock is
	// stepped only while it waits); the pod goes after the quarantine.
	deadline := time.Now().Add(10 * time.Second)
	for names(rc.Client) != "" {
		if time.Now().After(deadline) {
			t.Fatal("orphan never collected")
		}
		if clk.HasWaiters() {
			clk.Step(DefaultCheckPeriod)
		}
		runtime.Gosched()
	}
	if clk.Since(t0) < DefaultQuarantine {
		t.Errorf("collected %v after start, before the quarantine", clk.Since(t0))
	}
	cancel()
	<-done
}

// TestPassSkipsPodsItRemoved: a pass that runs before the cache has seen the removals of
// the previous one does not count those pods again (upstream's expectations): an orphan
// the collector failed and removed, still cached as Failed, does not make the next pass
// count one terminated pod too many and remove a live one.
func TestPassSkipsPodsItRemoved(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c, rc := newGC(clk, 2)
	rc.Add(mkNode("n1", true),
		mkPod("done-a", on("n1"), phase(corev1.PodSucceeded, ""), created(1*time.Second)),
		mkPod("done-b", on("n1"), phase(corev1.PodSucceeded, ""), created(2*time.Second)),
		mkPod("orphan", on("gone"), created(3*time.Second)),
	)
	gc(context.Background(), c, rc) // the orphan's node enters quarantine
	clk.Step(DefaultQuarantine + time.Second)
	gc(context.Background(), c, rc) // the orphan is failed and removed
	if got, want := names(rc.Client), "done-a,done-b"; got != want {
		t.Fatalf("after the orphan pass: %s, want %s", got, want)
	}
	// The cache has seen the orphan's Failed status, not its removal yet.
	orphan := mkPod("orphan", on("gone"), phase(corev1.PodFailed, ""), created(3*time.Second))
	for _, o := range c.cache.List("") {
		if v := o.(*controller.PodView); v.Name == "orphan" {
			orphan.UID = v.UID
		}
	}
	c.PodChanged(orphan, false)
	c.GC(context.Background())
	if got, want := names(rc.Client), "done-a,done-b"; got != want {
		t.Fatalf("a pass on the stale cache removed a terminated pod under the threshold: left %s, want %s", got, want)
	}
	// Once the cache sees the removal, the pod is forgotten.
	c.PodChanged(orphan, true)
	if len(c.removed) != 0 {
		t.Fatalf("removals still expected: %v", c.removed)
	}
}
