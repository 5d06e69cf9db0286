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
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// PodCertificateRequest is the strategy of podcertificaterequests (upstream's
// pkg/registry/certificates/podcertificaterequest). The spec is immutable; the main
// resource keeps the stored status and /status the stored spec and metadata (the store
// does both). The "sign" permission a status change needs is checked by admission
// (internal/admission/certificates), which can ask the authorizer.
type PodCertificateRequest struct{}

// Default sets upstream's default maxExpirationSeconds.
func (PodCertificateRequest) Default(obj runtime.Object) {
	defaults.PodCertificateRequest(obj.(*certificatesv1.PodCertificateRequest))
}

// PrepareForCreate empties the status, as upstream.
func (PodCertificateRequest) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
}

// Validate returns upstream's errors for a new request.
func (PodCertificateRequest) Validate(obj runtime.Object) field.ErrorList {
	return validation.PodCertificateRequest(obj.(*certificatesv1.PodCertificateRequest))
}

// ValidateUpdate returns upstream's errors for a main-resource update.
func (PodCertificateRequest) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PodCertificateRequestUpdate(obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest))
}

// ValidateSubresourceUpdateAt validates /status with its own rules, at the server's time.
func (PodCertificateRequest) ValidateSubresourceUpdateAt(subresource string, obj, old runtime.Object, now time.Time) (field.ErrorList, bool) {
	if subresource != "status" {
		return nil, false
	}
	return validation.PodCertificateRequestStatusUpdate(obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest), now), true
}

// Fields adds upstream's field labels spec.signerName, spec.podName and spec.nodeName.
func (PodCertificateRequest) Fields(obj runtime.Object, set fields.Set) {
	r := obj.(*certificatesv1.PodCertificateRequest)
	set["spec.signerName"] = r.Spec.SignerName
	set["spec.podName"] = r.Spec.PodName
	set["spec.nodeName"] = string(r.Spec.NodeName)
}

// ConvertToTable prints upstream's columns.
func (PodCertificateRequest) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PodCertificateRequestPrinter().Convert(objs, now, include, false)
}

// ConvertFieldLabel is upstream's field label conversion of certificates.k8s.io/v1
// PodCertificateRequests: metadata.namespace is not among them (a request is read in its
// namespace's path).
func (PodCertificateRequest) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "spec.signerName", "spec.podName", "spec.nodeName":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}
