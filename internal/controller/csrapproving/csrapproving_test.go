package csrapproving

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/controller/fake"
)

// grants is an authorizer allowing users the subresources listed for them.
type grants map[string][]string

func (g grants) Authorize(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
	if a.Verb != "create" || a.APIGroup != "certificates.k8s.io" || a.Resource != "certificatesigningrequests" {
		return auth.NoOpinion, "", nil
	}
	for _, sub := range g[a.User.Name] {
		if sub == a.Subresource {
			return auth.Allow, "", nil
		}
	}
	for _, grp := range a.User.Groups {
		for _, sub := range g["group:"+grp] {
			if sub == a.Subresource {
				return auth.Allow, "", nil
			}
		}
	}
	return auth.NoOpinion, "", nil
}

func request(t *testing.T, cn string, orgs []string, dns []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestApproval: kubelet client requests are approved for requesters the authorizer allows
// selfnodeclient (their own) or nodeclient, with upstream's condition; anything else is
// left undecided.
func TestApproval(t *testing.T) {
	node := []string{"system:nodes"}
	client := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	authz := grants{"group:system:bootstrappers": {"nodeclient"}, "group:system:nodes": {"selfnodeclient"}}
	tests := []struct {
		name    string
		user    string
		groups  []string
		req     []byte
		signer  string
		usages  []certificatesv1.KeyUsage
		decided bool // already approved or denied
		want    string
	}{
		{name: "bootstrap token, new node", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"},
			req: request(t, "system:node:n1", node, nil), want: "Auto approving kubelet client certificate after SubjectAccessReview."},
		{name: "node renews its own", user: "system:node:n1", groups: node,
			req: request(t, "system:node:n1", node, nil), want: "Auto approving self kubelet client certificate after SubjectAccessReview."},
		{name: "node asks for another node's", user: "system:node:n1", groups: node, req: request(t, "system:node:n2", node, nil)},
		{name: "a user without the grants", user: "mallory", groups: []string{"system:authenticated"}, req: request(t, "system:node:n1", node, nil)},
		{name: "not a node's subject", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, req: request(t, "admin", []string{"system:masters"}, nil)},
		{name: "alternative names", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, req: request(t, "system:node:n1", node, []string{"n1"})},
		{name: "server usages", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, req: request(t, "system:node:n1", node, nil),
			usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}},
		{name: "another signer", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, req: request(t, "system:node:n1", node, nil),
			signer: certificatesv1.KubeletServingSignerName},
		{name: "not PEM", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, req: []byte("garbage")},
		{name: "already decided", user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, req: request(t, "system:node:n1", node, nil), decided: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := fake.New(nil)
			signer := tc.signer
			if signer == "" {
				signer = certificatesv1.KubeAPIServerClientKubeletSignerName
			}
			usages := tc.usages
			if usages == nil {
				usages = client
			}
			csr := &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "csr"},
				Spec:       certificatesv1.CertificateSigningRequestSpec{Request: tc.req, SignerName: signer, Usages: usages, Username: tc.user, Groups: tc.groups},
			}
			if tc.decided {
				csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "No"}}
			}
			fc.Add(csr)
			c := New(fc, authz, nil, nil)
			if err := c.sync(context.Background(), "csr"); err != nil {
				t.Fatal(err)
			}
			got := fc.Object(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), "", "csr").(*certificatesv1.CertificateSigningRequest)
			var approved *certificatesv1.CertificateSigningRequestCondition
			for i, cond := range got.Status.Conditions {
				if cond.Type == certificatesv1.CertificateApproved {
					approved = &got.Status.Conditions[i]
				}
			}
			switch {
			case tc.want == "" && approved != nil:
				t.Fatalf("approved: %+v", approved)
			case tc.want != "" && approved == nil:
				t.Fatalf("not approved: %+v", got.Status.Conditions)
			case tc.want != "" && (approved.Reason != "AutoApproved" || approved.Message != tc.want || approved.Status != corev1.ConditionTrue):
				t.Fatalf("approval %+v, want AutoApproved %q", approved, tc.want)
			}
		})
	}
}
