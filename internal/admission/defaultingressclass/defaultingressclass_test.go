package defaultingressclass_test

import (
	"context"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/defaultingressclass"
)

// classes is a 2-method admission.Reader listing IngressClasses.
type classes []*networkingv1.IngressClass

func (c classes) Get(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, nil
}

func (c classes) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	out := make([]runtime.Object, 0, len(c))
	for _, ic := range c {
		out = append(out, ic)
	}
	return out, nil
}

func class(name string, isDefault bool, created time.Time) *networkingv1.IngressClass {
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}
	if isDefault {
		ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	}
	return ic
}

func TestDefaultIngressClass(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		classes classes
		ing     *networkingv1.Ingress
		want    string
	}{
		{"no default", classes{class("a", false, t0)}, &networkingv1.Ingress{}, ""},
		{"one default", classes{class("a", false, t0), class("b", true, t0)}, &networkingv1.Ingress{}, "b"},
		{"newest default wins", classes{class("old", true, t0), class("new", true, t0.Add(time.Hour))}, &networkingv1.Ingress{}, "new"},
		{"same time: smallest name", classes{class("y", true, t0), class("x", true, t0)}, &networkingv1.Ingress{}, "x"},
		{"class named", classes{class("b", true, t0)}, &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("mine")}}, "mine"},
		{"annotation names a class", classes{class("b", true, t0)},
			&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "old"}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Create, Resource: networkingv1.SchemeGroupVersion.WithResource("ingresses"), Object: tt.ing}
			if err := defaultingressclass.New(tt.classes).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(tt.ing.Spec.IngressClassName, ""); got != tt.want {
				t.Errorf("ingressClassName = %q, want %q", got, tt.want)
			}
		})
	}
}
