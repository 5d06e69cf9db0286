package csrsigning

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ParseCSR reads a request's PEM as upstream does (its messages).
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// Upstream's texts for requests a kubelet signer refuses.
var (
	errOrganizationNotNodes = errors.New("subject organization is not system:nodes")
	errCommonNameNotNode    = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPRequired      = errors.New("DNS or IP subjectAltName is required")
	errDNSNotAllowed        = errors.New("DNS subjectAltNames are not allowed")
	errEmailNotAllowed      = errors.New("Email subjectAltNames are not allowed")
	errIPNotAllowed         = errors.New("IP subjectAltNames are not allowed")
	errURINotAllowed        = errors.New("URI subjectAltNames are not allowed")
)

// The usages a kubelet's certificates have: with key encipherment (RSA keys) or without.
var (
	kubeletClientUsages       = sets.New("digital signature", "key encipherment", "client auth")
	kubeletClientUsagesNoRSA  = sets.New("digital signature", "client auth")
	kubeletServingUsages      = sets.New("digital signature", "key encipherment", "server auth")
	kubeletServingUsagesNoRSA = sets.New("digital signature", "server auth")
)

func usageSet(usages []certificatesv1.KeyUsage) sets.Set[string] {
	s := sets.New[string]()
	for _, u := range usages {
		s.Insert(string(u))
	}
	return s
}

// KubeletClient checks a kubelet's client certificate request as upstream: subject
// system:node:<name> in system:nodes, no subject alternative names, a client's usages.
func KubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotNodes
	}
	switch {
	case len(req.DNSNames) > 0:
		return errDNSNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPNotAllowed
	case len(req.URIs) > 0:
		return errURINotAllowed
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotNode
	}
	if u := usageSet(usages); !u.Equal(kubeletClientUsages) && !u.Equal(kubeletClientUsagesNoRSA) {
		return fmt.Errorf("usages did not match %v", sets.List(kubeletClientUsages))
	}
	return nil
}

// KubeletServing checks a kubelet's serving certificate request as upstream: subject
// system:node:<name> in system:nodes, DNS names or IP addresses only, a server's usages.
func KubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotNodes
	}
	switch {
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errDNSOrIPRequired
	case len(req.EmailAddresses) > 0:
		return errEmailNotAllowed
	case len(req.URIs) > 0:
		return errURINotAllowed
	}
	if u := usageSet(usages); !u.Equal(kubeletServingUsages) && !u.Equal(kubeletServingUsagesNoRSA) {
		return fmt.Errorf("usages did not match %v", sets.List(kubeletServingUsages))
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotNode
	}
	return nil
}

// apiServerClient checks the usages of a kube-apiserver-client request.
func apiServerClient(usages []certificatesv1.KeyUsage) error {
	hasClient := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClient = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClient {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// Check reports why signer would refuse the request (nil: it signs it).
func Check(signer string, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch signer {
	case certificatesv1.KubeAPIServerClientSignerName:
		return apiServerClient(usages)
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		return KubeletClient(req, usages)
	case certificatesv1.KubeletServingSignerName:
		return KubeletServing(req, usages)
	}
	return fmt.Errorf("unrecognized signerName: %q", signer)
}

// x509 usages of the API's key usages, as upstream's signing policy maps them.
var (
	keyUsageOf = map[certificatesv1.KeyUsage]x509.KeyUsage{
		certificatesv1.UsageSigning: x509.KeyUsageDigitalSignature, certificatesv1.UsageDigitalSignature: x509.KeyUsageDigitalSignature,
		certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment, certificatesv1.UsageKeyEncipherment: x509.KeyUsageKeyEncipherment,
		certificatesv1.UsageKeyAgreement: x509.KeyUsageKeyAgreement, certificatesv1.UsageDataEncipherment: x509.KeyUsageDataEncipherment,
		certificatesv1.UsageCertSign: x509.KeyUsageCertSign, certificatesv1.UsageCRLSign: x509.KeyUsageCRLSign,
		certificatesv1.UsageEncipherOnly: x509.KeyUsageEncipherOnly, certificatesv1.UsageDecipherOnly: x509.KeyUsageDecipherOnly,
	}
	extKeyUsageOf = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
		certificatesv1.UsageAny: x509.ExtKeyUsageAny, certificatesv1.UsageServerAuth: x509.ExtKeyUsageServerAuth,
		certificatesv1.UsageClientAuth: x509.ExtKeyUsageClientAuth, certificatesv1.UsageCodeSigning: x509.ExtKeyUsageCodeSigning,
		certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection, certificatesv1.UsageSMIME: x509.ExtKeyUsageEmailProtection,
		certificatesv1.UsageIPsecEndSystem: x509.ExtKeyUsageIPSECEndSystem, certificatesv1.UsageIPsecTunnel: x509.ExtKeyUsageIPSECTunnel,
		certificatesv1.UsageIPsecUser: x509.ExtKeyUsageIPSECUser, certificatesv1.UsageTimestamping: x509.ExtKeyUsageTimeStamping,
		certificatesv1.UsageOCSPSigning: x509.ExtKeyUsageOCSPSigning, certificatesv1.UsageMicrosoftSGC: x509.ExtKeyUsageMicrosoftServerGatedCrypto,
		certificatesv1.UsageNetscapeSGC: x509.ExtKeyUsageNetscapeServerGatedCrypto,
	}
)

// keyUsages maps usages to the certificate's key usage and sorted extended key usages.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var ku x509.KeyUsage
	var unknown []certificatesv1.KeyUsage
	ext := map[x509.ExtKeyUsage]bool{}
	for _, u := range usages {
		if v, ok := keyUsageOf[u]; ok {
			ku |= v
		} else if v, ok := extKeyUsageOf[u]; ok {
			ext[v] = true
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	var eku []x509.ExtKeyUsage
	for v := range ext {
		eku = append(eku, v)
	}
	sort.Slice(eku, func(i, j int) bool { return eku[i] < eku[j] })
	return ku, eku, nil
}
