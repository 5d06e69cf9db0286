package tainteviction

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func secs(s int64) *int64 { return &s }

func pod(name, node string, tols ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: 1}, Spec: corev1.PodSpec{NodeName: node, Tolerations: tols}}
}

// the tolerations DefaultTolerationSeconds gives a pod, with s seconds.
func defaultTolerations(s int64) []corev1.Toleration {
	return []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(s)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(s)},
	}
}

func TestMinTolerationTime(t *testing.T) {
	unreachable := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	other := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}
	cases := []struct {
		name   string
		taints []corev1.Taint
		tols   []corev1.Toleration
		all    bool
		min    time.Duration
	}{
		{"no tolerations", []corev1.Taint{unreachable}, nil, false, 0},
		{"default 300s", []corev1.Taint{unreachable}, defaultTolerations(300), true, 300 * time.Second},
		{"forever", []corev1.Taint{unreachable}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, true, -1},
		{"negative is now", []corev1.Taint{unreachable}, defaultTolerations(-5), true, 0},
		{"least of two", []corev1.Taint{unreachable, other}, append(defaultTolerations(300), corev1.Toleration{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(20)}), true, 20 * time.Second},
		{"value mismatch", []corev1.Taint{other}, []corev1.Toleration{{Key: "dedicated", Value: "cpu"}}, false, 0},
		{"comparison operators off", []corev1.Taint{other}, []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpGt, Value: "1"}}, false, 0},
	}
	for _, tc := range cases {
		all, used := matchingTolerations(tc.taints, tc.tols)
		if all != tc.all {
			t.Errorf("%s: all %v", tc.name, all)
			continue
		}
		if all {
			if got := minTolerationTime(used); got != tc.min {
				t.Errorf("%s: min %v, want %v", tc.name, got, tc.min)
			}
		}
	}
}

// TestEvictions: a pod without tolerations goes at once, one with 30s after 30s of the
// fake clock, one tolerating forever stays; a taint removed in time cancels an eviction.
func TestEvictions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(t0)
	fc := fake.New(clk)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	forever := []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	fc.Add(node, pod("now", "n1"), pod("later", "n1", defaultTolerations(30)...), pod("never", "n1", forever...), pod("elsewhere", "n2"))
	evicted := make(chan string, 10)
	c := New(fc, Options{Clock: clk, Evicted: func(key string, err error) {
		if err != nil {
			t.Errorf("evict %s: %v", key, err)
		}
		evicted <- key
	}})
	feed := func() {
		for _, o := range fc.Objects(nodesGVR, "") {
			if c.NodeChanged(o.(*corev1.Node), false) {
				c.HandleNode(ctx, o.(*corev1.Node).Name)
			}
		}
		for _, o := range fc.Objects(podsGVR, "") {
			p := o.(*corev1.Pod)
			if c.PodChanged(p, false) {
				c.HandlePod(ctx, p.Namespace+"/"+p.Name)
			}
		}
	}
	feed()
	if len(c.Pending()) != 0 {
		t.Fatalf("pending without taints: %v", c.Pending())
	}
	taint := func(on bool) {
		n := fc.Object(nodesGVR, "", "n1").(*corev1.Node)
		n.Spec.Taints = nil
		if on {
			n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: clk.Now()}}}
		}
		if c.NodeChanged(n, false) {
			c.HandleNode(ctx, "n1")
		}
	}
	taint(true)
	if got := <-evicted; got != "ns/now" {
		t.Fatalf("evicted %s first", got)
	}
	if fc.Object(podsGVR, "ns", "now") != nil {
		t.Fatal("ns/now not deleted")
	}
	c.PodChanged(pod("now", "n1"), true) // the watch's DELETED
	c.HandlePod(ctx, "ns/now")
	pending := c.Pending()
	if len(pending) != 1 || !pending["ns/later"].Equal(t0.Add(30*time.Second)) {
		t.Fatalf("pending %v", pending)
	}
	// Removing the taint cancels; tainting again starts the 30s afresh.
	clk.Step(20 * time.Second)
	taint(false)
	if len(c.Pending()) != 0 {
		t.Fatalf("pending after the taint went: %v", c.Pending())
	}
	taint(true)
	clk.Step(20 * time.Second)
	select {
	case k := <-evicted:
		t.Fatalf("%s evicted before its toleration passed", k)
	default:
	}
	clk.Step(10 * time.Second)
	if got := <-evicted; got != "ns/later" {
		t.Fatalf("evicted %s", got)
	}
	if fc.Object(podsGVR, "ns", "later") != nil || fc.Object(podsGVR, "ns", "never") == nil || fc.Object(podsGVR, "ns", "elsewhere") == nil {
		t.Fatal("wrong pods deleted")
	}
	// The DisruptionTarget condition was written before the delete.
	var sawCondition bool
	changes, _ := fc.Changes(0)
	for _, ch := range changes {
		if p, ok := ch.Object.(*corev1.Pod); ok && p.Name == "later" {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.DisruptionTarget && cond.Reason == "DeletionByTaintManager" && cond.Message == "Taint manager: deleting due to NoExecute taint" && cond.ObservedGeneration == 1 {
					sawCondition = true
				}
			}
		}
	}
	if !sawCondition {
		t.Error("no DisruptionTarget condition written")
	}
	// The recorder writes asynchronously: wait for the three events.
	var evs []runtime.Object
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		evs = fc.Objects(corev1.SchemeGroupVersion.WithResource("events"), "ns")
		return len(evs) >= 3, nil
	})
	var msgs []string
	for _, o := range evs {
		ev := o.(*corev1.Event)
		if ev.Reason != "TaintManagerEviction" || ev.Source.Component != Component {
			t.Errorf("event %q from %q", ev.Reason, ev.Source.Component)
		}
		msgs = append(msgs, ev.Message)
	}
	want := map[string]bool{"Marking for deletion Pod ns/now": true, "Cancelling deletion of Pod ns/later": true, "Marking for deletion Pod ns/later": true}
	for _, m := range msgs {
		delete(want, m)
	}
	if len(want) != 0 {
		t.Errorf("events %q lack %v", msgs, want)
	}
}

// A pod's deletion that the watch missed (compacted away while it was down) still cancels
// its pending eviction: the index starting over from the current objects delivers it.
func TestLostPodDeletionCancelsEviction(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(t0)
	fc := fake.New(clk)
	fc.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: t0}}}}},
		pod("later", "n1", defaultTolerations(30)...), pod("other", "n1", defaultTolerations(60)...))
	c := New(fc, Options{Clock: clk})
	c.q = controller.NewQueue("test")
	defer c.q.ShutDown()
	loop := controller.NewLoop("test", fc, nil, nil, nil)
	go loop.WatchIndex(ctx, fc.Catalogue().Get(nodesGVR), c.nodes, controller.On(func(n *corev1.Node, deleted bool) {
		if c.NodeChanged(n, deleted) {
			c.q.Add("node/" + n.Name)
		}
	}))
	c.pods.Start(ctx, loop, nil)
	// The node and both pods are queued once each; handling them schedules two evictions.
	for range 3 {
		key, _ := c.q.Get()
		if name, ok := strings.CutPrefix(key, "node/"); ok {
			c.HandleNode(ctx, name)
		} else {
			c.HandlePod(ctx, strings.TrimPrefix(key, "pod/"))
		}
		c.q.Done(key)
	}
	if p := c.Pending(); len(p) != 2 || !p["ns/later"].Equal(t0.Add(30*time.Second)) {
		t.Fatalf("pending %v, want ns/later and ns/other", p)
	}
	fc.LoseDeletion(podsGVR, "ns", "later")
	// Only the lost pod needs a look: the relisted one is unchanged.
	key, _ := c.q.Get()
	if key != "pod/ns/later" {
		t.Fatalf("queued %q after the relist, want pod/ns/later", key)
	}
	c.HandlePod(ctx, "ns/later")
	c.q.Done(key)
	if p := c.Pending(); len(p) != 1 || p["ns/other"].IsZero() {
		t.Fatalf("pending %v after the lost deletion, want only ns/other", p)
	}
	if keys := c.podsOn.Keys("n1"); len(keys) != 1 || keys[0] != "ns/other" {
		t.Fatalf("pods on n1: %v, want [ns/other]", keys)
	}
}
