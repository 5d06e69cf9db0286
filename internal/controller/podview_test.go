package controller

import (
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func viewTestPod(rv string) *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	now := metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: rv, Generation: 2,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"big": "x"}, DeletionTimestamp: &now,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.PodSpec{NodeName: "n1", Hostname: "h", Subdomain: "s",
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}},
			Containers: []corev1.Container{
				{Name: "app", Image: "nginx", Command: []string{"run"}, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}},
				{Name: "noports", Image: "busybox"},
			},
			InitContainers: []corev1.Container{
				{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}}},
				{Name: "setup", Ports: []corev1.ContainerPort{{Name: "ignored", ContainerPort: 1}}},
			},
			Volumes: []corev1.Volume{{Name: "v"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Reason: "r", PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	}
}

// TestPodView: a view keeps what the pod-watching controllers read and nothing else, and
// the pod it makes holds exactly that.
func TestPodView(t *testing.T) {
	p := viewTestPod("5")
	always := corev1.ContainerRestartPolicyAlways
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "5", Generation: 2,
			Labels: p.Labels, DeletionTimestamp: p.DeletionTimestamp},
		Spec: corev1.PodSpec{NodeName: "n1", Hostname: "h", Subdomain: "s", Tolerations: p.Spec.Tolerations,
			Containers:     []corev1.Container{{Name: "app", Ports: p.Spec.Containers[0].Ports}},
			InitContainers: []corev1.Container{{Name: "sidecar", RestartPolicy: &always, Ports: p.Spec.InitContainers[0].Ports}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Reason: "r", PodIP: "10.0.0.1", PodIPs: p.Status.PodIPs,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	}
	v := ViewOf(p)
	if got := v.Pod(); !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("view's pod:\n%+v\nwant:\n%+v", got, want)
	}
	if got := CachedPod(v); !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("CachedPod of a view:\n%+v", got)
	}
	if CachedPod(p) != p || CachedPod(nil) != nil {
		t.Fatal("CachedPod of a pod or of nothing")
	}
	// A pod without a Ready condition: none in the view's pod.
	p.Status.Conditions = p.Status.Conditions[:1]
	if got := ViewOf(p).Pod().Status.Conditions; got != nil {
		t.Fatalf("conditions %v, want none", got)
	}
}

// TestPodViewsShared: the controllers share one view per pod version; a new version gets
// a new view; a nil PodViews makes views without sharing.
func TestPodViewsShared(t *testing.T) {
	views := NewPodViews()
	a, b := views.View(viewTestPod("5")), views.View(viewTestPod("5"))
	if a != b {
		t.Fatal("two views of one pod version")
	}
	c := views.View(viewTestPod("6"))
	if c == a || c.ResourceVersion != "6" {
		t.Fatalf("a new version shares the old view: %v", c.ResourceVersion)
	}
	if n := views.Len(); n != 2 {
		t.Fatalf("views held: %d, want 2", n)
	}
	var none *PodViews
	if x, y := none.View(viewTestPod("5")), none.View(viewTestPod("5")); x == y || !equality.Semantic.DeepEqual(x.Pod(), y.Pod()) {
		t.Fatal("a nil PodViews shares views or makes different ones")
	}
}

// TestPodViewsIndexOf: an index keeps views only of the pods its filter keeps; a pod no
// index keeps gets no view at all, and one leaving the filter leaves the index.
func TestPodViewsIndexOf(t *testing.T) {
	views := NewPodViews()
	bound := views.IndexOf(Bound)
	pending := viewTestPod("5")
	pending.Spec.NodeName = ""
	bound.Apply(pending, false)
	if bound.Get(pending.Namespace, pending.Name) != nil || views.Len() != 0 {
		t.Fatalf("an unbound pod is kept (%d views)", views.Len())
	}
	running := viewTestPod("6")
	running.Spec.NodeName = "n1"
	bound.Apply(running, false)
	if v, ok := bound.Get(running.Namespace, running.Name).(*PodView); !ok || v.NodeName != "n1" || views.Len() != 1 {
		t.Fatalf("the bound pod's view: %v (%d views)", bound.Get(running.Namespace, running.Name), views.Len())
	}
	all := views.Index()
	all.Apply(pending, false)
	if all.Get(pending.Namespace, pending.Name) == nil {
		t.Fatal("Index keeps every pod")
	}
}

// TestPodViewPodShared: the pod a view makes is made once while anything holds it (a
// workload controller reads every pod of its owner on each sync), shared by the view's
// copies, and made again, the same, once it was collected.
func TestPodViewPodShared(t *testing.T) {
	v := ViewOf(viewTestPod("5"))
	a := v.Pod()
	if b := v.Pod(); b != a {
		t.Fatal("a view made a second pod while the first is held")
	}
	if c := v.DeepCopyObject().(*PodView).Pod(); c != a {
		t.Fatal("a copy of the view made a pod of its own")
	}
	want := *a
	collected := make(chan struct{})
	runtime.AddCleanup(a, func(ch chan struct{}) { close(ch) }, collected)
	a = nil
	gone := false
	for i := 0; i < 20 && !gone; i++ {
		runtime.GC()
		select {
		case <-collected:
			gone = true
		default:
			runtime.Gosched()
		}
	}
	if !gone {
		t.Fatal("the made pod is still reachable after 20 collections: the view holds it")
	}
	if again := v.Pod(); !equality.Semantic.DeepEqual(*again, want) {
		t.Fatalf("made again: %+v, want %+v", again, want)
	}
}

// TestPodViewsDetailed: a view shared without detail is made again when a pod is asked in
// detail, and the detailed one is what both kinds of holders share from then on.
func TestPodViewsDetailed(t *testing.T) {
	views := NewPodViews()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u", ResourceVersion: "7", Annotations: map[string]string{"a": "b"}}}
	plain := views.View(p)
	if plain.Detailed() {
		t.Fatal("View made a detailed view")
	}
	detailed := views.Detailed(p)
	if !detailed.Detailed() || detailed == plain || detailed.Pod().Annotations["a"] != "b" {
		t.Fatal("Detailed returned the plain view")
	}
	if views.View(p) != detailed || views.Detailed(p) != detailed {
		t.Fatal("the detailed view is not the shared one")
	}
	runtime.KeepAlive(plain)
}
