package controller

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// TestPodViewRarePart: the hostname, subdomain and pod IPs come back from a view as the
// pod had them, whether the view holds them apart (a hostname, dual-stack IPs, a pod IP
// without pod IPs) or makes them up from the pod IP (one IP: the view of most running
// pods, which holds nothing apart).
func TestPodViewRarePart(t *testing.T) {
	for _, tc := range []struct {
		name                string
		hostname, subdomain string
		podIP               string
		podIPs              []corev1.PodIP
		apart               bool
	}{
		{name: "pending"},
		{name: "one IP", podIP: "10.0.0.1", podIPs: []corev1.PodIP{{IP: "10.0.0.1"}}},
		{name: "dual-stack", podIP: "10.0.0.1", podIPs: []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}, apart: true},
		{name: "pod IP without pod IPs", podIP: "10.0.0.1", apart: true},
		{name: "pod IPs without pod IP", podIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, apart: true},
		{name: "pod IPs naming another IP", podIP: "10.0.0.2", podIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, apart: true},
		{name: "hostname and subdomain", hostname: "web-0", subdomain: "web", podIP: "10.0.0.1", podIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, apart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
				Spec:   corev1.PodSpec{NodeName: "n1", Hostname: tc.hostname, Subdomain: tc.subdomain},
				Status: corev1.PodStatus{PodIP: tc.podIP, PodIPs: tc.podIPs}}
			v := ViewOf(p)
			if (v.rare != nil) != tc.apart {
				t.Fatalf("held apart: %v, want %v", v.rare != nil, tc.apart)
			}
			got := v.Pod()
			if got.Spec.Hostname != tc.hostname || got.Spec.Subdomain != tc.subdomain || got.Status.PodIP != tc.podIP ||
				!reflect.DeepEqual(got.Status.PodIPs, tc.podIPs) {
				t.Fatalf("view's pod: hostname %q subdomain %q podIP %q podIPs %v", got.Spec.Hostname, got.Spec.Subdomain, got.Status.PodIP, got.Status.PodIPs)
			}
		})
	}
}

// TestPodViewsShared: views of pods alike share their labels, owner references,
// tolerations and ported containers, whatever the pods' other fields; pods differing in
// any of those share nothing; a nil PodViews shares nothing; a shape is forgotten once no
// view holds it.
func TestPodViewsShared(t *testing.T) {
	views := NewPodViews()
	a := views.View(viewTestPod("5"))
	other := viewTestPod("6")
	other.Name, other.UID, other.Spec.NodeName = "web-2", "u2", "n2"
	b := views.View(other)
	if a == b || a.Name == b.Name || !sharesParts(a, b) || views.Len() != 1 {
		t.Fatalf("two pods alike: parts shared %v, %d shapes held, want one", sharesParts(a, b), views.Len())
	}
	if !equality.Semantic.DeepEqual(b.Pod(), ViewOf(other).Pod()) {
		t.Fatal("a view sharing its parts reads other than the view made alone")
	}
	for name, change := range map[string]func(p *corev1.Pod){
		"label value":   func(p *corev1.Pod) { p.Labels = map[string]string{"app": "api"} },
		"another label": func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web", "tier": "x"} },
		"owner": func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: "r"}}
		},
		"toleration":        func(p *corev1.Pod) { p.Spec.Tolerations[0].Key = "other" },
		"toleration period": func(p *corev1.Pod) { s := int64(300); p.Spec.Tolerations[0].TolerationSeconds = &s },
		"port": func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 81}}
		},
		"init container": func(p *corev1.Pod) { p.Spec.InitContainers = nil },
	} {
		p := viewTestPod("7")
		change(p)
		if v := views.View(p); v.shape == a.shape || v.shape == nil {
			t.Errorf("%s: a pod unlike the others shares their parts", name)
		}
	}
	var none *PodViews
	if x, y := none.View(viewTestPod("5")), none.View(viewTestPod("5")); x.shape != nil || y.shape != nil || !equality.Semantic.DeepEqual(x.Pod(), y.Pod()) {
		t.Fatal("a nil PodViews shares parts or makes different views")
	}
	// Once the views are collected, their shapes are forgotten.
	a, b = nil, nil
	for i := 0; i < 20 && views.Len() > 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := views.Len(); n != 0 {
		t.Fatalf("%d shapes held after 20 collections with no view left", n)
	}
}

// sharesParts reports whether two views hold the same shape, labels map and slices.
func sharesParts(a, b *PodView) bool {
	same := func(x, y any) bool {
		vx, vy := reflect.ValueOf(x), reflect.ValueOf(y)
		return vx.Len() > 0 && vx.Pointer() == vy.Pointer()
	}
	return a.shape != nil && a.shape == b.shape && same(a.Labels, b.Labels) && same(a.Tolerations, b.Tolerations) &&
		same(a.Containers, b.Containers) && same(a.InitContainers, b.InitContainers)
}

// TestShapeKey: two views' keys are equal exactly when their shared parts are: every field
// of every part changes the key, the labels' order and a nil or an empty part do not.
// Each API type the key encodes has the fields it knows: a field added to one of them
// (a new Kubernetes version) fails here until the key encodes it.
func TestShapeKey(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[metav1.OwnerReference](): 6, reflect.TypeFor[corev1.Toleration](): 5, reflect.TypeFor[corev1.ContainerPort](): 5,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, the key encodes %d", typ, typ.NumField(), n)
		}
	}
	key := func(v *PodView) string { k, _ := shapeKey(nil, nil, v); return string(k) }
	yes, no, secs, always := true, false, int64(30), corev1.ContainerRestartPolicyAlways
	base := func() *PodView {
		return &PodView{
			Labels:          map[string]string{"a": "1", "b": "2"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: &yes, BlockOwnerDeletion: &yes}},
			Tolerations:     []corev1.Toleration{{Key: "k", Operator: "Exists", Value: "v", Effect: "NoExecute", TolerationSeconds: &secs}},
			Containers:      []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{Name: "p", HostPort: 1, ContainerPort: 2, Protocol: "TCP", HostIP: "h"}}}},
			InitContainers:  []corev1.Container{{Name: "i", RestartPolicy: &always}},
		}
	}
	want := key(base())
	reordered := base()
	reordered.Labels = map[string]string{"b": "2", "a": "1"}
	if key(reordered) != want {
		t.Error("the labels' order changes the key")
	}
	if key(&PodView{Labels: map[string]string{}, Tolerations: []corev1.Toleration{}}) != key(&PodView{}) {
		t.Error("empty and nil parts have different keys")
	}
	changes := map[string]func(v *PodView){
		"label key":              func(v *PodView) { v.Labels = map[string]string{"a": "1", "c": "2"} },
		"label value":            func(v *PodView) { v.Labels = map[string]string{"a": "1", "b": "3"} },
		"label split":            func(v *PodView) { v.Labels = map[string]string{"a": "12", "b": ""} },
		"owner API version":      func(v *PodView) { v.OwnerReferences[0].APIVersion = "apps/v2" },
		"owner kind":             func(v *PodView) { v.OwnerReferences[0].Kind = "Job" },
		"owner name":             func(v *PodView) { v.OwnerReferences[0].Name = "rs2" },
		"owner UID":              func(v *PodView) { v.OwnerReferences[0].UID = "u2" },
		"owner controller":       func(v *PodView) { v.OwnerReferences[0].Controller = &no },
		"owner controller unset": func(v *PodView) { v.OwnerReferences[0].Controller = nil },
		"owner blocking":         func(v *PodView) { v.OwnerReferences[0].BlockOwnerDeletion = nil },
		"no owner":               func(v *PodView) { v.OwnerReferences = nil },
		"toleration key":         func(v *PodView) { v.Tolerations[0].Key = "k2" },
		"toleration operator":    func(v *PodView) { v.Tolerations[0].Operator = "Equal" },
		"toleration value":       func(v *PodView) { v.Tolerations[0].Value = "v2" },
		"toleration effect":      func(v *PodView) { v.Tolerations[0].Effect = "NoSchedule" },
		"toleration seconds":     func(v *PodView) { s := int64(31); v.Tolerations[0].TolerationSeconds = &s },
		"toleration forever":     func(v *PodView) { v.Tolerations[0].TolerationSeconds = nil },
		"container name":         func(v *PodView) { v.Containers[0].Name = "d" },
		"port name":              func(v *PodView) { v.Containers[0].Ports[0].Name = "q" },
		"host port":              func(v *PodView) { v.Containers[0].Ports[0].HostPort = 9 },
		"container port":         func(v *PodView) { v.Containers[0].Ports[0].ContainerPort = 9 },
		"protocol":               func(v *PodView) { v.Containers[0].Ports[0].Protocol = "UDP" },
		"host IP":                func(v *PodView) { v.Containers[0].Ports[0].HostIP = "g" },
		"no ports":               func(v *PodView) { v.Containers[0].Ports = nil },
		"restart policy":         func(v *PodView) { v.InitContainers[0].RestartPolicy = nil },
		"containers swapped":     func(v *PodView) { v.Containers, v.InitContainers = v.InitContainers, v.Containers },
	}
	seen := map[string]string{want: "the base"}
	for name, change := range changes {
		v := base()
		change(v)
		k := key(v)
		if prev, ok := seen[k]; ok {
			t.Errorf("%s: the key of %s", name, prev)
		}
		seen[k] = name
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
	if bound.Get(pending.Namespace, pending.Name) != nil || bound.Len() != 0 {
		t.Fatalf("an unbound pod is kept (%d views)", bound.Len())
	}
	running := viewTestPod("6")
	running.Spec.NodeName = "n1"
	bound.Apply(running, false)
	if v, ok := bound.Get(running.Namespace, running.Name).(*PodView); !ok || v.NodeName != "n1" || bound.Len() != 1 {
		t.Fatalf("the bound pod's view: %v (%d views)", bound.Get(running.Namespace, running.Name), bound.Len())
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

// TestPodViewsDetailed: a detailed view carries its pod's detail with the parts it shares
// with plain views of pods alike; a plain view carries none.
func TestPodViewsDetailed(t *testing.T) {
	views := NewPodViews()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u", ResourceVersion: "7",
		Annotations: map[string]string{"a": "b"}, Labels: map[string]string{"job": "j"}}}
	plain := views.View(p)
	if plain.Detailed() || plain.Pod().Annotations != nil {
		t.Fatal("View made a detailed view")
	}
	alike := p.DeepCopy()
	alike.Name = "q"
	detailed := views.Detailed(alike)
	if !detailed.Detailed() || detailed.Pod().Annotations["a"] != "b" || detailed.Pod().Name != "q" {
		t.Fatal("Detailed made a plain view")
	}
	if reflect.ValueOf(detailed.Pod().Labels).Pointer() != reflect.ValueOf(plain.Labels).Pointer() {
		t.Fatal("the detailed pod's labels are not the ones its view shares")
	}
}

// BenchmarkPodViewsHeld reports the heap the shared index of pods holds per pod, for
// 20,000 bound pods of one template (each decoded apart: maps and slices of its own), as a
// cluster's running pods of a workload are: with views sharing nothing, and through
// PodViews. go test ./internal/controller -run '^$' -bench PodViewsHeld -benchtime 3x
func BenchmarkPodViewsHeld(b *testing.B) {
	const n = 20000
	secs := int64(300)
	pod := func(i int) *corev1.Pod {
		s := secs
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("web-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
				ResourceVersion: strconv.Itoa(100 + i), Labels: map[string]string{"app": "web", "pod-template-hash": "5d4f8b7c9"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d4f8b7c9", UID: "rs-uid", Controller: new(true), BlockOwnerDeletion: new(true)}}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%100),
				Containers: []corev1.Container{{Name: "web", Image: "nginx", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}}}},
				Tolerations: []corev1.Toleration{
					{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s},
					{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	for _, c := range []struct {
		name  string
		views func() *PodViews
	}{{"alone", func() *PodViews { return nil }}, {"shared", NewPodViews}} {
		b.Run(c.name, func(b *testing.B) {
			var held int64
			for b.Loop() {
				s := NewSharedPods(c.views())
				s.Sub(PodFilter{Bound: true})
				s.Sub(PodFilter{ControlledBy: []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "ReplicaSet"}}})
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range n {
					s.x.Apply(pod(i), false)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				if s.Len() != n {
					b.Fatalf("%d pods held, want %d", s.Len(), n)
				}
				held += int64(after.HeapAlloc) - int64(before.HeapAlloc)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(held)/float64(b.N)/n, "B/pod-held")
		})
	}
}
