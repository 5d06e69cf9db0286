package certificates

import (
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// CertificateSigningRequest is the strategy of certificatesigningrequests.
type CertificateSigningRequest struct{}

// Fields adds upstream's field label spec.signerName.
func (CertificateSigningRequest) Fields(obj runtime.Object, set fields.Set) {
	set["spec.signerName"] = obj.(*certificatesv1.CertificateSigningRequest).Spec.SignerName
}

// ConvertToTable prints upstream's columns.
func (CertificateSigningRequest) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.CSRPrinter().Convert(objs, now, include, false)
}

// Validate returns upstream's errors for a new request.
func (CertificateSigningRequest) Validate(obj runtime.Object) field.ErrorList {
	return validation.CertificateSigningRequest(obj.(*certificatesv1.CertificateSigningRequest))
}

// ValidateUpdate returns upstream's errors for a main-resource update.
func (CertificateSigningRequest) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.CertificateSigningRequestUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest), "")
}

// ValidateSubresourceUpdate validates /status and /approval with their own rules.
func (CertificateSigningRequest) ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool) {
	return validation.CertificateSigningRequestUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest), subresource), true
}

// PrepareForCreate sets what upstream's strategy sets on a new request: the requesting
// user's identity and an empty status.
func (CertificateSigningRequest) PrepareForCreate(obj runtime.Object, u auth.User, _ metav1.Time) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = u.Name, u.UID, u.Groups, nil
	if len(u.Extra) > 0 {
		csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range u.Extra {
			csr.Spec.Extra[k] = v
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
}

// PrepareForUpdate is upstream's split of an update: the spec never changes; the main
// resource keeps the status; /status keeps the Approved and Denied conditions as stored
// (when their number is unchanged) and may set the certificate; /approval changes only the
// conditions. Conditions get their timestamps.
func (CertificateSigningRequest) PrepareForUpdate(obj, old runtime.Object, subresource string, now metav1.Time) {
	n, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	n.Spec = *o.Spec.DeepCopy()
	switch subresource {
	case "":
		n.Status = *o.Status.DeepCopy()
	case "status":
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oi, ni := conditionIndices(o, t), conditionIndices(n, t)
			if len(oi) == len(ni) {
				for i := range oi {
					n.Status.Conditions[ni[i]] = *o.Status.Conditions[oi[i]].DeepCopy()
				}
			}
		}
		conditionTimes(n, o, now)
	case "approval":
		conditionTimes(n, o, now)
		conds := n.Status.Conditions
		n.Status = *o.Status.DeepCopy()
		n.Status.Conditions = conds
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// conditionTimes is upstream's populateConditionTimestamps.
func conditionTimes(n, o *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
			for _, oc := range o.Status.Conditions {
				if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
					c.LastTransitionTime = oc.LastTransitionTime
					break
				}
			}
		}
	}
}

// ConvertFieldLabel is upstream's field label conversion of certificates.k8s.io/v1
// CertificateSigningRequests (no metadata.namespace: they are cluster-scoped).
func (CertificateSigningRequest) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "spec.signerName":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// StatusKeepsMetadata: a CertificateSigningRequest's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (CertificateSigningRequest) StatusKeepsMetadata() bool { return true }
