package validation

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodCertificateRequest validation (upstream pkg/apis/certificates/validation,
// ValidatePodCertificateRequest*).

// Upstream's limits (pkg/apis/certificates).
const (
	pcrMaxStubPKCS10RequestSize          = 10 * 1024
	pcrMaxCertificateChainSize           = 100 * 1024
	pcrMinMaxExpirationSeconds           = 60 * 60
	pcrMaxMaxExpirationSeconds           = 91 * 24 * 60 * 60
	pcrKubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
	pcrUIDMaxLength                      = 128
)

var (
	pcrPKIXPath         = field.NewPath("spec", "pkixPublicKey")
	pcrPKCS10Path       = field.NewPath("spec", "stubPKCS10Request")
	pcrCertChainPath    = field.NewPath("status", "certificateChain")
	pcrNotBeforePath    = field.NewPath("status", "notBefore")
	pcrNotAfterPath     = field.NewPath("status", "notAfter")
	pcrBeginRefreshPath = field.NewPath("status", "beginRefreshAt")
	pcrConditionTypes   = []string{certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}
)

// isKubernetesSignerName is upstream's IsKubernetesSignerName: a signer of kubernetes.io or
// one of its subdomains.
func isKubernetesSignerName(signer string) bool {
	host, _, _ := strings.Cut(signer, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// userAnnotations is upstream's ValidateUserAnnotations: domain-prefixed keys (compared in
// lower case) within the annotations' total size.
func userAnnotations(a map[string]string, p *field.Path) field.ErrorList {
	errs := field.ErrorList{}
	for k := range a {
		errs = append(errs, utilvalidation.IsDomainPrefixedKey(p, strings.ToLower(k))...)
	}
	if err := apimachineryvalidation.ValidateAnnotationsSize(a); err != nil {
		errs = append(errs, field.TooLong(p, "", apimachineryvalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// PodCertificateRequest validates a PodCertificateRequest on create (upstream's
// ValidatePodCertificateRequestCreate): metadata, the signer, the pod, service account and
// node it names, maxExpirationSeconds within the signer's range, and either a stub PKCS#10
// request or the deprecated PKIX public key with its proof of possession (signed over the
// pod UID), with a supported key.
func PodCertificateRequest(req *certificatesv1.PodCertificateRequest) field.ErrorList {
	errs := objectMeta(&req.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	sp := field.NewPath("spec")
	s := &req.Spec
	errs = append(errs, signerName(sp.Child("signerName"), s.SignerName)...)
	if s.UnverifiedUserAnnotations != nil {
		errs = append(errs, userAnnotations(s.UnverifiedUserAnnotations, sp.Child("unverifiedUserAnnotations"))...)
	}
	for _, msg := range nameIsDNSSubdomain(s.PodName, false) {
		errs = append(errs, field.Invalid(sp.Child("podName"), s.PodName, msg))
	}
	errs = append(errs, pcrUID(sp.Child("podUID"), s.PodUID)...)
	for _, msg := range nameIsDNSSubdomain(s.ServiceAccountName, false) {
		errs = append(errs, field.Invalid(sp.Child("serviceAccountName"), s.ServiceAccountName, msg))
	}
	errs = append(errs, pcrUID(sp.Child("serviceAccountUID"), s.ServiceAccountUID)...)
	for _, msg := range nameIsDNSSubdomain(string(s.NodeName), false) {
		errs = append(errs, field.Invalid(sp.Child("nodeName"), s.NodeName, msg))
	}
	errs = append(errs, pcrUID(sp.Child("nodeUID"), s.NodeUID)...)

	if s.MaxExpirationSeconds == nil {
		return append(errs, field.Required(sp.Child("maxExpirationSeconds"), "must be set"))
	}
	maxMax := int32(pcrMaxMaxExpirationSeconds)
	if isKubernetesSignerName(s.SignerName) {
		maxMax = pcrKubernetesMaxMaxExpirationSeconds // Kubernetes signers: at most 24 hours
	}
	if e := *s.MaxExpirationSeconds; e < pcrMinMaxExpirationSeconds || e > maxMax {
		errs = append(errs, field.Invalid(sp.Child("maxExpirationSeconds"), s.MaxExpirationSeconds, fmt.Sprintf("must be in the range [%d, %d]", pcrMinMaxExpirationSeconds, maxMax)))
	}

	// v1 has no pkixPublicKey and proofOfPossession (v1beta1's, deprecated): a v1 request
	// is valid with a stub PKCS#10 request only.
	if len(s.StubPKCS10Request) != 0 {
		return append(errs, pcrStubPKCS10Request(s.StubPKCS10Request)...)
	}
	return append(errs, field.Invalid(sp, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
}

// pcrUID is upstream's check of a UID the request names: set, at most 128 bytes.
func pcrUID(p *field.Path, uid types.UID) field.ErrorList {
	var errs field.ErrorList
	if len(uid) == 0 {
		errs = append(errs, field.Invalid(p, uid, "must not be empty"))
	}
	if len(uid) > pcrUIDMaxLength {
		errs = append(errs, field.TooLong(p, uid, pcrUIDMaxLength))
	}
	return errs
}

// pcrStubPKCS10Request is upstream's validateStubPKCS10Request: a DER PKCS#10 request with
// a supported key and a valid signature; its contents are not checked.
func pcrStubPKCS10Request(der []byte) field.ErrorList {
	if len(der) > pcrMaxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pcrPKCS10Path, der, pcrMaxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pcrPKCS10Path, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(pcrPKCS10Path, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pcrPKCS10Path, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pcrPKCS10Path, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if req.CheckSignature() != nil {
		return field.ErrorList{field.Invalid(pcrPKCS10Path, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

// pcrSpecInternal has the fields of upstream's internal PodCertificateRequestSpec, in its
// order and with no JSON tags: an immutable-spec error prints the spec as JSON of that
// type, whose keys are the Go field names (PKIXPublicKey and ProofOfPossession, v1beta1's,
// are null for a v1 request).
type pcrSpecInternal struct {
	SignerName                string
	PodName                   string
	PodUID                    types.UID
	ServiceAccountName        string
	ServiceAccountUID         types.UID
	NodeName                  types.NodeName
	NodeUID                   types.UID
	MaxExpirationSeconds      *int32
	PKIXPublicKey             []byte
	ProofOfPossession         []byte
	StubPKCS10Request         []byte
	UnverifiedUserAnnotations map[string]string
}

func pcrSpecAsInternal(s *certificatesv1.PodCertificateRequestSpec) pcrSpecInternal {
	return pcrSpecInternal{
		SignerName: s.SignerName, PodName: s.PodName, PodUID: s.PodUID,
		ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: s.ServiceAccountUID,
		NodeName: s.NodeName, NodeUID: s.NodeUID, MaxExpirationSeconds: s.MaxExpirationSeconds,
		StubPKCS10Request: s.StubPKCS10Request, UnverifiedUserAnnotations: s.UnverifiedUserAnnotations,
	}
}

// PodCertificateRequestUpdate validates an update through the main resource (upstream's
// ValidatePodCertificateRequestUpdate): only metadata may change; the spec is immutable.
func PodCertificateRequestUpdate(n, o *certificatesv1.PodCertificateRequest) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, immutable(pcrSpecAsInternal(&n.Spec), pcrSpecAsInternal(&o.Spec), field.NewPath("spec"))...)
}

// pcrCondition reports whether the request has a condition of type t with status True.
func pcrCondition(req *certificatesv1.PodCertificateRequest, t string) bool {
	for _, c := range req.Status.Conditions {
		if c.Type == t && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

func pcrTerminal(req *certificatesv1.PodCertificateRequest) bool {
	return pcrCondition(req, certificatesv1.PodCertificateRequestConditionTypeIssued) ||
		pcrCondition(req, certificatesv1.PodCertificateRequestConditionTypeDenied) ||
		pcrCondition(req, certificatesv1.PodCertificateRequestConditionTypeFailed)
}

// pcrUnchanged is upstream's validateSemanticEquality.
func pcrUnchanged(a, b any, p *field.Path, detail string) field.ErrorList {
	if !equality.Semantic.DeepEqual(a, b) {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, detail)}
	}
	return nil
}

// pcrConditionPath is upstream's path of a condition's field: the index is an element of
// its own ("status.conditions.[0].type").
func pcrConditionPath(i int, f string) *field.Path {
	return field.NewPath("status", "conditions", "["+strconv.Itoa(i)+"]", f)
}

// PodCertificateRequestStatusUpdate validates a /status update (upstream's
// ValidatePodCertificateRequestStatusUpdate) at the server's time now: the request moves
// once, from pending to Issued, Denied or Failed (one such condition, True), and is then
// immutable; an issued chain's leaf certificate must be for the requested key, with
// notBefore (within 5 minutes of now), notAfter and beginRefreshAt consistent with it and
// a lifetime between an hour and spec.maxExpirationSeconds. n's spec and metadata are
// expected to be o's (the strategy keeps them).
func PodCertificateRequestStatusUpdate(n, o *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	if errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath); len(errs) > 0 {
		return errs
	}
	// 1. At most one known condition, True; no other types.
	var errs field.ErrorList
	known := 0
	for i, c := range n.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			known++
			if known > 1 {
				errs = append(errs, field.Invalid(pcrConditionPath(i, "type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(pcrConditionPath(i, "status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(pcrConditionPath(i, "type"), c.Type, pcrConditionTypes))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(n.Status.Conditions, field.NewPath("status", "conditions"))...)
	if len(errs) > 0 {
		return errs
	}
	status := field.NewPath("status")
	// 2. A terminal request's status never changes again.
	if pcrTerminal(o) {
		return pcrUnchanged(n.Status, o.Status, status, "immutable after PodCertificateRequest is issued, denied, or failed")
	}
	// 3. Denied or Failed: conditions only.
	if pcrCondition(n, certificatesv1.PodCertificateRequestConditionTypeDenied) || pcrCondition(n, certificatesv1.PodCertificateRequestConditionTypeFailed) {
		want := certificatesv1.PodCertificateRequestStatus{Conditions: n.Status.Conditions}
		return pcrUnchanged(n.Status, want, status, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	}
	// 4. Issued: the chain and its times.
	if pcrCondition(n, certificatesv1.PodCertificateRequestConditionTypeIssued) {
		return pcrIssued(n, o, now)
	}
	// 5. Still pending: nothing may change.
	return pcrUnchanged(n.Status, o.Status, status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// pcrIssued checks an issued request's certificate chain and times, as upstream.
func pcrIssued(n, o *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	st := &n.Status
	chain := st.CertificateChain
	if len(chain) > pcrMaxCertificateChainSize {
		return field.ErrorList{field.TooLong(pcrCertChainPath, chain, pcrMaxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(pcrCertChainPath, chain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(pcrCertChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(pcrCertChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	var errs field.ErrorList
	for _, dns := range leaf.DNSNames {
		if dns == "" {
			errs = append(errs, field.Invalid(pcrCertChainPath, dns, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(dns, "..") {
			errs = append(errs, field.Invalid(pcrCertChainPath, dns, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(dns, ".") || strings.HasSuffix(dns, ".") {
			errs = append(errs, field.Invalid(pcrCertChainPath, dns, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, email := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(email); err != nil {
			errs = append(errs, field.Invalid(pcrCertChainPath, email, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	// The key the request asked a certificate for (v1 requests name it in their stub
	// request; upstream falls back to v1beta1's pkixPublicKey, which v1 has not).
	var want crypto.PublicKey
	if len(o.Spec.StubPKCS10Request) != 0 {
		req, err := x509.ParseCertificateRequest(o.Spec.StubPKCS10Request)
		if err != nil {
			return append(errs, field.Invalid(pcrPKCS10Path, field.OmitValueType{}, "must be a valid PKCS#10 CSR"))
		}
		want = req.PublicKey
	} else if want, err = x509.ParsePKIXPublicKey(nil); err != nil {
		return append(errs, field.Invalid(pcrPKIXPath, field.OmitValueType{}, "must be a valid PKIX-serialized public key"))
	}
	issuedTo := true
	switch k := want.(type) { // upstream compares the three key types it accepts
	case ed25519.PublicKey:
		issuedTo = k.Equal(leaf.PublicKey)
	case *rsa.PublicKey:
		issuedTo = k.Equal(leaf.PublicKey)
	case *ecdsa.PublicKey:
		issuedTo = k.Equal(leaf.PublicKey)
	}
	if !issuedTo {
		return append(errs, field.Invalid(pcrCertChainPath, chain, "leaf certificate was not issued to the requested public key"))
	}
	if st.NotBefore == nil {
		errs = append(errs, field.Required(pcrNotBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(pcrNotAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(pcrBeginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	notBefore, notAfter, refresh := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	switch lifetime := leaf.NotAfter.Sub(leaf.NotBefore); {
	case !notBefore.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(pcrNotBeforePath, notBefore, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(notBefore.After(now.Add(-5*time.Minute)) && notBefore.Before(now.Add(5*time.Minute))):
		return field.ErrorList{field.Invalid(pcrNotBeforePath, notBefore, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !notAfter.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(pcrNotAfterPath, notAfter, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(pcrCertChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case lifetime > time.Duration(*n.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(pcrCertChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *n.Spec.MaxExpirationSeconds))}
	case refresh.Before(notBefore.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(pcrBeginRefreshPath, refresh, "must be at least 10 minutes after status.notBefore")}
	case refresh.After(notAfter.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(pcrBeginRefreshPath, refresh, "must be at least 10 minutes before status.notAfter")}
	}
	// The rest of the chain: certificates, not verified (a partial chain cannot be).
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil
		}
		if block.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(pcrCertChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return field.ErrorList{field.Invalid(pcrCertChainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}
