package priority

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

// fakeReader serves PriorityClasses from a slice; err, when set, is returned by every call.
type fakeReader struct {
	classes []*schedulingv1.PriorityClass
	err     error
}

func (f *fakeReader) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if f.err != nil {
		return nil, f.err
	}
	if gvr != priorityClassGVR {
		return nil, errors.New("unexpected resource " + gvr.String())
	}
	for _, pc := range f.classes {
		if pc.Name == name {
			return pc, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (f *fakeReader) List(_ context.Context, gvr schema.GroupVersionResource, _ string) ([]runtime.Object, error) {
	if f.err != nil {
		return nil, f.err
	}
	if gvr != priorityClassGVR {
		return nil, errors.New("unexpected resource " + gvr.String())
	}
	var out []runtime.Object
	for _, pc := range f.classes {
		out = append(out, pc)
	}
	return out, nil
}

func class(name string, value int32, def bool, policy corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def}
	if policy != "" {
		pc.PreemptionPolicy = &policy
	}
	return pc
}

var (
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	podGVK = corev1.SchemeGroupVersion.WithKind("Pod")
	pcGVK  = schedulingv1.SchemeGroupVersion.WithKind("PriorityClass")
	never  = corev1.PreemptNever
	lower  = corev1.PreemptLowerPriority
)

func ptr[T any](v T) *T { return &v }

func pod(className string, prio *int32, policy *corev1.PreemptionPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec:       corev1.PodSpec{PriorityClassName: className, Priority: prio, PreemptionPolicy: policy},
	}
}

func createPod(p *corev1.Pod) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Resource: podGVR, Kind: podGVK, Namespace: "ns", Name: p.Name, Object: p}
}

func TestAdmitPodCreate(t *testing.T) {
	high := class("high", 1000, false, corev1.PreemptLowerPriority)
	noPreempt := class("no-preempt", 500, false, corev1.PreemptNever)
	nilPolicy := class("nil-policy", 7, false, "")
	def := class("def", 100, true, corev1.PreemptLowerPriority)
	def2 := class("def2", 50, true, corev1.PreemptNever)

	tests := []struct {
		name      string
		classes   []*schedulingv1.PriorityClass
		pod       *corev1.Pod
		wantMsg   string // empty: admitted
		wantClass string
		wantPrio  int32
		wantPol   *corev1.PreemptionPolicy
	}{
		{name: "named class", classes: []*schedulingv1.PriorityClass{high}, pod: pod("high", nil, nil),
			wantClass: "high", wantPrio: 1000, wantPol: &lower},
		{name: "named class with Never", classes: []*schedulingv1.PriorityClass{noPreempt}, pod: pod("no-preempt", nil, nil),
			wantClass: "no-preempt", wantPrio: 500, wantPol: &never},
		{name: "class without policy leaves pod policy alone", classes: []*schedulingv1.PriorityClass{nilPolicy}, pod: pod("nil-policy", nil, &never),
			wantClass: "nil-policy", wantPrio: 7, wantPol: &never},
		{name: "unknown class", classes: []*schedulingv1.PriorityClass{high}, pod: pod("x", nil, nil),
			wantMsg: `pods "p" is forbidden: no PriorityClass with name x was found`},
		{name: "no class no default", pod: pod("", nil, nil), wantClass: "", wantPrio: 0, wantPol: &lower},
		{name: "no class, no default, Never refused", pod: pod("", nil, &never),
			wantMsg: `pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`},
		{name: "global default applies", classes: []*schedulingv1.PriorityClass{high, def}, pod: pod("", nil, nil),
			wantClass: "def", wantPrio: 100, wantPol: &lower},
		{name: "lowest of two defaults wins", classes: []*schedulingv1.PriorityClass{def, def2}, pod: pod("", nil, nil),
			wantClass: "def2", wantPrio: 50, wantPol: &never},
		{name: "named class beats default", classes: []*schedulingv1.PriorityClass{high, def}, pod: pod("high", nil, nil),
			wantClass: "high", wantPrio: 1000, wantPol: &lower},
		{name: "system-cluster-critical known when not stored", pod: pod("system-cluster-critical", nil, nil),
			wantClass: "system-cluster-critical", wantPrio: 2000000000, wantPol: &lower},
		{name: "system-node-critical known when not stored", pod: pod("system-node-critical", nil, nil),
			wantClass: "system-node-critical", wantPrio: 2000001000, wantPol: &lower},
		{name: "stored system class wins", classes: []*schedulingv1.PriorityClass{class("system-node-critical", 2000001000, false, corev1.PreemptNever)},
			pod: pod("system-node-critical", nil, nil), wantClass: "system-node-critical", wantPrio: 2000001000, wantPol: &never},
		{name: "matching priority accepted", classes: []*schedulingv1.PriorityClass{high}, pod: pod("high", ptr[int32](1000), nil),
			wantClass: "high", wantPrio: 1000, wantPol: &lower},
		{name: "disagreeing priority refused", classes: []*schedulingv1.PriorityClass{high}, pod: pod("high", ptr[int32](5), nil),
			wantMsg: `pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`},
		{name: "priority without class refused", pod: pod("", ptr[int32](5), nil),
			wantMsg: `pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
		{name: "disagreeing policy refused", classes: []*schedulingv1.PriorityClass{high}, pod: pod("high", nil, &never),
			wantMsg: `pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(&fakeReader{classes: tt.classes})
			err := p.Admit(context.Background(), createPod(tt.pod))
			if tt.wantMsg != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tt.wantMsg {
					t.Fatalf("Admit() = %v, want 403 %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Admit() = %v", err)
			}
			s := tt.pod.Spec
			if s.PriorityClassName != tt.wantClass || s.Priority == nil || *s.Priority != tt.wantPrio || !reflect.DeepEqual(s.PreemptionPolicy, tt.wantPol) {
				t.Errorf("spec = class %q priority %v policy %v, want %q %d %v", s.PriorityClassName, deref(s.Priority), deref(s.PreemptionPolicy), tt.wantClass, tt.wantPrio, deref(tt.wantPol))
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestAdmitPodCreateDoesNotShareClassPolicy(t *testing.T) {
	high := class("high", 1000, false, corev1.PreemptLowerPriority)
	p := New(&fakeReader{classes: []*schedulingv1.PriorityClass{high}})
	pd := pod("high", nil, nil)
	if err := p.Admit(context.Background(), createPod(pd)); err != nil {
		t.Fatal(err)
	}
	*pd.Spec.PreemptionPolicy = corev1.PreemptNever
	if *high.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatal("pod's preemptionPolicy aliases the stored class")
	}
}

func TestAdmitReaderErrors(t *testing.T) {
	p := New(&fakeReader{err: errors.New("etcd down")})
	err := p.Admit(context.Background(), createPod(pod("high", nil, nil)))
	if err == nil || err.Error() != "failed to get PriorityClass with name high: etcd down" {
		t.Errorf("named class: Admit() = %v", err)
	}
	err = p.Admit(context.Background(), createPod(pod("", nil, nil)))
	if err == nil || err.Error() != "failed to get default priority class: etcd down" {
		t.Errorf("default class: Admit() = %v", err)
	}
}

func TestAdmitPodUpdate(t *testing.T) {
	old := pod("high", ptr[int32](1000), &never)
	tests := []struct {
		name     string
		pod      *corev1.Pod
		wantPrio int32
		wantPol  corev1.PreemptionPolicy
	}{
		{"omitted fields carried over", pod("high", nil, nil), 1000, corev1.PreemptNever},
		{"given fields kept", pod("high", ptr[int32](3), &lower), 3, corev1.PreemptLowerPriority},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Update, Resource: podGVR, Kind: podGVK, Namespace: "ns", Name: "p", Object: tt.pod, OldObject: old}
			if err := New(&fakeReader{}).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if *tt.pod.Spec.Priority != tt.wantPrio || *tt.pod.Spec.PreemptionPolicy != tt.wantPol {
				t.Errorf("got %d %s, want %d %s", *tt.pod.Spec.Priority, *tt.pod.Spec.PreemptionPolicy, tt.wantPrio, tt.wantPol)
			}
		})
	}
}

func TestAdmitIgnores(t *testing.T) {
	p := New(&fakeReader{err: errors.New("must not be read")})
	tests := []struct {
		name string
		a    *admission.Attributes
	}{
		{"subresource", &admission.Attributes{Operation: admission.Create, Resource: podGVR, Subresource: "binding", Namespace: "ns", Object: &corev1.Binding{}}},
		{"other resource", &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("services"), Namespace: "ns", Object: &corev1.Service{}}},
		{"pod delete", &admission.Attributes{Operation: admission.Delete, Resource: podGVR, Namespace: "ns", Name: "p"}},
	}
	for _, tt := range tests {
		if err := p.Admit(context.Background(), tt.a); err != nil {
			t.Errorf("%s: Admit() = %v", tt.name, err)
		}
	}
	bad := &admission.Attributes{Operation: admission.Create, Resource: podGVR, Namespace: "ns", Object: &corev1.Service{}}
	if err := p.Admit(context.Background(), bad); !apierrors.IsBadRequest(err) || err.Error() != "resource was marked with kind Pod but was unable to be converted" {
		t.Errorf("wrong type: Admit() = %v", err)
	}
}

func TestValidatePriorityClass(t *testing.T) {
	def := class("def", 100, true, corev1.PreemptLowerPriority)
	other := class("other", 10, false, corev1.PreemptLowerPriority)
	tests := []struct {
		name    string
		classes []*schedulingv1.PriorityClass
		op      admission.Operation
		obj     *schedulingv1.PriorityClass
		wantMsg string
	}{
		{"second default on create", []*schedulingv1.PriorityClass{def}, admission.Create, class("new", 1, true, ""),
			`priorityclasses.scheduling.k8s.io "new" is forbidden: PriorityClass def is already marked as default. Only one default can exist`},
		{"first default on create", []*schedulingv1.PriorityClass{other}, admission.Create, class("new", 1, true, ""), ""},
		{"non-default on create", []*schedulingv1.PriorityClass{def}, admission.Create, class("new", 1, false, ""), ""},
		{"mark another default on update", []*schedulingv1.PriorityClass{def, other}, admission.Update, class("other", 10, true, ""),
			`priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass def is already marked as default. Only one default can exist`},
		{"update the default itself", []*schedulingv1.PriorityClass{def}, admission.Update, class("def", 100, true, ""), ""},
		{"same-name create still refused", []*schedulingv1.PriorityClass{def}, admission.Create, class("def", 100, true, ""),
			`priorityclasses.scheduling.k8s.io "def" is forbidden: PriorityClass def is already marked as default. Only one default can exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tt.op, Resource: priorityClassGVR, Kind: pcGVK, Name: tt.obj.Name, Object: tt.obj}
			err := New(&fakeReader{classes: tt.classes}).Validate(context.Background(), a)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tt.wantMsg {
				t.Fatalf("Validate() = %v, want 403 %q", err, tt.wantMsg)
			}
		})
	}
}

func TestValidateDeleteSystemClass(t *testing.T) {
	p := New(&fakeReader{})
	for _, name := range []string{"system-node-critical", "system-cluster-critical"} {
		a := &admission.Attributes{Operation: admission.Delete, Resource: priorityClassGVR, Kind: pcGVK, Name: name}
		err := p.Validate(context.Background(), a)
		want := `priorityclasses.scheduling.k8s.io "` + name + `" is forbidden: this is a system priority class and cannot be deleted`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("delete %s: Validate() = %v, want %q", name, err, want)
		}
	}
	a := &admission.Attributes{Operation: admission.Delete, Resource: priorityClassGVR, Kind: pcGVK, Name: "high"}
	if err := p.Validate(context.Background(), a); err != nil {
		t.Errorf("delete high: Validate() = %v", err)
	}
}

func TestSystemClasses(t *testing.T) {
	got := SystemClasses()
	if len(got) != 2 ||
		got[0].Name != "system-node-critical" || got[0].Value != 2000001000 ||
		got[0].Description != "Used for system critical pods that must not be moved from their current node." ||
		got[1].Name != "system-cluster-critical" || got[1].Value != 2000000000 ||
		got[1].Description != "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary." ||
		got[0].GlobalDefault || got[1].GlobalDefault ||
		*got[0].PreemptionPolicy != corev1.PreemptLowerPriority || *got[1].PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatalf("SystemClasses() = %+v", got)
	}
	got[0].Value = 1
	*got[0].PreemptionPolicy = corev1.PreemptNever
	if *got[1].PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatal("the system classes share one preemptionPolicy")
	}
	again := SystemClasses()
	if again[0].Value != 2000001000 || *again[0].PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatal("SystemClasses() returns shared state")
	}
}
