package noderestriction

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

// stored is a Reader over a few objects.
type stored []runtime.Object

func (s stored) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	for _, o := range s {
		m := o.(metav1.Object)
		if m.GetNamespace() == ns && m.GetName() == name {
			switch o.(type) {
			case *corev1.Pod:
				if gvr.Resource == "pods" {
					return o, nil
				}
			case *corev1.Node:
				if gvr.Resource == "nodes" {
					return o, nil
				}
			}
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s stored) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, nil
}

// TestNodeRestrictionTexts pins every refusal to upstream's text, byte for byte.
func TestNodeRestrictionTexts(t *testing.T) {
	yes := true
	node1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1"}}
	onN1 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mine", UID: "pod-uid"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	onN2 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "theirs", UID: "their-uid"}, Spec: corev1.PodSpec{NodeName: "n2"}}
	p := New(stored{node1, onN1, onN2})
	n1 := auth.User{Name: "system:node:n1", Groups: []string{"system:nodes"}}
	gvr := func(g, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: "v1", Resource: r}
	}
	mirror := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "static", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "h"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "uid-n1", Controller: &yes}}},
			Spec: corev1.PodSpec{NodeName: "n1"}}
		if mut != nil {
			mut(p)
		}
		return p
	}
	nodeWith := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	tok := func(ref *authenticationv1.BoundObjectReference) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}
	}
	n2 := "n2"
	tests := []struct {
		name string
		a    admission.Attributes
		want string // "" admits
	}{
		{"unidentified node", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), User: auth.User{Name: "system:node:", Groups: []string{"system:nodes"}}, Name: "x"},
			`pods "x" is forbidden: could not determine node from user "system:node:"`},
		{"not a mirror pod", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.Annotations = nil })},
			`pods "static" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{"mirror pod elsewhere", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.Spec.NodeName = "n2" })},
			`pods "static" is forbidden: node "n1" can only create pods with spec.nodeName set to itself`},
		{"no owner", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.OwnerReferences = nil })},
			`pods "static" is forbidden: node "n1" can only create pods with an owner reference set to itself`},
		{"two owners", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.OwnerReferences = append(p.OwnerReferences, p.OwnerReferences[0]) })},
			`pods "static" is forbidden: node "n1" can only create pods with a single owner reference set to itself`},
		{"owner not controller", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.OwnerReferences[0].Controller = nil })},
			`pods "static" is forbidden: node "n1" can only create pods with a controller owner reference set to itself`},
		{"owner blocks deletion", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.OwnerReferences[0].BlockOwnerDeletion = &yes })},
			`pods "static" is forbidden: node "n1" must not set blockOwnerDeletion on an owner reference`},
		{"owner uid", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "old" })},
			`pods "static" is forbidden: node n1 UID mismatch: expected old got uid-n1`},
		{"mirror with service account", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "sa" })},
			`pods "static" is forbidden: node "n1" can not create pods that reference serviceaccounts`},
		{"mirror with projected token", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}}
		})}, `pods "static" is forbidden: node "n1" can not create pods that reference serviceaccounts (via projected volumes)`},
		{"mirror with pvc", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
		})}, `pods "static" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims`},
		{"mirror pod", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: mirror(nil)}, ""},
		{"delete another's pod", admission.Attributes{Operation: admission.Delete, Resource: gvr("", "pods"), Namespace: "ns", Name: "theirs", OldObject: onN2},
			`pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`},
		{"delete its pod", admission.Attributes{Operation: admission.Delete, Resource: gvr("", "pods"), Namespace: "ns", Name: "mine", OldObject: onN1}, ""},
		{"update a pod", admission.Attributes{Operation: admission.Update, Resource: gvr("", "pods"), Namespace: "ns", Name: "mine", Object: onN1, OldObject: onN1},
			`pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`},
		{"another's pod status", admission.Attributes{Operation: admission.Update, Resource: gvr("", "pods"), Subresource: "status", Namespace: "ns", Name: "theirs", Object: onN2, OldObject: onN2},
			`pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{"labels through status", admission.Attributes{Operation: admission.Update, Resource: gvr("", "pods"), Subresource: "status", Namespace: "ns", Name: "mine", Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: onN1.Spec}, OldObject: onN1},
			`pods "mine" is forbidden: node "n1" cannot update labels through pod status`},
		{"claim statuses", admission.Attributes{Operation: admission.Update, Resource: gvr("", "pods"), Subresource: "status", Namespace: "ns", Name: "mine", Object: &corev1.Pod{Spec: onN1.Spec, Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "x"}}}}, OldObject: onN1},
			`pods "mine" is forbidden: node "n1" cannot update resource claim statues`},
		{"its pod status", admission.Attributes{Operation: admission.Update, Resource: gvr("", "pods"), Subresource: "status", Namespace: "ns", Name: "mine", Object: onN1, OldObject: onN1}, ""},
		{"pod binding", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Subresource: "binding", Namespace: "ns", Name: "mine"},
			`pods "mine" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`},
		{"evict another's pod", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Subresource: "eviction", Namespace: "ns", Name: "theirs", Object: &policyv1.Eviction{}},
			`pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself`},
		{"evict its pod", admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Subresource: "eviction", Namespace: "ns", Name: "mine", Object: &policyv1.Eviction{}}, ""},
		{"modify another node", admission.Attributes{Operation: admission.Update, Resource: gvr("", "nodes"), Name: "n2", Object: nodeWith(nil), OldObject: nodeWith(nil)},
			`nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`},
		{"create with restricted labels", admission.Attributes{Operation: admission.Create, Resource: gvr("", "nodes"), Name: "n1", Object: nodeWith(map[string]string{"node-restriction.kubernetes.io/a": "1", "foo.node-restriction.kubernetes.io/b": "1", "x.k8s.io/c": "1", "kubernetes.io/hostname": "n1", "example.com/free": "1"})},
			`nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: foo.node-restriction.kubernetes.io/b, node-restriction.kubernetes.io/a, x.k8s.io/c`},
		{"label itself", admission.Attributes{Operation: admission.Update, Resource: gvr("", "nodes"), Name: "n1", Object: nodeWith(map[string]string{"node-restriction.kubernetes.io/x": "y"}), OldObject: nodeWith(nil)},
			`nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x`},
		{"kubelet labels", admission.Attributes{Operation: admission.Update, Resource: gvr("", "nodes"), Name: "n1", Object: nodeWith(map[string]string{"node.kubernetes.io/instance-type": "m", "a.kubelet.kubernetes.io/x": "y", "beta.kubernetes.io/arch": "amd64"}), OldObject: nodeWith(nil)}, ""},
		{"taints", admission.Attributes{Operation: admission.Update, Resource: gvr("", "nodes"), Subresource: "status", Name: "n1", Object: nodeWith(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), OldObject: nodeWith(nil)},
			`nodes "n1" is forbidden: node "n1" is not allowed to modify taints`},
		{"config source", admission.Attributes{Operation: admission.Create, Resource: gvr("", "nodes"), Name: "n1", Object: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{ConfigSource: &corev1.NodeConfigSource{}}}},
			`nodes "n1" is forbidden: node "n1" is not allowed to create pods with a non-nil configSource`},
		{"another lease", admission.Attributes{Operation: admission.Create, Resource: gvr("coordination.k8s.io", "leases"), Namespace: "kube-node-lease", Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}},
			`leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node`},
		{"its lease", admission.Attributes{Operation: admission.Update, Resource: gvr("coordination.k8s.io", "leases"), Namespace: "kube-node-lease", Name: "n1"}, ""},
		{"a lease elsewhere", admission.Attributes{Operation: admission.Update, Resource: gvr("coordination.k8s.io", "leases"), Namespace: "default", Name: "n1"},
			`leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace`},
		{"unbound token", admission.Attributes{Operation: admission.Create, Resource: gvr("", "serviceaccounts"), Subresource: "token", Namespace: "ns", Name: "default", Object: tok(nil)},
			`serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{"token without uid", admission.Attributes{Operation: admission.Create, Resource: gvr("", "serviceaccounts"), Subresource: "token", Namespace: "ns", Name: "default", Object: tok(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "mine"})},
			`serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid`},
		{"token for a recreated pod", admission.Attributes{Operation: admission.Create, Resource: gvr("", "serviceaccounts"), Subresource: "token", Namespace: "ns", Name: "default", Object: tok(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "mine", UID: "old"})},
			`serviceaccounts "default" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{"token for another's pod", admission.Attributes{Operation: admission.Create, Resource: gvr("", "serviceaccounts"), Subresource: "token", Namespace: "ns", Name: "default", Object: tok(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "theirs", UID: "their-uid"})},
			`serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{"token for an audience its pod does not use", admission.Attributes{Operation: admission.Create, Resource: gvr("", "serviceaccounts"), Subresource: "token", Namespace: "ns", Name: "default", Object: &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "mine", UID: "pod-uid"}}}},
			`serviceaccounts "default" is forbidden: system:node:n1 is not authorized to request tokens for audience "vault"`},
		{"another's slice", admission.Attributes{Operation: admission.Create, Resource: gvr("resource.k8s.io", "resourceslices"), Object: &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{NodeName: &n2}}},
			`resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`},
		{"pvc spec", admission.Attributes{Operation: admission.Update, Resource: gvr("", "persistentvolumeclaims"), Namespace: "ns", Name: "c"},
			`persistentvolumeclaims "c" is forbidden: may only update PVC status`},
	}
	for _, tt := range tests {
		a := tt.a
		if a.User.Name == "" {
			a.User = n1
		}
		var err error
		if a.Operation == admission.Update && a.Subresource != "" {
			err = p.Validate(context.Background(), &a)
		} else {
			err = p.Admit(context.Background(), &a)
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want || !apierrors.IsForbidden(err)):
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
	// Other users are not its concern.
	other := admission.Attributes{Operation: admission.Create, Resource: gvr("", "pods"), Object: &corev1.Pod{}, User: auth.User{Name: "alice"}}
	if err := p.Admit(context.Background(), &other); err != nil {
		t.Errorf("a user's pod: %v", err)
	}
}
