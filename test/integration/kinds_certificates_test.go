package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// csrPEM returns a PEM PKCS#10 request for CN cn and O orgs, and its key.
func csrPEM(t *testing.T, cn string, orgs ...string) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), key
}

func newCSR(name string, req []byte, signer string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: meta(name), Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: req, SignerName: signer, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		Username: "forged", Groups: []string{"system:masters"}}}
}

// TestCertificateSigningRequests checks the CSR lifecycle: the requester's identity is the
// server's to set, the spec never changes, only /approval approves or denies, only /status
// sets the certificate, with upstream's texts.
func TestCertificateSigningRequests(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := s.Client.CertificatesV1().CertificateSigningRequests()
	ctx := ctxT(t)
	req, _ := csrPEM(t, "carol", "team-a")

	// 1. Create: username and groups are the requester's, whatever was sent.
	csr, err := c.Create(ctx, newCSR("carol", req, "example.com/signer"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if csr.Spec.Username == "forged" || len(csr.Status.Conditions) != 0 {
		t.Errorf("requester = %q %v, status %+v", csr.Spec.Username, csr.Spec.Groups, csr.Status)
	}
	who, err := s.Client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo; u.Username != csr.Spec.Username || strings.Join(u.Groups, ",") != strings.Join(csr.Spec.Groups, ",") {
		t.Errorf("spec.username, groups = %q %v, requester is %q %v", csr.Spec.Username, csr.Spec.Groups, u.Username, u.Groups)
	}
	if l, err := c.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v %v", l, err)
	}

	// 2. The main resource changes metadata only: spec and status stay.
	csr.Labels = map[string]string{"a": "b"}
	csr.Spec.SignerName = "example.com/other"
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue})
	up, err := c.Update(ctx, csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if up.Labels["a"] != "b" || up.Spec.SignerName != "example.com/signer" || len(up.Status.Conditions) != 0 {
		t.Errorf("main update: labels %v signer %s conditions %v", up.Labels, up.Spec.SignerName, up.Status.Conditions)
	}

	// 3. /status may not approve.
	up.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}
	_, err = c.UpdateStatus(ctx, up, metav1.UpdateOptions{})
	expectInvalid(t, err, `CertificateSigningRequest.certificates.k8s.io "carol" is invalid: status.conditions: Forbidden: updates may not add a condition of type "Approved"`)

	// 4. /approval approves, with timestamps; Denied then is refused.
	approved, err := c.UpdateApproval(ctx, "carol", up, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(approved.Status.Conditions) != 1 || approved.Status.Conditions[0].LastUpdateTime.IsZero() || approved.Status.Conditions[0].LastTransitionTime.IsZero() {
		t.Errorf("approval: %+v", approved.Status.Conditions)
	}
	approved.Status.Conditions = append(approved.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
	_, err = c.UpdateApproval(ctx, "carol", approved, metav1.UpdateOptions{})
	expectInvalid(t, err, `CertificateSigningRequest.certificates.k8s.io "carol" is invalid: status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive`)

	// 5. /status sets a certificate; it must be PEM certificates.
	cur, err := c.Get(ctx, "carol", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.Certificate = []byte("not a certificate")
	_, err = c.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	expectInvalid(t, err, `CertificateSigningRequest.certificates.k8s.io "carol" is invalid: status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block`)

	// 6. Validation on create, with upstream's texts.
	_, err = c.Create(ctx, newCSR("bad-request", []byte("nope"), "example.com/signer"), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(), `: PEM block type must be CERTIFICATE REQUEST`) || !strings.Contains(err.Error(), "spec.request: Invalid value") {
		t.Errorf("bad request: %v", err)
	}
	_, err = c.Create(ctx, newCSR("bad-signer", req, "signer"), metav1.CreateOptions{})
	expectInvalid(t, err, `CertificateSigningRequest.certificates.k8s.io "bad-signer" is invalid: spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name'`)
	bad := newCSR("bad-usage", req, "example.com/signer")
	bad.Spec.Usages = []certificatesv1.KeyUsage{"flying"}
	_, err = c.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.usages[0]: Unsupported value: "flying": supported values: "any", "cert sign", `) {
		t.Errorf("bad usage: %v", err)
	}
	short := newCSR("short", req, "example.com/signer")
	short.Spec.ExpirationSeconds = new(int32)
	*short.Spec.ExpirationSeconds = 60
	_, err = c.Create(ctx, short, metav1.CreateOptions{})
	expectInvalid(t, err, `CertificateSigningRequest.certificates.k8s.io "short" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)`)

	// 7. Delete.
	if err := c.Delete(ctx, "carol", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestCSRSigning gets a client certificate as on a real cluster: a kube-apiserver-client
// CSR, approved through /approval, is issued by quotad's CA, and the certificate and key
// authenticate as the request's subject.
func TestCSRSigning(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := s.Client.CertificatesV1().CertificateSigningRequests()
	ctx := ctxT(t)
	req, key := csrPEM(t, "dave", "team-d")
	w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=dave"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	csr := newCSR("dave", req, certificatesv1.KubeAPIServerClientSignerName)
	csr.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	csr, err = c.Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A request with a server usage fails instead.
	bad := newCSR("eve", req, certificatesv1.KubeAPIServerClientSignerName)
	bad.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}
	if bad, err = c.Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*certificatesv1.CertificateSigningRequest{csr, bad} {
		x.Status.Conditions = append(x.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved"})
		if _, err := c.UpdateApproval(ctx, x.Name, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var cert []byte
	for cert == nil {
		select {
		case <-ctx.Done():
			t.Fatal("no certificate issued")
		case ev := <-w.ResultChan():
			if got, ok := ev.Object.(*certificatesv1.CertificateSigningRequest); ok && len(got.Status.Certificate) > 0 {
				cert = got.Status.Certificate
			}
		}
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(s.Config)
	cfg.CertData, cfg.KeyData = cert, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	dave, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := dave.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo; u.Username != "dave" || !strings.Contains(strings.Join(u.Groups, ","), "team-d") {
		t.Errorf("the issued certificate authenticates as %q %v", u.Username, u.Groups)
	}
	// The refused one carries a Failed condition.
	fw, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=eve"})
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Stop()
	for {
		select {
		case <-ctx.Done():
			t.Fatal("no Failed condition")
		case ev := <-fw.ResultChan():
			got, _ := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if got == nil {
				continue
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == certificatesv1.CertificateFailed && cond.Reason == "SignerValidationFailure" {
					if len(got.Status.Certificate) != 0 {
						t.Error("a failed request got a certificate")
					}
					return
				}
			}
		}
	}
}

// TestKindsBDiscovery: the new groups' resources are discovered with their subresources,
// short names and categories as upstream lists them.
func TestKindsBDiscovery(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	for _, tc := range []struct {
		gv   string
		want []string
	}{
		{"certificates.k8s.io/v1", []string{"certificatesigningrequests[csr]", "certificatesigningrequests/approval", "certificatesigningrequests/status"}},
		{"storage.k8s.io/v1", []string{"csidrivers", "csinodes", "csistoragecapacities", "volumeattachments", "volumeattachments/status", "volumeattributesclasses[vac]"}},
		{"admissionregistration.k8s.io/v1", []string{"mutatingadmissionpolicies(api-extensions)", "validatingadmissionpolicies(api-extensions)", "validatingadmissionpolicies/status", "validatingwebhookconfigurations(api-extensions)"}},
		{"flowcontrol.apiserver.k8s.io/v1", []string{"flowschemas", "flowschemas/status", "prioritylevelconfigurations", "prioritylevelconfigurations/status"}},
		{"apiregistration.k8s.io/v1", []string{"apiservices(api-extensions)", "apiservices/status"}},
	} {
		list, err := s.Client.Discovery().ServerResourcesForGroupVersion(tc.gv)
		if err != nil {
			t.Errorf("%s: %v", tc.gv, err)
			continue
		}
		var got []string
		for _, r := range list.APIResources {
			name := r.Name
			if len(r.ShortNames) > 0 {
				name += "[" + strings.Join(r.ShortNames, ",") + "]"
			}
			if len(r.Categories) > 0 {
				name += "(" + strings.Join(r.Categories, ",") + ")"
			}
			got = append(got, name)
		}
		for _, w := range tc.want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("%s: no %s in %v", tc.gv, w, got)
			}
		}
	}
}

// TestCSRApprovalNeedsSigner: approving needs "approve" on the request's signer (by name or
// "<domain>/*"), as upstream's CertificateApproval admission requires, even for a user
// allowed to update certificatesigningrequests/approval.
func TestCSRApprovalNeedsSigner(t *testing.T) {
	t.Parallel()
	s := rbacServer(t)
	ctx := ctxT(t)
	admin := s.Client
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "csr-approver"}, Rules: []rbacv1.PolicyRule{
		rbacRule(strs("get", "list", "create"), strs("certificates.k8s.io"), strs("certificatesigningrequests")),
		rbacRule(strs("update"), strs("certificates.k8s.io"), strs("certificatesigningrequests/approval")),
	}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-csr"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "csr-approver"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := clientFor(t, configAs(s, "alice-token")).CertificatesV1().CertificateSigningRequests()
	req, _ := csrPEM(t, "root", "system:masters")
	var csr *certificatesv1.CertificateSigningRequest
	waitFor(t, func() bool {
		var err error
		csr, err = alice.Create(ctx, newCSR("escalate", req, certificatesv1.KubeAPIServerClientSignerName), metav1.CreateOptions{})
		return err == nil
	})
	if csr.Spec.Username != "alice" {
		t.Errorf("requester %q", csr.Spec.Username)
	}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	_, err := alice.UpdateApproval(ctx, "escalate", csr, metav1.UpdateOptions{})
	wantForbidden(t, "approve", err, `certificatesigningrequests.certificates.k8s.io "escalate" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`)

	// With "approve" on the signer's domain wildcard, alice may approve.
	role.Rules = append(role.Rules, rbacRule(strs("approve"), strs("certificates.k8s.io"), strs("signers"), "kubernetes.io/*"))
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := alice.UpdateApproval(ctx, "escalate", csr, metav1.UpdateOptions{})
		return err == nil
	})
}
