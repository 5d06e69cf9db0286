package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
)

func TestObjectCountUsage(t *testing.T) {
	custom := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]any{"name": "x", "namespace": "ns"},
	}}
	tests := []struct {
		gr   schema.GroupResource
		obj  runtime.Object
		want string
	}{
		{schema.GroupResource{Resource: "configmaps"}, &corev1.ConfigMap{}, "configmaps=1 count/configmaps=1"},
		{schema.GroupResource{Resource: "secrets"}, &corev1.Secret{}, "count/secrets=1 secrets=1"},
		{schema.GroupResource{Resource: "replicationcontrollers"}, &corev1.ReplicationController{}, "count/replicationcontrollers=1 replicationcontrollers=1"},
		{schema.GroupResource{Resource: "resourcequotas"}, &corev1.ResourceQuota{}, "count/resourcequotas=1 resourcequotas=1"},
		{schema.GroupResource{Resource: "serviceaccounts"}, &corev1.ServiceAccount{}, "count/serviceaccounts=1"},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, &unstructured.Unstructured{}, "count/deployments.apps=1"},
		{schema.GroupResource{Group: "example.com", Resource: "foos"}, custom, "count/foos.example.com=1"},
	}
	for _, tt := range tests {
		t.Run(tt.gr.String(), func(t *testing.T) {
			ev := NewObjectCount(tt.gr)
			got, err := ev.Usage(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if s := show(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
			if !ev.Handles("") || ev.Handles("status") || ev.Handles("scale") {
				t.Error("object counts handle only the object itself")
			}
		})
	}
	ev := NewObjectCount(schema.GroupResource{Resource: "secrets"})
	if s := names(ev.MatchingResources([]corev1.ResourceName{"secrets", "configmaps", "count/secrets", "count/secrets.apps"})); s != "count/secrets secrets" {
		t.Errorf("matching: %s", s)
	}
	if _, ok := quota.Evaluator(ev).(quota.ScopeMatcher); ok {
		t.Error("object counts must not match scopes")
	}
}
