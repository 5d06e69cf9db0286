package defaults

import (
	certificatesv1 "k8s.io/api/certificates/v1"
)

// PodCertificateRequest applies upstream's PodCertificateRequest default (the +default
// marker of spec.maxExpirationSeconds): 86400 seconds, a day.
func PodCertificateRequest(r *certificatesv1.PodCertificateRequest) {
	if r.Spec.MaxExpirationSeconds == nil {
		day := int32(86400)
		r.Spec.MaxExpirationSeconds = &day
	}
}
