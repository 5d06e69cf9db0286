package controller_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

// seen records what one subscriber of the shared pods was handed.
type seen struct {
	mu      sync.Mutex
	changes []string // "old>cur" of OnChange (names, "-" for nil), "!" appended for deletions
	events  []string // the names of the handler's objects, "!" appended for deletions
}

func (s *seen) onChange(old, cur runtime.Object, deleted bool) {
	name := func(o runtime.Object) string {
		if v, ok := o.(*controller.PodView); ok {
			return v.Name
		}
		return "-"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := name(old) + ">" + name(cur)
	if deleted {
		c += "!"
	}
	s.changes = append(s.changes, c)
}

func (s *seen) handler(obj runtime.Object, deleted bool) {
	m, _ := controller.Meta(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := m.GetName()
	if deleted {
		e += "!"
	}
	s.events = append(s.events, e)
}

func (s *seen) got() (changes, events []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.changes), slices.Clone(s.events)
}

// TestSharedPods: one watch and one index of pods serve every subscriber as if each had
// its own. Each reads and is told of only the pods its filter keeps (before and after a
// change), each handler gets every event, the index keeps a view only of a pod some
// subscriber keeps, the watch starts only once the last subscriber has its handlers (the
// subscriber started last still sees the pods that were there first), and a subscriber's
// panic is its own: counted for its controller, the others handed the event.
func TestSharedPods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(clocktesting.NewFakeClock(metav1.Now().Time))
	bound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bound"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	owned := replicaSetPod("owned", "rs1")
	fc.Add(bound, owned,
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "labelled", Labels: map[string]string{"app": "web"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare"}})
	views := controller.NewPodViews()
	pods := controller.NewSharedPods(views)
	rsKind := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	var onNodes, onOwners, onLabels seen
	nodes := pods.Sub(controller.PodFilter{Bound: true}).OnChange(onNodes.onChange)
	owners := pods.Sub(controller.PodFilter{ControlledBy: []schema.GroupVersionKind{rsKind}, LabelledOrphans: true}).OnChange(onOwners.onChange)
	labelled := pods.Sub(controller.PodFilter{Labelled: true}).OnChange(onLabels.onChange)
	panics := &panicCounter{}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	go pods.Run(ctx, controller.NewLoop("informer", fc, quiet, panics, nil))
	nodes.Start(ctx, controller.NewLoop("nodes", fc, quiet, panics, nil), onNodes.handler)
	// The owners' handler panics on every event: its own loop counts the panics.
	owners.Start(ctx, controller.NewLoop("owners", fc, quiet, panics, nil), func(obj runtime.Object, deleted bool) {
		onOwners.handler(obj, deleted)
		panic("owners' handler")
	})
	// Until the last subscriber has its handlers the watch does not start: the index
	// stays unsynced however long one waits (a bounded wait: the index cannot sync).
	short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	defer stop()
	if err := nodes.WaitFor(short, 0); err == nil {
		t.Fatal("the shared pods were listed before every subscriber had started")
	}
	labelled.Start(ctx, controller.NewLoop("labelled", fc, quiet, panics, nil), onLabels.handler)
	if err := nodes.WaitFor(ctx, fc.Revision()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sub  *controller.PodSub
		want []string
	}{{nodes, []string{"bound"}}, {owners, []string{"labelled", "owned"}}, {labelled, []string{"labelled"}}} {
		if got := podNames(c.sub.List("")); !slices.Equal(got, c.want) {
			t.Errorf("a subscriber lists %v, want %v", got, c.want)
		}
	}
	if owners.Get("ns", "bound") != nil || nodes.Get("ns", "owned") != nil || nodes.Get("ns", "bound") == nil {
		t.Error("Get shows a subscriber a pod it does not keep, or hides one it keeps")
	}
	if got := podNames(owners.Controlled("ns", "rs1")); !slices.Equal(got, []string{"owned"}) {
		t.Errorf("Controlled(rs1) = %v", got)
	}
	if got := podNames(owners.Controlled("ns", "")); !slices.Equal(got, []string{"labelled"}) {
		t.Errorf("the orphans kept by the owners' subscriber: %v, want the labelled one only", got)
	}
	// Three pods kept by some subscriber have a view; the bare one, kept by none, has not.
	// The owned and the labelled pods' views hold a shape each; the bound one has no part
	// to share.
	if n, shapes := pods.Len(), views.Len(); n != 3 || shapes != 2 {
		t.Errorf("%d views and %d shapes, want 3 and 2", n, shapes)
	}
	// The pod is bound: the nodes' subscriber is told of it as new, the others of nothing
	// (the owners keep the orphan as before); every handler gets the event.
	res := fc.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	if _, err := fc.Update(ctx, res, "ns", "labelled", "", func(cur runtime.Object) (runtime.Object, error) {
		p := cur.(*corev1.Pod).DeepCopy()
		p.Spec.NodeName = "n2"
		return p, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.Delete(ctx, res, "ns", "bound", metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := nodes.WaitFor(ctx, fc.Revision()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		s             *seen
		initial       int // how many of the changes are the initial pods' (in no order)
		changes, evts []string
	}{
		{"nodes", &onNodes, 1, []string{"->bound", "->labelled", "bound>bound!"}, []string{"bare", "bound", "labelled", "owned", "labelled", "bound!"}},
		{"owners", &onOwners, 2, []string{"->labelled", "->owned", "labelled>labelled"}, []string{"bare", "bound", "labelled", "owned", "labelled", "bound!"}},
		{"labelled", &onLabels, 1, []string{"->labelled", "labelled>labelled"}, []string{"bare", "bound", "labelled", "owned", "labelled", "bound!"}},
	} {
		changes, events := c.s.got()
		if !slices.Equal(sortedFirst(changes, c.initial), sortedFirst(c.changes, c.initial)) {
			t.Errorf("%s was told of changes %v, want %v", c.name, changes, c.changes)
		}
		if !slices.Equal(sortedFirst(events, 4), sortedFirst(c.evts, 4)) {
			t.Errorf("%s handled %v, want %v", c.name, events, c.evts)
		}
	}
	if n := panics.count("owners"); n != 6 {
		t.Errorf("the owners' handler panicked %d times on its loop, want 6", n)
	}
	if n := panics.count("nodes") + panics.count("labelled") + panics.count("informer"); n != 0 {
		t.Errorf("%d panics counted for other loops", n)
	}
	// A subscription made once the shared pods run would miss what came before it.
	defer func() {
		if recover() == nil {
			t.Error("a subscription after Run was accepted")
		}
	}()
	pods.Sub(controller.PodFilter{Bound: true})
}

// sortedFirst sorts the first n items of a copy of s (the initial objects, delivered in
// no order), leaving the rest in order.
func sortedFirst(s []string, n int) []string {
	c := slices.Clone(s)
	if n > len(c) {
		n = len(c)
	}
	slices.Sort(c[:n])
	return c
}

// TestSharedPodsDetailed: a subscriber reading its pods in detail (the Job and DaemonSet
// controllers) is served by the one shared index: the views of the pods its kind controls
// carry their annotations, affinity, conditions and container statuses, one view shared
// with every other subscriber keeping the pod; the orphans it keeps, and the pods only
// others keep, stay plain views. A pod adopted by a Job is detailed from the change that
// adopts it, so the controller never reads it in two caches.
func TestSharedPodsDetailed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(clocktesting.NewFakeClock(metav1.Now().Time))
	yes := true
	jobRef := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "j1", Controller: &yes}}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	indexed := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "indexed", Labels: map[string]string{"job": "j"}, OwnerReferences: jobRef,
			Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": "3"}, Finalizers: []string{"batch.kubernetes.io/job-tracking"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.PodSpec{NodeName: "n1", Affinity: affinity},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", RestartCount: 2, Ready: true}}},
	}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orphan", Labels: map[string]string{"job": "j"}, Annotations: map[string]string{"a": "b"}}}
	fc.Add(indexed, orphan)
	views := controller.NewPodViews()
	pods := controller.NewSharedPods(views)
	jobKind := schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	jobs := pods.Sub(controller.PodFilter{ControlledBy: []schema.GroupVersionKind{jobKind}, LabelledOrphans: true, Detailed: true})
	labelled := pods.Sub(controller.PodFilter{Labelled: true})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	go pods.Run(ctx, controller.NewLoop("informer", fc, quiet, &panicCounter{}, nil))
	jobs.Start(ctx, controller.NewLoop("jobs", fc, quiet, &panicCounter{}, nil), nil)
	labelled.Start(ctx, controller.NewLoop("labelled", fc, quiet, &panicCounter{}, nil), nil)
	if err := jobs.WaitFor(ctx, fc.Revision()); err != nil {
		t.Fatal(err)
	}
	v, ok := jobs.Get("ns", "indexed").(*controller.PodView)
	if !ok || !v.Detailed() || labelled.Get("ns", "indexed") != v {
		t.Fatalf("the Job's pod: %#v, want one detailed view for both subscribers", jobs.Get("ns", "indexed"))
	}
	p := v.Pod()
	if p.Annotations["batch.kubernetes.io/job-completion-index"] != "3" || len(p.Finalizers) != 1 || p.ManagedFields != nil ||
		p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil || p.Spec.NodeName != "n1" || len(p.Status.Conditions) != 2 ||
		len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready || p.Labels["job"] != "j" || p.ResourceVersion == "" {
		t.Fatalf("the detailed pod lacks what the Job reads: %+v", p)
	}
	if o := jobs.Get("ns", "orphan").(*controller.PodView); o.Detailed() || o.Pod().Annotations != nil {
		t.Fatal("an orphan's view carries detail")
	}
	// The orphan is adopted: from this change on its view is detailed.
	res := fc.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	if _, err := fc.Update(ctx, res, "ns", "orphan", "", func(cur runtime.Object) (runtime.Object, error) {
		p := cur.(*corev1.Pod).DeepCopy()
		p.OwnerReferences = jobRef
		return p, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := jobs.WaitFor(ctx, fc.Revision()); err != nil {
		t.Fatal(err)
	}
	if got := podNames(jobs.Controlled("ns", "j1")); !slices.Equal(got, []string{"indexed", "orphan"}) {
		t.Fatalf("the Job's pods after adoption: %v", got)
	}
	if o := jobs.Get("ns", "orphan").(*controller.PodView); !o.Detailed() || o.Pod().Annotations["a"] != "b" {
		t.Fatal("an adopted pod's view carries no detail")
	}
	if len(jobs.Controlled("ns", "")) != 0 {
		t.Fatal("the adopted pod is still an orphan")
	}
}
