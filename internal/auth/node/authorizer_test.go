package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/auth"
)

// storedPods is a Lookup holding pods only.
type storedPods []*corev1.Pod

func (s storedPods) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	for _, p := range s {
		if gvr == podsGVR && p.Namespace == ns && p.Name == name {
			return p, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s storedPods) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, p := range s {
		if gvr == podsGVR && p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out, nil
}

// TestAuthorize: upstream's decisions and reasons for a node's requests; the stored pods
// are asked before refusing what the graph does not relate yet.
func TestAuthorize(t *testing.T) {
	g := NewGraph()
	vol := corev1.PodSpec{Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "mine"}}}}}
	g.SetPod(boundPod("ns", "p", "n1", vol))
	// A pod the graph has not seen yet, but storage has.
	late := boundPod("ns", "late", "n1", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "fresh"}}}}})
	z := New(g, storedPods{late}, Rules())
	n1 := auth.User{Name: "system:node:n1", Groups: []string{Group, auth.AllAuthenticated}}
	sel := func(s string) fields.Selector { return fields.ParseSelectorOrDie(s) }
	tests := []struct {
		name   string
		a      auth.Attributes
		want   auth.Decision
		reason string
	}{
		{"not a node", auth.Attributes{User: auth.User{Name: "system:node:n1"}, Verb: "get", Resource: "secrets", ResourceRequest: true}, auth.NoOpinion, ""},
		{"unknown node", auth.Attributes{User: auth.User{Name: "system:node:", Groups: []string{Group}}, Verb: "get", ResourceRequest: true}, auth.NoOpinion, `unknown node for user "system:node:"`},
		{"its pod's secret", auth.Attributes{User: n1, Verb: "get", Resource: "secrets", Namespace: "ns", Name: "mine", ResourceRequest: true}, auth.Allow, ""},
		{"its pod's secret watched by name", auth.Attributes{User: n1, Verb: "watch", Resource: "secrets", Namespace: "ns", Name: "mine", ResourceRequest: true}, auth.Allow, ""},
		{"a just bound pod's secret", auth.Attributes{User: n1, Verb: "get", Resource: "secrets", Namespace: "ns", Name: "fresh", ResourceRequest: true}, auth.Allow, ""},
		{"another secret", auth.Attributes{User: n1, Verb: "get", Resource: "secrets", Namespace: "ns", Name: "other", ResourceRequest: true}, auth.NoOpinion, "no relationship found between node 'n1' and this object"},
		{"secrets listed", auth.Attributes{User: n1, Verb: "list", Resource: "secrets", Namespace: "ns", ResourceRequest: true}, auth.NoOpinion, "No Object name found"},
		{"secret written", auth.Attributes{User: n1, Verb: "update", Resource: "secrets", Namespace: "ns", Name: "mine", ResourceRequest: true}, auth.NoOpinion, "can only read resources of this type"},
		{"secrets of all namespaces", auth.Attributes{User: n1, Verb: "get", Resource: "secrets", Name: "mine", ResourceRequest: true}, auth.NoOpinion, "can only read namespaced object of this type"},
		{"pvc listed", auth.Attributes{User: n1, Verb: "list", Resource: "persistentvolumeclaims", Namespace: "ns", ResourceRequest: true}, auth.NoOpinion, "can only get individual resources of this type"},
		{"its pods", auth.Attributes{User: n1, Verb: "watch", Resource: "pods", Fields: sel("spec.nodeName=n1"), ResourceRequest: true}, auth.Allow, ""},
		{"all pods", auth.Attributes{User: n1, Verb: "list", Resource: "pods", ResourceRequest: true}, auth.NoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"a pod just bound", auth.Attributes{User: n1, Verb: "get", Resource: "pods", Namespace: "ns", Name: "late", ResourceRequest: true}, auth.Allow, ""},
		{"its node", auth.Attributes{User: n1, Verb: "get", Resource: "nodes", Name: "n1", ResourceRequest: true}, auth.Allow, ""},
		{"another node", auth.Attributes{User: n1, Verb: "get", Resource: "nodes", Name: "n2", ResourceRequest: true}, auth.NoOpinion, "node 'n1' cannot read 'n2', only its own Node object"},
		{"nodes deleted", auth.Attributes{User: n1, Verb: "delete", Resource: "nodes", Name: "n1", ResourceRequest: true}, auth.NoOpinion, ""},
		{"its lease", auth.Attributes{User: n1, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: LeaseNamespace, Name: "n1", ResourceRequest: true}, auth.Allow, ""},
		{"another lease", auth.Attributes{User: n1, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: LeaseNamespace, Name: "n2", ResourceRequest: true}, auth.NoOpinion, "can only access node lease with the same name as the requesting node"},
		{"a lease elsewhere", auth.Attributes{User: n1, Verb: "get", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "n1", ResourceRequest: true}, auth.NoOpinion, `can only access leases in the "kube-node-lease" system namespace`},
		{"its slices", auth.Attributes{User: n1, Verb: "list", APIGroup: "resource.k8s.io", Resource: "resourceslices", Fields: sel("spec.nodeName=n1"), ResourceRequest: true}, auth.Allow, ""},
		{"all slices", auth.Attributes{User: n1, Verb: "list", APIGroup: "resource.k8s.io", Resource: "resourceslices", ResourceRequest: true}, auth.NoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector"},
		{"a token for its pod's account", auth.Attributes{User: n1, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: "ns", Name: "default", ResourceRequest: true}, auth.NoOpinion, "no relationship found between node 'n1' and this object"},
		{"events (static rules)", auth.Attributes{User: n1, Verb: "create", APIGroup: "events.k8s.io", Resource: "events", Namespace: "ns", ResourceRequest: true}, auth.Allow, ""},
		{"services (static rules)", auth.Attributes{User: n1, Verb: "watch", Resource: "services", ResourceRequest: true}, auth.Allow, ""},
		{"csr (static rules)", auth.Attributes{User: n1, Verb: "create", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", ResourceRequest: true}, auth.Allow, ""},
		{"namespaces", auth.Attributes{User: n1, Verb: "get", Resource: "namespaces", Name: "ns", ResourceRequest: true}, auth.NoOpinion, ""},
	}
	for _, tt := range tests {
		d, reason, err := z.Authorize(context.Background(), tt.a)
		if err != nil || d != tt.want || reason != tt.reason {
			t.Errorf("%s: got %v %q %v, want %v %q", tt.name, d, reason, err, tt.want, tt.reason)
		}
	}
	// The pod's default service account becomes reachable once the pod names it.
	p := boundPod("ns", "p", "n1", vol)
	p.Spec.ServiceAccountName = "default"
	g.SetPod(p)
	if d, _, _ := z.Authorize(context.Background(), auth.Attributes{User: n1, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: "ns", Name: "default", ResourceRequest: true}); d != auth.Allow {
		t.Error("a token for its pod's service account is refused")
	}
}
