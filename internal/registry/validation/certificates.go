package validation

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// certificates.k8s.io validation (upstream pkg/apis/certificates/validation).

const legacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// csrUsages are upstream's known key usages, sorted.
var csrUsages = func() []string {
	u := []string{"signing", "digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment",
		"cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", "code signing", "email protection",
		"s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"}
	slices.Sort(u)
	return u
}()

// csrOpts are upstream's certificateValidationOptions.
type csrOpts struct {
	settingApproval, settingCertificate                                                      bool
	bothApprovedAndDenied, legacySigner, dupConditions, emptyCondition, arbitraryCertificate bool
	unknownUsages, dupUsages                                                                 bool
}

func csrNoName(string, bool) []string { return nil }

// parseCSRRequest is upstream's ParseCSR plus the signature check.
func parseCSRRequest(pemBytes []byte) error {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

func csrCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return fmt.Errorf("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return fmt.Errorf("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return fmt.Errorf("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// signerName is upstream's ValidateSignerName.
func signerName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	segments := strings.Split(name, "/")
	if len(segments) != 2 {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(segments[0]) > utilvalidation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(p, "", utilvalidation.DNS1123SubdomainMaxLength))
	}
	domain := strings.Split(segments[0], ".")
	for _, l := range domain {
		if msgs := utilvalidation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, segments[0], fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	if len(domain) < 2 {
		errs = append(errs, field.Invalid(p, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(segments[1], ".") {
		if msgs := utilvalidation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, segments[1], fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	maxLen := 2*utilvalidation.DNS1123SubdomainMaxLength + utilvalidation.DNS1123LabelMaxLength + 2
	if len(name) > maxLen {
		errs = append(errs, field.TooLong(p, "", maxLen))
	}
	return errs
}

func csrErrs(csr *certificatesv1.CertificateSigningRequest, o csrOpts) field.ErrorList {
	errs := objectMeta(&csr.ObjectMeta, false, csrNoName, metaPath)
	sp := field.NewPath("spec")
	if err := parseCSRRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(sp.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(sp.Child("usages"), ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !o.unknownUsages && !slices.Contains(csrUsages, string(u)) {
			errs = append(errs, field.NotSupported(sp.Child("usages").Index(i), u, csrUsages))
		}
		if !o.dupUsages && seen[u] {
			errs = append(errs, field.Duplicate(sp.Child("usages").Index(i), u))
		}
		seen[u] = true
	}
	if !o.legacySigner && csr.Spec.SignerName == legacyUnknownSignerName {
		errs = append(errs, field.Invalid(sp.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, signerName(sp.Child("signerName"), csr.Spec.SignerName)...)
	}
	if e := csr.Spec.ExpirationSeconds; e != nil && *e < 600 {
		errs = append(errs, field.Invalid(sp.Child("expirationSeconds"), *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	cp := field.NewPath("status", "conditions")
	types := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range csr.Status.Conditions {
		if !o.emptyCondition && c.Type == "" {
			errs = append(errs, field.Required(cp.Index(i).Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(cp.Index(i).Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(cp.Index(i).Child("status"), c.Status, allowed))
		}
		if !o.bothApprovedAndDenied {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved = true
				if denied {
					errs = append(errs, field.Invalid(cp, c.Type, "Approved and Denied conditions are mutually exclusive"))
				}
			case certificatesv1.CertificateDenied:
				denied = true
				if approved {
					errs = append(errs, field.Invalid(cp, c.Type, "Approved and Denied conditions are mutually exclusive"))
				}
			}
		}
		if !o.dupConditions && types[c.Type] {
			errs = append(errs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
		}
		types[c.Type] = true
	}
	if !o.arbitraryCertificate {
		if err := csrCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// CertificateSigningRequest validates a CertificateSigningRequest on create.
func CertificateSigningRequest(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return csrErrs(csr, csrOpts{})
}

func csrConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// updateOptions tolerates, as upstream, what the stored object already has.
func csrUpdateOpts(n, o *certificatesv1.CertificateSigningRequest) csrOpts {
	var opts csrOpts
	opts.bothApprovedAndDenied = len(csrConditions(o, certificatesv1.CertificateApproved)) > 0 && len(csrConditions(o, certificatesv1.CertificateDenied)) > 0
	opts.legacySigner = o.Spec.SignerName == legacyUnknownSignerName
	seen := map[certificatesv1.RequestConditionType]bool{}
	for _, c := range o.Status.Conditions {
		opts.dupConditions = opts.dupConditions || seen[c.Type]
		opts.emptyCondition = opts.emptyCondition || c.Type == ""
		seen[c.Type] = true
	}
	opts.arbitraryCertificate = bytes.Equal(n.Status.Certificate, o.Status.Certificate) && csrCertificate(o.Status.Certificate) != nil
	useen := map[certificatesv1.KeyUsage]bool{}
	for _, u := range o.Spec.Usages {
		opts.unknownUsages = opts.unknownUsages || !slices.Contains(csrUsages, string(u))
		opts.dupUsages = opts.dupUsages || useen[u]
		useen[u] = true
	}
	return opts
}

// CertificateSigningRequestUpdate validates an update through the main
// resource (subresource ""), /status or /approval: only /approval may add or
// change Approved and Denied conditions, only /status may set the certificate.
func CertificateSigningRequestUpdate(n, o *certificatesv1.CertificateSigningRequest, subresource string) field.ErrorList {
	opts := csrUpdateOpts(n, o)
	opts.settingCertificate = subresource == "status"
	opts.settingApproval = subresource == "approval"
	errs := csrErrs(n, opts)
	cp := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(csrConditions(n, t)) < len(csrConditions(o, t)) {
			errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !opts.settingApproval {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oc, nc := csrConditions(o, t), csrConditions(n, t)
			switch {
			case len(nc) < len(oc):
			case len(nc) > len(oc):
				errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !equality.Semantic.DeepEqual(oc, nc):
				errs = append(errs, field.Forbidden(cp, fmt.Sprintf("updates may not modify a condition of type %q", t)))
			}
		}
	}
	if !bytes.Equal(n.Status.Certificate, o.Status.Certificate) {
		cert := field.NewPath("status", "certificate")
		if !opts.settingCertificate {
			errs = append(errs, field.Forbidden(cert, "updates may not set certificate content"))
		} else if len(o.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(cert, "updates may not modify existing certificate content"))
		}
	}
	return append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}
