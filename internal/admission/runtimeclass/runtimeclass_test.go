package runtimeclass_test

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/runtimeclass"
)

// classes is a 2-method admission.Reader holding RuntimeClasses by name.
type classes map[string]*nodev1.RuntimeClass

func (c classes) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if rc, ok := c[name]; ok {
		return rc, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c classes) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, nil
}

func rl(cpu string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
}

func TestRuntimeClass(t *testing.T) {
	store := classes{
		"gvisor": {ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc", Overhead: &nodev1.Overhead{PodFixed: rl("250m")},
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "true"},
				Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}},
		"plain": {ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Handler: "runc"},
	}
	tests := []struct {
		name         string
		class        *string
		overhead     corev1.ResourceList
		nodeSelector map[string]string
		wantErr      string
		wantOverhead corev1.ResourceList
		wantSelector map[string]string
		wantTols     int
	}{
		{name: "no class", wantTols: 0},
		{name: "class sets overhead and scheduling", class: ptr.To("gvisor"), wantOverhead: rl("250m"), wantSelector: map[string]string{"sandbox": "true"}, wantTols: 1},
		{name: "same overhead set by the user", class: ptr.To("gvisor"), overhead: rl("0.25"), wantOverhead: rl("250m"), wantSelector: map[string]string{"sandbox": "true"}, wantTols: 1},
		{name: "class without overhead", class: ptr.To("plain")},
		{name: "missing class", class: ptr.To("kata"), wantErr: `pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found`},
		{name: "different overhead", class: ptr.To("gvisor"), overhead: rl("1"), wantErr: `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
		{name: "overhead without a class overhead", class: ptr.To("plain"), overhead: rl("1"), wantErr: `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
		{name: "overhead without a class", overhead: rl("1"), wantErr: `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
		{name: "nodeSelector conflict", class: ptr.To("gvisor"), nodeSelector: map[string]string{"sandbox": "false"},
			wantErr: `pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := runtimeclass.New(store)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
				RuntimeClassName: tt.class, Overhead: tt.overhead, NodeSelector: tt.nodeSelector,
				Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
			a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
				Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Namespace: "ns", Name: "p", Object: pod}
			err := p.Admit(context.Background(), a)
			if err == nil {
				err = p.Validate(context.Background(), a)
			}
			if tt.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantOverhead != nil && pod.Spec.Overhead.Cpu().Cmp(*tt.wantOverhead.Cpu()) != 0 {
				t.Errorf("overhead = %v, want %v", pod.Spec.Overhead, tt.wantOverhead)
			}
			if !reflect.DeepEqual(pod.Spec.NodeSelector, tt.wantSelector) || len(pod.Spec.Tolerations) != tt.wantTols {
				t.Errorf("nodeSelector %v tolerations %v", pod.Spec.NodeSelector, pod.Spec.Tolerations)
			}
		})
	}
	if store["gvisor"].Scheduling.NodeSelector["sandbox"] != "true" || len(store["gvisor"].Scheduling.Tolerations) != 1 {
		t.Error("the stored class was changed")
	}
}

func TestMergeTolerations(t *testing.T) {
	exists := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}
	equal := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	all := corev1.Toleration{Operator: corev1.TolerationOpExists}
	other := corev1.Toleration{Key: "o", Operator: corev1.TolerationOpExists}
	tests := []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{exists}, []corev1.Toleration{other}, []corev1.Toleration{exists, other}},
		{"covered later", []corev1.Toleration{equal}, []corev1.Toleration{exists}, []corev1.Toleration{exists}},
		{"covered earlier", []corev1.Toleration{exists}, []corev1.Toleration{equal}, []corev1.Toleration{exists}},
		{"match all", []corev1.Toleration{equal, other}, []corev1.Toleration{all}, []corev1.Toleration{all}},
		{"duplicates keep one", []corev1.Toleration{equal}, []corev1.Toleration{equal}, []corev1.Toleration{equal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runtimeclass.MergeTolerations(tt.first, tt.second); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
