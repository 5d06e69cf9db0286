// Package csrsigning is upstream's kube-apiserver-client signer: once a
// CertificateSigningRequest for signerName kubernetes.io/kube-apiserver-client is Approved,
// it issues the client certificate with quotad's CA into status.certificate, so a user can
// get credentials as on a real cluster (create a CSR, have it approved with `kubectl
// certificate approve`, read the certificate).
//
// Invariants:
//   - Only Approved, not Failed requests of that signer without a certificate are signed;
//     a request whose usages are not client ones gets a Failed condition instead.
//   - The certificate's subject is the request's; it is valid from five minutes ago (clock
//     skew) for spec.expirationSeconds (at least ten minutes) or a year, never beyond the CA.
//   - The certificate is written through /status once; a conflict re-reads and re-checks.
package csrsigning
