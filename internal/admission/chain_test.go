package admission_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/defaultingressclass"
	"github.com/quotad/quotad/internal/admission/limitranger"
	"github.com/quotad/quotad/internal/admission/namespacelifecycle"
	"github.com/quotad/quotad/internal/admission/priority"
	"github.com/quotad/quotad/internal/admission/runtimeclass"
)

// recorder is a fake plugin that logs its calls into a shared journal.
type recorder struct {
	name    string
	ops     []admission.Operation
	journal *[]string
	fail    error
}

func (r *recorder) Name() string { return r.name }
func (r *recorder) Handles(op admission.Operation) bool {
	for _, o := range r.ops {
		if o == op {
			return true
		}
	}
	return false
}

type mutating struct{ *recorder }

func (m mutating) Admit(context.Context, *admission.Attributes) error {
	*m.journal = append(*m.journal, "admit "+m.name)
	return m.fail
}

type validating struct{ *recorder }

func (v validating) Validate(context.Context, *admission.Attributes) error {
	*v.journal = append(*v.journal, "validate "+v.name)
	return v.fail
}

type both struct{ *recorder }

func (b both) Admit(context.Context, *admission.Attributes) error {
	*b.journal = append(*b.journal, "admit "+b.name)
	return b.fail
}

func (b both) Validate(context.Context, *admission.Attributes) error {
	*b.journal = append(*b.journal, "validate "+b.name)
	return b.fail
}

var allOps = []admission.Operation{admission.Create, admission.Update, admission.Delete}

// plugins returns fakes shaped like quotad's plugins (NamespaceLifecycle mutating only,
// LimitRanger and Priority both), passed in scrambled order.
func plugins(journal *[]string) []admission.Handler {
	return []admission.Handler{
		both{&recorder{name: admission.Priority, ops: allOps, journal: journal}},
		both{&recorder{name: admission.LimitRanger, ops: []admission.Operation{admission.Create, admission.Update}, journal: journal}},
		mutating{&recorder{name: admission.NamespaceLifecycle, ops: allOps, journal: journal}},
		mutating{&recorder{name: admission.DefaultTolerationSeconds, ops: []admission.Operation{admission.Create, admission.Update}, journal: journal}},
		mutating{&recorder{name: admission.ServiceAccount, ops: []admission.Operation{admission.Create}, journal: journal}},
		both{&recorder{name: admission.NodeRestriction, journal: journal}}, // handles nothing: only its presence matters here
		both{&recorder{name: admission.RuntimeClass, ops: []admission.Operation{admission.Create}, journal: journal}},
		mutating{&recorder{name: admission.DefaultIngressClass, ops: []admission.Operation{admission.Create}, journal: journal}},
		mutating{&recorder{name: admission.MutatingAdmissionPolicy, ops: []admission.Operation{admission.Create, admission.Update}, journal: journal}},
		validating{&recorder{name: admission.ValidatingAdmissionPolicy, ops: allOps, journal: journal}},
	}
}

func TestNewChainFlags(t *testing.T) {
	tests := []struct {
		name        string
		enable      []string
		disable     []string
		wantEnabled []string
		wantQuota   bool
		wantErr     string
	}{
		{name: "defaults", wantEnabled: []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority", "DefaultTolerationSeconds", "RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy", "ResourceQuota"}, wantQuota: true},
		{name: "enabling a default is a no-op", enable: []string{"ResourceQuota", "NamespaceLifecycle"},
			wantEnabled: []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority", "DefaultTolerationSeconds", "RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy", "ResourceQuota"}, wantQuota: true},
		{name: "disable quota", disable: []string{"ResourceQuota"},
			wantEnabled: []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority", "DefaultTolerationSeconds", "RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy"}},
		{name: "disable two", disable: []string{"Priority", "NamespaceLifecycle"},
			wantEnabled: []string{"LimitRanger", "ServiceAccount", "NodeRestriction", "DefaultTolerationSeconds", "RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy", "ResourceQuota"}, wantQuota: true},
		{name: "disable all", disable: []string{"ResourceQuota", "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy", "DefaultIngressClass", "RuntimeClass", "Priority", "LimitRanger", "NamespaceLifecycle", "ServiceAccount", "DefaultTolerationSeconds", "NodeRestriction"}},
		{name: "unknown enable", enable: []string{"AlwaysPullImages"},
			wantErr: `enable-admission-plugins plugin "AlwaysPullImages" is unknown`},
		{name: "unknown disable", disable: []string{"Foo"},
			wantErr: `disable-admission-plugins plugin "Foo" is unknown`},
		{name: "several errors", enable: []string{"Foo", "LimitRanger"}, disable: []string{"Bar", "LimitRanger"},
			wantErr: `[enable-admission-plugins plugin "Foo" is unknown, disable-admission-plugins plugin "Bar" is unknown, [LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped]`},
		{name: "overlap", enable: []string{"Priority", "LimitRanger"}, disable: []string{"LimitRanger", "Priority"},
			wantErr: `[LimitRanger Priority] in enable-admission-plugins and disable-admission-plugins overlapped`},
		{name: "names are case sensitive", enable: []string{"limitranger"},
			wantErr: `enable-admission-plugins plugin "limitranger" is unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var journal []string
			c, err := admission.NewChain(tt.enable, tt.disable, plugins(&journal)...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("NewChain() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Enabled(); !reflect.DeepEqual(got, tt.wantEnabled) {
				t.Errorf("Enabled() = %v, want %v", got, tt.wantEnabled)
			}
			if c.QuotaEnabled() != tt.wantQuota {
				t.Errorf("QuotaEnabled() = %v, want %v", c.QuotaEnabled(), tt.wantQuota)
			}
		})
	}
}

func TestNewChainPluginErrors(t *testing.T) {
	var journal []string
	if _, err := admission.NewChain(nil, nil, plugins(&journal)[:2]...); err == nil ||
		err.Error() != `admission plugin "NamespaceLifecycle" is enabled but was not constructed` {
		t.Errorf("missing plugin: err = %v", err)
	}
	if _, err := admission.NewChain(nil, []string{admission.NamespaceLifecycle, admission.ServiceAccount, admission.NodeRestriction, admission.DefaultTolerationSeconds, admission.RuntimeClass, admission.DefaultIngressClass, admission.MutatingAdmissionPolicy, admission.ValidatingAdmissionPolicy}, plugins(&journal)[:2]...); err != nil {
		t.Errorf("a disabled plugin need not be constructed: err = %v", err)
	}
	extra := append(plugins(&journal), mutating{&recorder{name: "AlwaysPullImages", journal: &journal}})
	if _, err := admission.NewChain(nil, nil, extra...); err == nil ||
		err.Error() != `admission plugin "AlwaysPullImages" is not one quotad knows` {
		t.Errorf("unknown plugin: err = %v", err)
	}
}

func TestChainOrder(t *testing.T) {
	tests := []struct {
		name         string
		disable      []string
		op           admission.Operation
		wantAdmit    []string
		wantValidate []string
	}{
		{"create runs all", nil, admission.Create,
			[]string{"admit NamespaceLifecycle", "admit LimitRanger", "admit ServiceAccount", "admit Priority", "admit DefaultTolerationSeconds", "admit RuntimeClass", "admit DefaultIngressClass", "admit MutatingAdmissionPolicy"},
			[]string{"validate LimitRanger", "validate Priority", "validate RuntimeClass", "validate ValidatingAdmissionPolicy"}},
		{"delete skips plugins not handling it", nil, admission.Delete,
			[]string{"admit NamespaceLifecycle", "admit Priority"},
			[]string{"validate Priority", "validate ValidatingAdmissionPolicy"}},
		{"disabled plugins do not run", []string{"LimitRanger"}, admission.Create,
			[]string{"admit NamespaceLifecycle", "admit ServiceAccount", "admit Priority", "admit DefaultTolerationSeconds", "admit RuntimeClass", "admit DefaultIngressClass", "admit MutatingAdmissionPolicy"},
			[]string{"validate Priority", "validate RuntimeClass", "validate ValidatingAdmissionPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var journal []string
			c, err := admission.NewChain(nil, tt.disable, plugins(&journal)...)
			if err != nil {
				t.Fatal(err)
			}
			a := &admission.Attributes{Operation: tt.op}
			if err := c.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(journal, tt.wantAdmit) {
				t.Errorf("Admit ran %v, want %v", journal, tt.wantAdmit)
			}
			journal = nil
			if err := c.Validate(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(journal, tt.wantValidate) {
				t.Errorf("Validate ran %v, want %v", journal, tt.wantValidate)
			}
		})
	}
}

func TestChainStopsAtFirstError(t *testing.T) {
	var journal []string
	ps := plugins(&journal)
	boom := errors.New("boom")
	ps[1].(both).fail = boom // LimitRanger
	c, err := admission.NewChain(nil, nil, ps...)
	if err != nil {
		t.Fatal(err)
	}
	a := &admission.Attributes{Operation: admission.Create}
	if err := c.Admit(context.Background(), a); !errors.Is(err, boom) {
		t.Fatalf("Admit() = %v, want boom", err)
	}
	if want := []string{"admit NamespaceLifecycle", "admit LimitRanger"}; !reflect.DeepEqual(journal, want) {
		t.Errorf("Admit ran %v, want %v", journal, want)
	}
	journal = nil
	if err := c.Validate(context.Background(), a); !errors.Is(err, boom) {
		t.Fatalf("Validate() = %v, want boom", err)
	}
	if want := []string{"validate LimitRanger"}; !reflect.DeepEqual(journal, want) {
		t.Errorf("Validate ran %v, want %v", journal, want)
	}
}

func TestPluginNames(t *testing.T) {
	names := admission.PluginNames()
	if want := []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "Priority", "DefaultTolerationSeconds", "RuntimeClass", "DefaultIngressClass", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy", "ResourceQuota"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("PluginNames() = %v, want %v", names, want)
	}
	names[0] = "x"
	if admission.PluginNames()[0] != admission.NamespaceLifecycle {
		t.Fatal("PluginNames() shares state")
	}
}

func TestNewForbidden(t *testing.T) {
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	pcs := schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	reason := errors.New("no")
	tests := []struct {
		name string
		a    *admission.Attributes
		err  error
		want string
	}{
		{"request name", &admission.Attributes{Resource: pods, Name: "a", Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}, reason,
			`pods "a" is forbidden: no`},
		{"object name", &admission.Attributes{Resource: pods, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", GenerateName: "g-"}}}, reason,
			`pods "b" is forbidden: no`},
		{"generateName", &admission.Attributes{Resource: pods, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "g-"}}}, reason,
			`pods "g-" is forbidden: no`},
		{"no name", &admission.Attributes{Resource: pods, Object: &corev1.Pod{}}, reason, `pods "Unknown" is forbidden: no`},
		{"no object", &admission.Attributes{Resource: pods}, reason, `pods "Unknown" is forbidden: no`},
		{"object without metadata", &admission.Attributes{Resource: pods, Object: &metav1.Status{}}, reason,
			`pods "Unknown/errorGettingName" is forbidden: no`},
		{"group in resource", &admission.Attributes{Resource: pcs, Name: "x"}, reason,
			`priorityclasses.scheduling.k8s.io "x" is forbidden: no`},
		{"forbidden passes through", &admission.Attributes{Resource: pods, Name: "a"},
			apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "n", reason), `namespaces "n" is forbidden: no`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := admission.NewForbidden(tt.a, tt.err)
			if !apierrors.IsForbidden(err) || err.Error() != tt.want {
				t.Errorf("NewForbidden() = %v, want 403 %q", err, tt.want)
			}
		})
	}
}

// store is an in-memory Reader keyed by resource, namespace and name.
type store map[schema.GroupVersionResource]map[string]runtime.Object

func (s store) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if obj, ok := s[gvr][ns+"/"+name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s store) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, obj := range s[gvr] {
		if m, _ := obj.(metav1.Object); ns == "" || m.GetNamespace() == ns {
			out = append(out, obj)
		}
	}
	return out, nil
}

func TestRealPlugins(t *testing.T) {
	nsGVR := corev1.SchemeGroupVersion.WithResource("namespaces")
	lrGVR := corev1.SchemeGroupVersion.WithResource("limitranges")
	pcGVR := schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
	s := store{
		nsGVR: {"/ns": &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}},
		lrGVR: {"ns/lr": &corev1.LimitRange{
			ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type:           corev1.LimitTypeContainer,
				Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
				Max:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			}}},
		}},
		pcGVR: {},
	}
	c, err := admission.NewChain(nil, []string{admission.ServiceAccount, admission.NodeRestriction, admission.DefaultTolerationSeconds, admission.MutatingAdmissionPolicy, admission.ValidatingAdmissionPolicy}, namespacelifecycle.New(s), limitranger.New(s), priority.New(s), runtimeclass.New(s), defaultingressclass.New(s))
	if err != nil {
		t.Fatal(err)
	}
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	podKind := corev1.SchemeGroupVersion.WithKind("Pod")
	newPod := func(ns, class string, cpuLimit string) *admission.Attributes {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}, Spec: corev1.PodSpec{
			PriorityClassName: class,
			Containers:        []corev1.Container{{Name: "app"}},
		}}
		if cpuLimit != "" {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit)}
		}
		return &admission.Attributes{Operation: admission.Create, Resource: pods, Kind: podKind, Namespace: ns, Name: "p", Object: p}
	}
	run := func(a *admission.Attributes) error {
		if err := c.Admit(context.Background(), a); err != nil {
			return err
		}
		return c.Validate(context.Background(), a)
	}

	// A missing namespace is reported before an unknown priority class.
	if err := run(newPod("gone", "nope", "")); !apierrors.IsNotFound(err) || err.Error() != `namespaces "gone" not found` {
		t.Errorf("missing namespace: %v", err)
	}
	// An unknown class is refused in the mutating phase, before LimitRanger validates.
	if err := run(newPod("ns", "nope", "3")); !apierrors.IsForbidden(err) || err.Error() != `pods "p" is forbidden: no PriorityClass with name nope was found` {
		t.Errorf("unknown class: %v", err)
	}
	// Bounds are checked in the validating phase.
	if err := run(newPod("ns", "", "3")); !apierrors.IsForbidden(err) || err.Error() != `pods "p" is forbidden: maximum cpu usage per Container is 2, but limit is 3` {
		t.Errorf("limit: %v", err)
	}
	// An admitted pod carries the defaults and its priority.
	a := newPod("ns", "system-cluster-critical", "")
	if err := run(a); err != nil {
		t.Fatal(err)
	}
	p := a.Object.(*corev1.Pod)
	req := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	if req.String() != "250m" || *p.Spec.Priority != 2000000000 ||
		p.Annotations["kubernetes.io/limit-ranger"] != "LimitRanger plugin set: cpu request for container app; cpu limit for container app" {
		t.Errorf("admitted pod = %+v", p)
	}
}

// TestChainObserve: the observer is told of every plugin run, in order, as a mutator or a
// validator, with the operation and whether it refused; the refusing plugin is the last.
func TestChainObserve(t *testing.T) {
	var journal []string
	ps := plugins(&journal)
	ps[1].(both).fail = errors.New("no") // LimitRanger refuses
	c, err := admission.NewChain(nil, nil, ps...)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	c.Observe(func(name string, validate bool, op admission.Operation, elapsed time.Duration, rejected bool) {
		seen = append(seen, fmt.Sprintf("%s validate=%v %s rejected=%v", name, validate, op, rejected))
	})
	a := &admission.Attributes{Operation: admission.Delete}
	if err := c.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	a.Operation = admission.Update
	if err := c.Validate(context.Background(), a); err == nil {
		t.Fatal("LimitRanger did not refuse")
	}
	want := []string{
		"NamespaceLifecycle validate=false DELETE rejected=false",
		"Priority validate=false DELETE rejected=false",
		"Priority validate=true DELETE rejected=false",
		"ValidatingAdmissionPolicy validate=true DELETE rejected=false",
		"LimitRanger validate=true UPDATE rejected=true",
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("observed\n%q\nwant\n%q", seen, want)
	}
}
