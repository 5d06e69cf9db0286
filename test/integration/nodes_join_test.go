package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// csrFor makes a key and a PEM certificate request for subject, with the DNS names and
// IPs given.
func csrFor(t *testing.T, subject pkix.Name, dns []string, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), key
}

func createCSR(t *testing.T, ctx context.Context, c kubernetes.Interface, name, signer string, req []byte, usages ...certificatesv1.KeyUsage) {
	t.Helper()
	_, err := c.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: signer, Usages: usages},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CSR %s: %v", name, err)
	}
}

// awaitCSR watches the CSR until done says it is finished, and returns it.
func awaitCSR(t *testing.T, ctx context.Context, c kubernetes.Interface, name string, done func(*certificatesv1.CertificateSigningRequest) bool) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	csrs := c.CertificatesV1().CertificateSigningRequests()
	w, err := csrs.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			t.Fatalf("watching CSR %s: %v", name, apierrors.FromObject(ev.Object))
		}
		if csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest); ok && done(csr) {
			return csr
		}
	}
	t.Fatalf("CSR %s: the watch ended first (%v)", name, ctx.Err())
	return nil
}

func issued(csr *certificatesv1.CertificateSigningRequest) bool {
	return len(csr.Status.Certificate) > 0
}

func condition(csr *certificatesv1.CertificateSigningRequest, typ certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequestCondition {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Type == typ {
			return &csr.Status.Conditions[i]
		}
	}
	return nil
}

// clientWithCert is a client of s authenticating with the issued certificate and key.
func clientWithCert(t *testing.T, s *servertest.Server, certPEM []byte, key *ecdsa.PrivateKey) kubernetes.Interface {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	cfg.CertData, cfg.KeyData = certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNodeJoinsWithBootstrapToken: a node joins as a kubelet does with a token from
// `quotad token create`: the bootstrap kubeconfig authenticates as system:bootstrap:<id>;
// its kubelet client CSR is approved (AutoApproved, upstream's message) and signed; the
// certificate authenticates as system:node:<name>; the node renews its own; a node cannot
// ask for another node's certificate, nor the token get one that is not a node's approved; a serving CSR is signed once a person approves it; an expired or deleted token
// authenticates nobody.
func TestNodeJoinsWithBootstrapToken(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admin := s.Client

	// 1. The token and its kubeconfig.
	tok, err := server.CreateBootstrapToken(ctx, s.DataDir, server.BootstrapTokenOptions{TTL: time.Hour, Description: "node n1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if tok.Server != s.URL || !strings.HasPrefix(tok.CAHash, "sha256:") || time.Until(tok.Expires) > time.Hour {
		t.Fatalf("token: %+v", tok)
	}
	bcfg, err := clientcmd.RESTConfigFromKubeConfig(tok.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := kubernetes.NewForConfig(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	id := tok.Token[:6]
	u, err := whoami(ctx, boot)
	if err != nil || u.Username != "system:bootstrap:"+id ||
		!slices.Equal(u.Groups, []string{"system:bootstrappers", server.NodeBootstrapGroup, "system:authenticated"}) {
		t.Fatalf("whoami with the bootstrap kubeconfig: %+v %v", u, err)
	}
	// The token reads nothing else.
	if _, err := boot.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the bootstrap token lists kube-system's Secrets: %v", err)
	}

	// 2. A request that is not a node's, then the kubelet's: the kubelet's is approved and
	// signed; the other, made first, is still undecided after it.
	notNode, _ := csrFor(t, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, nil, nil)
	createCSR(t, ctx, boot, "not-a-node", certificatesv1.KubeAPIServerClientKubeletSignerName, notNode, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	req, key := csrFor(t, pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, nil, nil)
	createCSR(t, ctx, boot, "node-csr-n1", certificatesv1.KubeAPIServerClientKubeletSignerName, req, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	csr := awaitCSR(t, ctx, admin, "node-csr-n1", issued)
	if c := condition(csr, certificatesv1.CertificateApproved); c == nil || c.Reason != "AutoApproved" || c.Message != "Auto approving kubelet client certificate after SubjectAccessReview." {
		t.Fatalf("approval: %+v", csr.Status.Conditions)
	}
	if other, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "not-a-node", metav1.GetOptions{}); err != nil || len(other.Status.Conditions) != 0 {
		t.Fatalf("the request that is not a node's: %+v %v", other.Status, err)
	}
	// Approved by hand, the kubelet signer refuses it with upstream's message.
	other, _ := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "not-a-node", metav1.GetOptions{})
	other.Status.Conditions = append(other.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ByHand"})
	if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, "not-a-node", other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	failed := awaitCSR(t, ctx, admin, "not-a-node", func(c *certificatesv1.CertificateSigningRequest) bool {
		return condition(c, certificatesv1.CertificateFailed) != nil
	})
	if c := condition(failed, certificatesv1.CertificateFailed); c.Reason != "SignerValidationFailure" || c.Message != "subject organization is not system:nodes" || len(failed.Status.Certificate) != 0 {
		t.Fatalf("the signer's refusal: %+v", failed.Status)
	}

	// 3. The certificate is the node's identity.
	blk, _ := pem.Decode(csr.Status.Certificate)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || cert.IsCA || len(cert.DNSNames) != 0 {
		t.Fatalf("certificate: %+v", cert)
	}
	node := clientWithCert(t, s, csr.Status.Certificate, key)
	if u, err := whoami(ctx, node); err != nil || u.Username != "system:node:n1" || !slices.Equal(u.Groups, []string{"system:nodes", "system:authenticated"}) {
		t.Fatalf("whoami with the node's certificate: %+v %v", u, err)
	}

	// 4. The node asks for another node's certificate: NodeRestriction refuses it. It
	// renews its own: approved (selfnodeclient) and signed.
	stolen, _ := csrFor(t, pkix.Name{CommonName: "system:node:n2", Organization: []string{"system:nodes"}}, nil, nil)
	_, err = node.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "n1-asks-for-n2"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: stolen, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{})
	if want := `certificatesigningrequests.certificates.k8s.io "n1-asks-for-n2" is forbidden: can only create a node CSR with CN=system:node:n1`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("n1 asking for n2's certificate: %v, want %s", err, want)
	}
	renew, _ := csrFor(t, pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, nil, nil)
	createCSR(t, ctx, node, "n1-renews", certificatesv1.KubeAPIServerClientKubeletSignerName, renew, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth)
	renewed := awaitCSR(t, ctx, admin, "n1-renews", issued)
	if c := condition(renewed, certificatesv1.CertificateApproved); c == nil || c.Message != "Auto approving self kubelet client certificate after SubjectAccessReview." {
		t.Fatalf("renewal: %+v", renewed.Status.Conditions)
	}

	// 5. A serving certificate: signed with its names once a person approves it.
	serving, _ := csrFor(t, pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, []string{"n1.example"}, []net.IP{net.ParseIP("10.0.0.7")})
	createCSR(t, ctx, node, "n1-serving", certificatesv1.KubeletServingSignerName, serving, certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)
	sc, _ := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, "n1-serving", metav1.GetOptions{})
	sc.Status.Conditions = append(sc.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ByHand"})
	if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, "n1-serving", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc = awaitCSR(t, ctx, admin, "n1-serving", issued)
	blk, _ = pem.Decode(sc.Status.Certificate)
	scert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scert.DNSNames, []string{"n1.example"}) || len(scert.IPAddresses) != 1 || !scert.IPAddresses[0].Equal(net.ParseIP("10.0.0.7")) ||
		!slices.Equal(scert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Fatalf("serving certificate: names %v %v, usages %v", scert.DNSNames, scert.IPAddresses, scert.ExtKeyUsage)
	}

	// 6. A deleted token authenticates nobody at once; so does an expired one.
	if err := admin.CoreV1().Secrets("kube-system").Delete(ctx, "bootstrap-token-"+id, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, boot); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a deleted token: %v", err)
	}
	expired := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type:       "bootstrap.kubernetes.io/token",
		StringData: map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true",
			"expiration": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)},
	}
	if _, err := admin.CoreV1().Secrets("kube-system").Create(ctx, expired, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ecfg := rest.CopyConfig(bcfg)
	ecfg.BearerToken = "abcdef.0123456789abcdef"
	ec, _ := kubernetes.NewForConfig(ecfg)
	if _, err := whoami(ctx, ec); !apierrors.IsUnauthorized(err) {
		t.Fatalf("an expired token: %v", err)
	}
}
