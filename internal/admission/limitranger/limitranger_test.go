package limitranger

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota/quotatest"
)

// fakeReader lists LimitRanges of one namespace; err, when set, is returned by every call.
type fakeReader struct {
	ranges []*corev1.LimitRange
	err    error
	lists  int
}

func (f *fakeReader) Get(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, errors.New("Get not expected")
}

func (f *fakeReader) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	f.lists++
	if f.err != nil {
		return nil, f.err
	}
	if gvr != limitRangeGVR {
		return nil, errors.New("unexpected resource " + gvr.String())
	}
	var out []runtime.Object
	for _, lr := range f.ranges {
		if lr.Namespace == ns {
			out = append(out, lr)
		}
	}
	return out, nil
}

// rl parses "cpu=1,memory=2Gi"-style pairs.
func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func limitRange(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func podOf(cs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: cs}}
}

var (
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	podGVK = corev1.SchemeGroupVersion.WithKind("Pod")
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	pvcGVK = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
)

func createPod(p *corev1.Pod) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Resource: podGVR, Kind: podGVK, Namespace: "ns", Name: p.Name, Object: p}
}

// admitThenValidate runs the plugin as the chain does.
func admitThenValidate(p *Plugin, a *admission.Attributes) error {
	if err := p.Admit(context.Background(), a); err != nil {
		return err
	}
	return p.Validate(context.Background(), a)
}

func TestPodConstraints(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name    string
		lr      *corev1.LimitRange
		pod     *corev1.Pod
		wantMsg string // empty: admitted
	}{
		{"container max limit",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "1"), rl("cpu", "3"))),
			`pods "p" is forbidden: maximum cpu usage per Container is 2, but limit is 3`},
		{"container max request",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "3"), rl("cpu", "2"))),
			`pods "p" is forbidden: maximum cpu usage per Container is 2, but request is 3`},
		{"container max without limit",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "1"), nil)),
			`pods "p" is forbidden: maximum cpu usage per Container is 2.  No limit is specified`},
		{"container min request",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("memory", "10Mi")}),
			podOf(container("app", rl("memory", "5Mi"), rl("memory", "20Mi"))),
			`pods "p" is forbidden: minimum memory usage per Container is 10Mi, but request is 5Mi`},
		{"container min limit",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("cpu", "100m")}),
			podOf(container("app", rl("cpu", "200m"), rl("cpu", "50m"))),
			`pods "p" is forbidden: minimum cpu usage per Container is 100m, but limit is 50m`},
		{"container min without request",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("cpu", "100m")}),
			podOf(container("app", nil, nil)),
			`pods "p" is forbidden: minimum cpu usage per Container is 100m.  No request is specified`},
		{"ratio exceeded",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "1"), rl("cpu", "4"))),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000`},
		{"fractional ratio exceeded",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("memory", "1500m")}),
			podOf(container("app", rl("memory", "300Mi"), rl("memory", "500Mi"))),
			`pods "p" is forbidden: memory max limit to request ratio per Container is 1500m, but provided ratio is 1.666667`},
		{"ratio at the maximum",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "500m"), rl("cpu", "1"))), ""},
		{"ratio without request",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}),
			podOf(container("app", nil, rl("cpu", "1"))),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but no request is specified or request is 0`},
		{"ratio with zero request",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "0"), rl("cpu", "1"))),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but no request is specified or request is 0`},
		{"ratio without limit",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}),
			podOf(container("app", rl("cpu", "1"), nil)),
			`pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0`},
		{"several violations are aggregated in order",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2"), Min: rl("memory", "10Mi")}),
			podOf(container("app", rl("cpu", "1", "memory", "5Mi"), rl("cpu", "3", "memory", "5Mi"))),
			`pods "p" is forbidden: [minimum memory usage per Container is 10Mi, but request is 5Mi, maximum cpu usage per Container is 2, but limit is 3]`},
		{"identical violations are reported once",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")}),
			podOf(container("a", rl("cpu", "1"), rl("cpu", "3")), container("b", rl("cpu", "1"), rl("cpu", "3"))),
			`pods "p" is forbidden: maximum cpu usage per Container is 2, but limit is 3`},
		{"init containers are checked",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")}),
			func() *corev1.Pod {
				p := podOf(container("app", rl("cpu", "1"), rl("cpu", "1")))
				p.Spec.InitContainers = []corev1.Container{container("init", rl("cpu", "1"), rl("cpu", "5"))}
				return p
			}(),
			`pods "p" is forbidden: maximum cpu usage per Container is 2, but limit is 5`},
		{"pod max sums containers",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "1Gi")}),
			podOf(container("a", rl("memory", "100Mi"), rl("memory", "600Mi")), container("b", rl("memory", "100Mi"), rl("memory", "600Mi"))),
			`pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi`},
		{"pod max without a limit on every container",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "4")}),
			podOf(container("a", rl("cpu", "1"), nil), container("b", rl("cpu", "1"), rl("cpu", "1"))), ""},
		{"pod min counts the largest init container",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "2")}),
			func() *corev1.Pod {
				p := podOf(container("app", rl("cpu", "1"), rl("cpu", "1")))
				p.Spec.InitContainers = []corev1.Container{container("init", rl("cpu", "3"), rl("cpu", "3"))}
				return p
			}(),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 3`},
		{"sidecars add up",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "2")}),
			func() *corev1.Pod {
				p := podOf(container("app", rl("cpu", "1"), rl("cpu", "1500m")))
				side := container("side", rl("cpu", "500m"), rl("cpu", "1"))
				side.RestartPolicy = &always
				p.Spec.InitContainers = []corev1.Container{side}
				return p
			}(),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 2500m`},
		{"pod-level resources replace the aggregate",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "2")}),
			func() *corev1.Pod {
				p := podOf(container("app", rl("cpu", "500m"), rl("cpu", "1")))
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "1"), Limits: rl("cpu", "3")}
				return p
			}(),
			`pods "p" is forbidden: maximum cpu usage per Pod is 2, but limit is 3`},
		{"pod min request",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Min: rl("cpu", "1")}),
			podOf(container("a", rl("cpu", "200m"), rl("cpu", "200m")), container("b", rl("cpu", "300m"), rl("cpu", "300m"))),
			`pods "p" is forbidden: minimum cpu usage per Pod is 1, but request is 500m`},
		{"within every bound",
			limitRange(
				corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("cpu", "100m"), Max: rl("cpu", "2"), MaxLimitRequestRatio: rl("cpu", "4")},
				corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "4")},
				corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "1Gi")}),
			podOf(container("a", rl("cpu", "500m"), rl("cpu", "2")), container("b", rl("cpu", "1"), rl("cpu", "2"))), ""},
		{"generateName names the refusal",
			limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")}),
			func() *corev1.Pod {
				p := podOf(container("app", rl("cpu", "1"), rl("cpu", "3")))
				p.Name, p.GenerateName = "", "web-"
				return p
			}(),
			`pods "web-" is forbidden: maximum cpu usage per Container is 2, but limit is 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(&fakeReader{ranges: []*corev1.LimitRange{tt.lr}})
			err := admitThenValidate(p, createPod(tt.pod))
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("got %v, want admitted", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tt.wantMsg {
				t.Fatalf("got %v\nwant 403 %s", err, tt.wantMsg)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	lr := limitRange(
		corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "10")},
		corev1.LimitRangeItem{
			Type:           corev1.LimitTypeContainer,
			Default:        rl("cpu", "500m", "memory", "256Mi"),
			DefaultRequest: rl("cpu", "100m", "memory", "128Mi"),
		})
	pod := podOf(container("app", nil, nil), container("sized", rl("cpu", "1"), rl("memory", "1Gi")))
	pod.Spec.InitContainers = []corev1.Container{container("init", nil, rl("cpu", "200m"))}
	pod.Annotations = map[string]string{"keep": "me"}

	if err := admitThenValidate(New(&fakeReader{ranges: []*corev1.LimitRange{lr}}), createPod(pod)); err != nil {
		t.Fatal(err)
	}
	wantAnnotations := map[string]string{
		"keep": "me",
		"kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; " +
			"memory request for container sized; cpu limit for container sized; " +
			"cpu, memory request for init container init; memory limit for init container init",
	}
	if !reflect.DeepEqual(pod.Annotations, wantAnnotations) {
		t.Errorf("annotations = %q\nwant %q", pod.Annotations, wantAnnotations)
	}
	want := []corev1.ResourceRequirements{
		{Requests: rl("cpu", "100m", "memory", "128Mi"), Limits: rl("cpu", "500m", "memory", "256Mi")},
		{Requests: rl("cpu", "1", "memory", "128Mi"), Limits: rl("cpu", "500m", "memory", "1Gi")},
		{Requests: rl("cpu", "100m", "memory", "128Mi"), Limits: rl("cpu", "200m", "memory", "256Mi")},
	}
	got := []corev1.ResourceRequirements{pod.Spec.Containers[0].Resources, pod.Spec.Containers[1].Resources, pod.Spec.InitContainers[0].Resources}
	for i := range want {
		if !equalLists(got[i].Requests, want[i].Requests) || !equalLists(got[i].Limits, want[i].Limits) {
			t.Errorf("container %d resources = %v, want %v", i, got[i], want[i])
		}
	}
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if other, ok := b[name]; !ok || q.Cmp(other) != 0 || q.String() != other.String() {
			return false
		}
	}
	return true
}

func TestNoDefaultsNoAnnotation(t *testing.T) {
	lr := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")})
	pod := podOf(container("app", rl("cpu", "1"), rl("cpu", "1")))
	if err := admitThenValidate(New(&fakeReader{ranges: []*corev1.LimitRange{lr}}), createPod(pod)); err != nil {
		t.Fatal(err)
	}
	if pod.Annotations != nil {
		t.Errorf("annotations = %v, want none", pod.Annotations)
	}
}

func TestDefaultsAreCheckedInValidate(t *testing.T) {
	lr := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: rl("cpu", "3"), DefaultRequest: rl("cpu", "1"), Max: rl("cpu", "2")})
	pod := podOf(container("app", nil, nil))
	p := New(&fakeReader{ranges: []*corev1.LimitRange{lr}})
	a := createPod(pod)
	if err := p.Admit(context.Background(), a); err != nil {
		t.Fatalf("Admit() = %v, want nil (the mutating phase never refuses for bounds)", err)
	}
	err := p.Validate(context.Background(), a)
	want := `pods "p" is forbidden: maximum cpu usage per Container is 2, but limit is 3`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("Validate() = %v, want %s", err, want)
	}
}

func TestSeveralLimitRanges(t *testing.T) {
	first := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: rl("cpu", "100m")})
	first.Name = "a"
	second := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: rl("memory", "64Mi"), Min: rl("cpu", "200m")})
	second.Name = "b"
	pod := podOf(container("app", nil, nil))
	err := admitThenValidate(New(&fakeReader{ranges: []*corev1.LimitRange{first, second}}), createPod(pod))
	want := `pods "p" is forbidden: minimum cpu usage per Container is 200m, but request is 100m`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	// Each LimitRange rewrites the annotation with what it set itself, as upstream.
	if got := pod.Annotations[Annotation]; got != "LimitRanger plugin set: memory request for container app" {
		t.Errorf("annotation = %q", got)
	}
}

func TestPVC(t *testing.T) {
	lr := limitRange(
		corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")},
		corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")})
	pvc := func(requests, limits corev1.ResourceList) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
			Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: requests, Limits: limits}},
		}
	}
	tests := []struct {
		name    string
		op      admission.Operation
		pvc     *corev1.PersistentVolumeClaim
		wantMsg string
	}{
		{"within bounds", admission.Create, pvc(rl("storage", "5Gi"), nil), ""},
		{"below min", admission.Create, pvc(rl("storage", "500Mi"), nil),
			`persistentvolumeclaims "c" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`},
		{"above max", admission.Create, pvc(rl("storage", "20Gi"), nil),
			`persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`},
		{"limits are ignored", admission.Create, pvc(rl("storage", "5Gi"), rl("storage", "50Gi")), ""},
		{"no request", admission.Create, pvc(nil, nil),
			`persistentvolumeclaims "c" is forbidden: [minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]`},
		{"resize above max", admission.Update, pvc(rl("storage", "11Gi"), nil),
			`persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 11Gi`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tt.op, Resource: pvcGVR, Kind: pvcGVK, Namespace: "ns", Name: "c", Object: tt.pvc}
			if tt.op == admission.Update {
				a.OldObject = pvc(rl("storage", "5Gi"), nil)
			}
			err := admitThenValidate(New(&fakeReader{ranges: []*corev1.LimitRange{lr}}), a)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tt.wantMsg {
				t.Fatalf("got %v\nwant 403 %s", err, tt.wantMsg)
			}
		})
	}
}

func TestWhichRequests(t *testing.T) {
	lr := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "2")})
	bad := func() *corev1.Pod { return podOf(container("app", rl("cpu", "1"), rl("cpu", "3"))) }
	deleting := bad()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	tests := []struct {
		name    string
		a       *admission.Attributes
		checked bool
	}{
		{"pod create", createPod(bad()), true},
		{"pod update", &admission.Attributes{Operation: admission.Update, Resource: podGVR, Kind: podGVK, Namespace: "ns", Name: "p", Object: bad(), OldObject: bad()}, false},
		{"pod resize", &admission.Attributes{Operation: admission.Update, Resource: podGVR, Subresource: "resize", Kind: podGVK, Namespace: "ns", Name: "p", Object: bad(), OldObject: bad()}, true},
		{"resize of a pod being deleted", &admission.Attributes{Operation: admission.Update, Resource: podGVR, Subresource: "resize", Kind: podGVK, Namespace: "ns", Name: "p", Object: bad(), OldObject: deleting}, false},
		{"pod status", &admission.Attributes{Operation: admission.Update, Resource: podGVR, Subresource: "status", Kind: podGVK, Namespace: "ns", Name: "p", Object: bad(), OldObject: bad()}, false},
		{"service", &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("services"), Namespace: "ns", Name: "s", Object: &corev1.Service{}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeReader{ranges: []*corev1.LimitRange{lr}}
			err := admitThenValidate(New(r), tt.a)
			if tt.checked != (err != nil) {
				t.Fatalf("err = %v, want checked=%v", err, tt.checked)
			}
			if !tt.checked && r.lists != 0 {
				t.Errorf("listed LimitRanges %d times for an ignored request", r.lists)
			}
		})
	}
}

func TestListError(t *testing.T) {
	p := New(&fakeReader{err: errors.New("etcd down")})
	want := `pods "p" is forbidden: unable to CREATE /v1, Resource=pods at this time because there was an error enforcing limit ranges`
	for name, fn := range map[string]func(context.Context, *admission.Attributes) error{"Admit": p.Admit, "Validate": p.Validate} {
		err := fn(context.Background(), createPod(podOf(container("app", nil, nil))))
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("%s() = %v, want %s", name, err, want)
		}
	}
}

func TestNoLimitRanges(t *testing.T) {
	pod := podOf(container("app", nil, nil))
	if err := admitThenValidate(New(&fakeReader{}), createPod(pod)); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Resources.Requests != nil || pod.Annotations != nil {
		t.Errorf("pod changed without a LimitRange: %+v", pod)
	}
}

func TestHandler(t *testing.T) {
	p := New(nil)
	if p.Name() != "LimitRanger" || !p.Handles(admission.Create) || !p.Handles(admission.Update) || p.Handles(admission.Delete) {
		t.Errorf("Name/Handles wrong")
	}
}

// TestStoredBeyondBound: a LimitRange stored before quantities were bounded (max 1e10000000)
// is checked at the cost of a normal one, as the bound: a pod within it is admitted, the
// ratio and min constraints still work.
func TestStoredBeyondBound(t *testing.T) {
	huge := resource.MustParse("1e10000000")
	lr := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
		Max:                  corev1.ResourceList{corev1.ResourceCPU: huge},
		Min:                  rl("memory", "10Mi"),
		MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceMemory: huge},
	})
	cases := []struct {
		pod     *corev1.Pod
		wantMsg string
	}{
		{podOf(container("app", rl("cpu", "1", "memory", "20Mi"), rl("cpu", "3", "memory", "40Mi"))), ""},
		{podOf(container("app", rl("cpu", "1", "memory", "5Mi"), rl("cpu", "3", "memory", "40Mi"))), `pods "p" is forbidden: minimum memory usage per Container is 10Mi, but request is 5Mi`},
	}
	for _, c := range cases {
		quotatest.Within(t, 20*time.Second, "a LimitRange with a huge stored max", func() error {
			err := admitThenValidate(New(&fakeReader{ranges: []*corev1.LimitRange{lr}}), createPod(c.pod))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.wantMsg {
				t.Errorf("got %q, want %q", got, c.wantMsg)
			}
			return nil
		})
	}
}
