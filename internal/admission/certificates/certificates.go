package certificates

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

// Checker checks the signer permissions of CSR approvals and signatures.
type Checker struct {
	// Resolver lists the rules a user holds; nil means none.
	Resolver auth.RuleResolver
}

// Validate refuses an /approval write without "approve", and a /status write that changes
// the certificate without "sign", on the request's signer.
func (c *Checker) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || a.Resource.GroupResource() != (certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests").GroupResource()) {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok || csr == nil {
		return nil
	}
	var verb string
	switch a.Subresource {
	case "approval":
		verb = "approve"
	case "status":
		old, _ := a.OldObject.(*certificatesv1.CertificateSigningRequest)
		if old == nil || bytes.Equal(old.Status.Certificate, csr.Status.Certificate) {
			return nil
		}
		verb = "sign"
	default:
		return nil
	}
	u := a.User
	if u.Name == "" || u.InGroup(auth.SystemMasters) {
		return nil
	}
	allowed, err := c.allowed(ctx, u, verb, csr.Spec.SignerName)
	if err != nil {
		return err
	}
	if !allowed {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to %s requests with signerName %q", verb, csr.Spec.SignerName))
	}
	return nil
}

var pcrResource = certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests").GroupResource()

// ValidatePodCertificateRequestStatus is the last step of upstream's validation of a
// PodCertificateRequest /status write (its status strategy's ValidateUpdate, which can ask
// the authorizer where quotad's strategies cannot): a write that changes the status needs
// "sign" on the request's signer, else it is Invalid with a Forbidden spec.signerName. It
// runs after the registry's validation and before the validating admission chain, as
// upstream's.
func (c *Checker) ValidatePodCertificateRequestStatus(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || a.Subresource != "status" || a.Resource.GroupResource() != pcrResource {
		return nil
	}
	n, ok := a.Object.(*certificatesv1.PodCertificateRequest)
	o, oldOK := a.OldObject.(*certificatesv1.PodCertificateRequest)
	if !ok || !oldOK || n == nil || o == nil || equality.Semantic.DeepEqual(o.Status, n.Status) {
		return nil
	}
	u := a.User
	if u.Name == "" || u.InGroup(auth.SystemMasters) {
		return nil
	}
	allowed, err := c.allowed(ctx, u, "sign", o.Spec.SignerName)
	if err != nil {
		return err
	}
	if allowed {
		return nil
	}
	return apierrors.NewInvalid(a.Kind.GroupKind(), a.Name, field.ErrorList{
		field.Forbidden(field.NewPath("spec", "signerName"), fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", u.Name, o.Spec.SignerName)),
	})
}

// allowed is upstream's IsAuthorizedForSignerName: the signer by name, then "<domain>/*".
func (c *Checker) allowed(ctx context.Context, u auth.User, verb, signer string) (bool, error) {
	if c.Resolver == nil {
		return false, nil
	}
	rules, _, err := c.Resolver.RulesFor(ctx, u, "")
	if err != nil {
		return false, err
	}
	attrs := auth.Attributes{User: u, Verb: verb, ResourceRequest: true, APIGroup: certificatesv1.GroupName, APIVersion: "*", Resource: "signers", Name: signer}
	if auth.RulesAllow(rules, &attrs) {
		return true, nil
	}
	domain, _, found := strings.Cut(signer, "/")
	if !found {
		return false, nil
	}
	attrs.Name = domain + "/*"
	return auth.RulesAllow(rules, &attrs), nil
}
