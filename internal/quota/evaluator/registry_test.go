package evaluator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRegistryGet(t *testing.T) {
	r := NewRegistry()
	tests := []struct {
		gr   schema.GroupResource
		want string
	}{
		{schema.GroupResource{Resource: "pods"}, "evaluator.Pods"},
		{schema.GroupResource{Resource: "services"}, "evaluator.Services"},
		{schema.GroupResource{Resource: "persistentvolumeclaims"}, "evaluator.PersistentVolumeClaims"},
		{schema.GroupResource{Resource: "configmaps"}, "*evaluator.ObjectCount"},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, "*evaluator.ObjectCount"},
		{schema.GroupResource{Group: "example.com", Resource: "foos"}, "*evaluator.ObjectCount"},
		{schema.GroupResource{Group: "other", Resource: "pods"}, "*evaluator.ObjectCount"},
		{schema.GroupResource{Resource: "events"}, "<nil>"},
		{schema.GroupResource{Resource: "bindings"}, "<nil>"},
		{schema.GroupResource{Resource: "componentstatuses"}, "<nil>"},
		{schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "<nil>"},
		{schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}, "<nil>"},
		{schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "<nil>"},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "<nil>"},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, "<nil>"},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}, "<nil>"},
		{schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}, "<nil>"},
	}
	for _, tt := range tests {
		ev := r.Get(tt.gr)
		got := "<nil>"
		if ev != nil {
			got = fmt.Sprintf("%T", ev)
		}
		if got != tt.want {
			t.Errorf("Get(%v) = %s, want %s", tt.gr, got, tt.want)
		}
	}
	a := r.Get(schema.GroupResource{Group: "apps", Resource: "deployments"})
	b := r.Get(schema.GroupResource{Group: "apps", Resource: "deployments"})
	if a != b {
		t.Error("object-count evaluators must be created once")
	}
}

func TestRegistryGroupResourcesFor(t *testing.T) {
	r := NewRegistry()
	got := r.GroupResourcesFor([]corev1.ResourceName{
		"cpu", "requests.nvidia.com/gpu", "count/pods", "services.nodeports", "gold.storageclass.storage.k8s.io/requests.storage",
		"configmaps", "count/secrets", "resourcequotas", "replicationcontrollers", "count/deployments.apps",
		"count/foos.quota.integration.test.k8s.io", "count/events", "example.com/foo", "count/", "storage",
	})
	want := "/configmaps /persistentvolumeclaims /pods /replicationcontrollers /resourcequotas /secrets /services apps/deployments quota.integration.test.k8s.io/foos"
	s := ""
	for i, gr := range got {
		if i > 0 {
			s += " "
		}
		s += gr.Group + "/" + gr.Resource
	}
	if s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}
