package integration

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// certClient is a clientset holding a client certificate for user in groups.
func certClient(t *testing.T, s *servertest.Server, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	b, err := server.MintKubeconfig(s.DataDir, server.ClientKubeconfig{User: user, Groups: groups, Expiration: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stubRequest is a kubelet's stub PKCS#10 request: empty, signed by a fresh Ed25519 key,
// DER.
func stubRequest(t *testing.T) ([]byte, ed25519.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		t.Fatal(err)
	}
	return der, pub
}

// fixedStubRequest is a stub PKCS#10 request of a fixed Ed25519 key (Ed25519 signatures
// are deterministic), for fixtures built without a *testing.T.
func fixedStubRequest() []byte {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		panic(err)
	}
	return der
}

// signerCA is a signer's CA issuing leaf certificates to requested keys.
type signerCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newSignerCA(t *testing.T) *signerCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "signer"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &signerCA{cert: cert, key: key}
}

// issue returns a PEM chain (leaf, CA) for pub valid from notBefore for lifetime.
func (ca *signerCA) issue(t *testing.T, pub crypto.PublicKey, notBefore time.Time, lifetime time.Duration) string {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pod"}, NotBefore: notBefore, NotAfter: notBefore.Add(lifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
}

func newPCR(name, signer string, stub []byte) *certificatesv1.PodCertificateRequest {
	return &certificatesv1.PodCertificateRequest{ObjectMeta: meta(name), Spec: certificatesv1.PodCertificateRequestSpec{
		SignerName: signer, PodName: "pod-a", PodUID: "pod-uid", ServiceAccountName: "app", ServiceAccountUID: "sa-uid",
		NodeName: "node-a", NodeUID: "node-uid", StubPKCS10Request: stub}}
}

// TestPodCertificateRequests walks a PodCertificateRequest through its life as upstream's
// strategy has it: defaulted and validated on create, an immutable spec, a status that
// moves once (to Issued here, with a certificate consistent with the request and the
// server's clock) and then never again, a "sign" permission needed to move it, upstream's
// field selectors. Every error is upstream's text.
func TestPodCertificateRequests(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "pcr"
	mkNamespace(t, s, ns)
	c := s.Client.CertificatesV1().PodCertificateRequests(ns)
	stub, pub := stubRequest(t)
	const signer = "example.com/pods"

	// 1. Create: maxExpirationSeconds defaults to a day; a status sent is dropped.
	pcr := newPCR("req", signer, stub)
	pcr.Status.CertificateChain = "forged"
	created, err := c.Create(ctx, pcr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := created.Spec.MaxExpirationSeconds; e == nil || *e != 86400 || created.Status.CertificateChain != "" {
		t.Errorf("created: maxExpirationSeconds %v, status %+v", e, created.Status)
	}

	// 2. Create-time validation.
	none := newPCR("no-key", signer, nil)
	_, err = c.Create(ctx, none, metav1.CreateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "no-key" is invalid: spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set`)
	long := newPCR("long", "kubernetes.io/pods", stub)
	long.Spec.MaxExpirationSeconds = new(int32)
	*long.Spec.MaxExpirationSeconds = 100000
	_, err = c.Create(ctx, long, metav1.CreateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "long" is invalid: spec.maxExpirationSeconds: Invalid value: 100000: must be in the range [3600, 86400]`)
	names := newPCR("names", "signer", stub)
	names.Spec.PodUID, names.Spec.NodeName = "", "Node_A"
	_, err = c.Create(ctx, names, metav1.CreateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "names" is invalid: [spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name', spec.podUID: Invalid value: "": must not be empty, spec.nodeName: Invalid value: "Node_A": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`)
	garbage := newPCR("garbage", signer, []byte("not DER"))
	_, err = c.Create(ctx, garbage, metav1.CreateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "garbage" is invalid: spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR`)

	// 3. The main resource changes metadata only: the spec is immutable, the status kept.
	created.Labels = map[string]string{"a": "b"}
	created.Status.CertificateChain = "forged"
	up, err := c.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if up.Labels["a"] != "b" || up.Status.CertificateChain != "" {
		t.Errorf("main update: labels %v, status %+v", up.Labels, up.Status)
	}
	moved := up.DeepCopy()
	moved.Spec.PodName = "pod-b"
	_, err = c.Update(ctx, moved, metav1.UpdateOptions{})
	expectInvalid(t, err, fmt.Sprintf(`PodCertificateRequest.certificates.k8s.io "req" is invalid: spec: Invalid value: {"SignerName":"example.com/pods","PodName":"pod-b","PodUID":"pod-uid","ServiceAccountName":"app","ServiceAccountUID":"sa-uid","NodeName":"node-a","NodeUID":"node-uid","MaxExpirationSeconds":86400,"PKIXPublicKey":null,"ProofOfPossession":null,"StubPKCS10Request":%q,"UnverifiedUserAnnotations":null}: field is immutable`, base64.StdEncoding.EncodeToString(stub)))

	// 4. /status: no change while pending but to a terminal condition, which must be one
	// of upstream's, with a certificate consistent with the request and the clock.
	pending := up.DeepCopy()
	pending.Status.CertificateChain = "early"
	_, err = c.UpdateStatus(ctx, pending, metav1.UpdateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "req" is invalid: status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Test", Message: "m", LastTransitionTime: metav1.Now()}
	}
	approved := up.DeepCopy()
	approved.Status.Conditions = []metav1.Condition{cond("Approved")}
	_, err = c.UpdateStatus(ctx, approved, metav1.UpdateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "req" is invalid: status.conditions.[0].type: Unsupported value: "Approved": supported values: "Issued", "Denied", "Failed"`)
	ca := newSignerCA(t)
	notBefore := time.Now().Truncate(time.Second)
	issued := up.DeepCopy()
	issued.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{cond(certificatesv1.PodCertificateRequestConditionTypeIssued)},
		CertificateChain: ca.issue(t, pub, notBefore, 2*time.Hour),
		NotBefore:        &metav1.Time{Time: notBefore.Add(time.Second)}, NotAfter: &metav1.Time{Time: notBefore.Add(2 * time.Hour)},
		BeginRefreshAt: &metav1.Time{Time: notBefore.Add(time.Hour)},
	}
	// The time is printed as JSON, in the server's zone (metav1.Time decodes to local time).
	at, err := json.Marshal(notBefore.Add(time.Second).Local())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateStatus(ctx, issued, metav1.UpdateOptions{})
	expectInvalid(t, err, fmt.Sprintf(`PodCertificateRequest.certificates.k8s.io "req" is invalid: status.notBefore: Invalid value: %s: must be set to the NotBefore time encoded in the leaf certificate`, at))
	_, foreign := stubRequest(t)
	wrongKey := issued.DeepCopy()
	wrongKey.Status.NotBefore = &metav1.Time{Time: notBefore}
	wrongKey.Status.CertificateChain = ca.issue(t, foreign, notBefore, 2*time.Hour)
	_, err = c.UpdateStatus(ctx, wrongKey, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("certificate for another key: %v", err)
	}
	if want := `PodCertificateRequest.certificates.k8s.io "req" is invalid: status.certificateChain: Invalid value: "-----BEGIN CERTIFICATE-----`; !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), `-----END CERTIFICATE-----\n": leaf certificate was not issued to the requested public key`) {
		t.Errorf("certificate for another key: %v", err)
	}
	issued.Status.NotBefore = &metav1.Time{Time: notBefore}

	// 5. Moving the status needs "sign" on the signer: a user who may update the status
	// but not sign is refused (422), then allowed once granted "example.com/*".
	bob := certClient(t, s, "signer-bob")
	grant(t, s, ns, "pcr-status", []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"podcertificaterequests", "podcertificaterequests/status"}, Verbs: []string{"get", "list", "update"}}}, "signer-bob")
	_, err = bob.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx, issued, metav1.UpdateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "req" is invalid: spec.signerName: Forbidden: User "signer-bob" is not permitted to "sign" for signer "example.com/pods"`)
	grantCluster(t, s, "pcr-signer", []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"example.com/*"}, Verbs: []string{"sign"}}}, "signer-bob")
	done, err := bob.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx, issued, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status.CertificateChain != issued.Status.CertificateChain || !done.Status.NotBefore.Equal(&metav1.Time{Time: notBefore}) {
		t.Errorf("issued status: %+v", done.Status)
	}

	// 6. An issued request is final.
	again := done.DeepCopy()
	again.Status.Conditions[0].Message = "changed"
	_, err = c.UpdateStatus(ctx, again, metav1.UpdateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "req" is invalid: status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed`)

	// 7. Denied: conditions only.
	other, err := c.Create(ctx, newPCR("other", "example.com/other", stub), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	denied := other.DeepCopy()
	denied.Status.Conditions = []metav1.Condition{cond(certificatesv1.PodCertificateRequestConditionTypeDenied)}
	denied.Status.CertificateChain = "x"
	_, err = c.UpdateStatus(ctx, denied, metav1.UpdateOptions{})
	expectInvalid(t, err, `PodCertificateRequest.certificates.k8s.io "other" is invalid: status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest`)
	denied.Status.CertificateChain = ""
	if _, err := c.UpdateStatus(ctx, denied, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 8. Field selectors: spec.signerName, spec.podName, spec.nodeName; others refused.
	for sel, want := range map[string]int{"spec.signerName=" + signer: 1, "spec.signerName=example.com/other": 1, "spec.podName=pod-a": 2, "spec.nodeName=node-a": 2, "spec.nodeName=node-b": 0} {
		l, err := c.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil || len(l.Items) != want {
			t.Errorf("list %s: %d items, %v; want %d", sel, len(l.Items), err, want)
		}
	}
	_, err = c.List(ctx, metav1.ListOptions{FieldSelector: "spec.podUID=pod-uid"})
	if !apierrors.IsBadRequest(err) || err.Error() != `field label not supported: spec.podUID` {
		t.Errorf("unknown field selector: %v", err)
	}
}

// grant binds user to a Role of rules in ns.
func grant(t *testing.T, s *servertest.Server, ns, name string, rules []rbacv1.PolicyRule, user string) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := s.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta(name), Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta(name), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// grantCluster binds user to a ClusterRole of rules.
func grantCluster(t *testing.T, s *servertest.Server, name string, rules []rbacv1.PolicyRule, user string) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := s.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta(name), Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta(name), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// wantPlain500 fails unless err is a 500 with no reason and exactly want as its text: an
// admission plugin's plain error, as upstream answers it.
func wantPlain500(t *testing.T, what string, err error, want string) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != http.StatusInternalServerError || st.Status().Reason != "" || err.Error() != want {
		t.Errorf("%s:\n got %v\nwant 500 %q", what, err, want)
	}
}

// TestNodePodCertificateRequestsAreContained: with node-a's credentials, a kubelet asks
// certificates only for the pods bound to node-a, as themselves (their UIDs and service
// accounts), for a signer the pod mounts; it lists and watches only node-a's requests, reads
// only those, and neither changes nor deletes any. Every refusal is upstream's text.
func TestNodePodCertificateRequestsAreContained(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := s.Client
	a, b := nodeClient(t, s, "node-a"), nodeClient(t, s, "node-b")
	const ns = "work"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta("app")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeA, err := a.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: meta("node-a")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeB, err := b.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: meta("node-b")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const signer = "example.com/pods"
	podOn := func(name, node string) *corev1.Pod {
		p, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta(name), Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "app",
			Containers: []corev1.Container{{Name: "app", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "cert", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
				PodCertificate: &corev1.PodCertificateProjection{SignerName: signer, KeyType: "ED25519", CredentialBundlePath: "bundle.pem"}}}}}}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	podA, podB := podOn("pod-a", "node-a"), podOn("pod-b", "node-b")
	stub, _ := stubRequest(t)
	req := func(name string, pod *corev1.Pod, node *corev1.Node) *certificatesv1.PodCertificateRequest {
		return &certificatesv1.PodCertificateRequest{ObjectMeta: meta(name), Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: signer, PodName: pod.Name, PodUID: pod.UID, ServiceAccountName: "app", ServiceAccountUID: sa.UID,
			NodeName: types.NodeName(node.Name), NodeUID: node.UID, StubPKCS10Request: stub}}
	}
	create := func(c kubernetes.Interface, r *certificatesv1.PodCertificateRequest) error {
		_, err := c.CertificatesV1().PodCertificateRequests(ns).Create(ctx, r, metav1.CreateOptions{})
		return err
	}

	// 1. Creates: its own pods only, as they are.
	wantAllowed(t, "node-a asks for its pod", create(a, req("a-1", podA, nodeA)))
	wantAllowed(t, "node-b asks for its pod", create(b, req("b-1", podB, nodeB)))
	forbidden := func(name, msg string) string {
		return `podcertificaterequests.certificates.k8s.io "` + name + `" is forbidden: ` + msg
	}
	wantRefused(t, "node-a asks as node-b", create(a, req("x-1", podB, nodeB)), forbidden("x-1", `PodCertificateRequest.Spec.NodeName="node-b", which is not the requesting node "node-a"`))
	wantRefused(t, "node-a asks for node-b's pod", create(a, req("x-2", podB, nodeA)), forbidden("x-2", `pod "work/pod-b" is not running on node "node-a" named in the PodCertificateRequest`))
	otherSA := req("x-3", podA, nodeA)
	otherSA.Spec.ServiceAccountName = "default"
	wantRefused(t, "node-a asks for another service account", create(a, otherSA), forbidden("x-3", `PodCertificateRequest for pod "work/pod-a" contains serviceAccountName ("default") that differs from running pod ("app")`))
	otherSigner := req("x-4", podA, nodeA)
	otherSigner.Spec.SignerName = "example.com/other"
	wantRefused(t, "node-a asks a signer its pod does not mount", create(a, otherSigner), forbidden("x-4", `pod "work/pod-a" does not mount a podCertificate projected volume for signer "example.com/other"`))
	staleNode := req("x-5", podA, nodeA)
	staleNode.Spec.NodeUID = "old"
	wantPlain500(t, "node-a asks with a stale node UID", create(a, staleNode), fmt.Sprintf(`PodCertificateRequest for pod "work/pod-a" names node UID "old", inconsistent with the running node (%q)`, nodeA.UID))
	stalePod := req("x-6", podA, nodeA)
	stalePod.Spec.PodUID = "old"
	wantPlain500(t, "node-a asks with a stale pod UID", create(a, stalePod), fmt.Sprintf(`PodCertificateRequest for pod "work/pod-a" contains pod UID ("old") which differs from running pod %q`, podA.UID))
	ghost := req("x-7", podA, nodeA)
	ghost.Spec.PodName = "ghost"
	wantPlain500(t, "node-a asks for a pod that does not exist", create(a, ghost), `while retrieving pod "work/ghost" named in the PodCertificateRequest: pod "ghost" not found`)
	staleSA := req("x-8", podA, nodeA)
	staleSA.Spec.ServiceAccountUID = "old"
	wantPlain500(t, "node-a asks with a stale service account UID", create(a, staleSA), fmt.Sprintf(`PodCertificateRequest for pod "work/pod-a" names service account UID "old", which differs from the running service account (%q)`, sa.UID))
	// An administrator is not a node: NodeRestriction does not concern it.
	wantAllowed(t, "an administrator asks for any pod", create(admin, req("admin-1", podB, nodeA)))

	// 2. Reads: its own requests, listed and watched with its spec.nodeName selector.
	pcrs := a.CertificatesV1().PodCertificateRequests(ns)
	l, err := a.CertificatesV1().PodCertificateRequests("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
	if err != nil || len(l.Items) != 2 {
		t.Errorf("node-a lists its requests: %v %v", l, err)
	}
	w, err := a.CertificatesV1().PodCertificateRequests("").Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
	wantAllowed(t, "node-a watches its requests", err)
	if w != nil {
		w.Stop()
	}
	_, err = pcrs.Get(ctx, "a-1", metav1.GetOptions{})
	wantAllowed(t, "node-a reads its request", err)
	const user = `User "system:node:node-a" cannot `
	_, err = pcrs.Get(ctx, "b-1", metav1.GetOptions{})
	wantRefused(t, "node-a reads node-b's request", err, forbidden("b-1", user+`get resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "work": no relationship found between node 'node-a' and this object`))
	_, err = pcrs.List(ctx, metav1.ListOptions{})
	wantRefused(t, "node-a lists all requests", err, `podcertificaterequests.certificates.k8s.io is forbidden: `+user+`list resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "work": can only list/watch podcertificaterequests with nodeName field selector`)
	_, err = pcrs.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-b"})
	wantRefused(t, "node-a lists node-b's requests", err, `podcertificaterequests.certificates.k8s.io is forbidden: `+user+`list resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "work": can only list/watch podcertificaterequests with nodeName field selector`)

	// 3. Writes: none but creates.
	mine, err := pcrs.Get(ctx, "a-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mine.Status.Conditions = []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "Self", LastTransitionTime: metav1.Now()}}
	_, err = pcrs.UpdateStatus(ctx, mine, metav1.UpdateOptions{})
	wantRefused(t, "node-a issues its own request", err, forbidden("a-1", user+`update resource "podcertificaterequests/status" in API group "certificates.k8s.io" in the namespace "work": nodes may not access the status subresource of PodCertificateRequests`))
	mine.Labels = map[string]string{"x": "y"}
	_, err = pcrs.Update(ctx, mine, metav1.UpdateOptions{})
	wantRefused(t, "node-a relabels its request", err, forbidden("a-1", user+`update resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "work": nodes may not update podcertificaterequests`))
	err = pcrs.Delete(ctx, "a-1", metav1.DeleteOptions{})
	wantRefused(t, "node-a deletes its request", err, forbidden("a-1", user+`delete resource "podcertificaterequests" in API group "certificates.k8s.io" in the namespace "work": nodes may not delete podcertificaterequests`))
}
