package noderestriction

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

// withAccounts is stored with service accounts too.
type withAccounts struct {
	stored
	accounts []*corev1.ServiceAccount
}

func (s withAccounts) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if gvr.Resource == "serviceaccounts" {
		for _, a := range s.accounts {
			if a.Namespace == ns && a.Name == name {
				return a, nil
			}
		}
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return s.stored.Get(ctx, gvr, ns, name)
}

// signerAuthorizer allows request-serviceaccounts-podcertificate-signer on one signer
// resource (the signer's "/" as ":").
type signerAuthorizer string

func (s signerAuthorizer) Authorize(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
	if a.Verb == "request-serviceaccounts-podcertificate-signer" && a.Resource == string(s) && a.APIGroup == "certificates.k8s.io" && a.Name == "app" {
		return auth.Allow, "", nil
	}
	return auth.NoOpinion, "", nil
}

// TestPodCertificateRequestRefusals pins the refusals the integration test cannot reach
// (mirror pods, operations the Node authorizer already refuses) and the authorizer's say
// on a signer the pod does not mount.
func TestPodCertificateRequestRefusals(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-n1"}}
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "static", UID: "uid-static", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "h"}},
		Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "app"}}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web"}, Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "app"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-sa"}}
	p := New(withAccounts{stored{node, mirror, plain}, []*corev1.ServiceAccount{sa}})
	n1 := auth.User{Name: "system:node:n1", Groups: []string{"system:nodes"}}
	res := certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests")
	req := func(pod *corev1.Pod, signer string) *certificatesv1.PodCertificateRequest {
		return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"}, Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: signer, PodName: pod.Name, PodUID: pod.UID, ServiceAccountName: "app", ServiceAccountUID: sa.UID, NodeName: "n1", NodeUID: node.UID}}
	}
	tests := []struct {
		name  string
		a     admission.Attributes
		authz auth.Authorizer
		want  string
	}{
		{"mirror pod", admission.Attributes{Operation: admission.Create, Object: req(mirror, "example.com/s")}, nil,
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: pod "ns/static" is a mirror pod`},
		{"update", admission.Attributes{Operation: admission.Update, Name: "r", Object: req(plain, "example.com/s"), OldObject: req(plain, "example.com/s")}, nil,
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: unexpected operation UPDATE`},
		{"delete", admission.Attributes{Operation: admission.Delete, Name: "r", OldObject: req(plain, "example.com/s")}, nil,
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: unexpected operation DELETE`},
		{"unmounted signer", admission.Attributes{Operation: admission.Create, Object: req(plain, "example.com/s")}, signerAuthorizer("example.com:other"),
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: pod "ns/web" does not mount a podCertificate projected volume for signer "example.com/s"`},
		{"unmounted signer, authorized", admission.Attributes{Operation: admission.Create, Object: req(plain, "example.com/s")}, signerAuthorizer("example.com:s"), ""},
	}
	for _, tt := range tests {
		a := tt.a
		a.User, a.Resource, a.Namespace = n1, res, "ns"
		p.Authorizer = tt.authz
		err := p.Admit(context.Background(), &a)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want || !apierrors.IsForbidden(err)):
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
}
