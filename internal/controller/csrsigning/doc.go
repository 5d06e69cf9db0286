// Package csrsigning is upstream's csrsigning controller for the three kubernetes.io
// signers a cluster needs: once a CertificateSigningRequest is Approved, it issues the
// certificate with quotad's CA into status.certificate.
//   - kubernetes.io/kube-apiserver-client: client certificates for any user (create a CSR,
//     have it approved with `kubectl certificate approve`, read the certificate);
//   - kubernetes.io/kube-apiserver-client-kubelet: a kubelet's client certificate
//     (system:node:<name> in system:nodes, no subject alternative names), which
//     csrapproving approves for bootstrap tokens and for nodes renewing their own;
//   - kubernetes.io/kubelet-serving: a kubelet's serving certificate (DNS names and IP
//     addresses only), signed once someone approves it.
//
// Invariants:
//   - Only Approved, not Failed requests of these signers without a certificate are signed;
//     a request its signer refuses gets a Failed condition (SignerValidationFailure) with
//     upstream's message instead.
//   - The certificate's subject and alternative names are the request's, its usages the
//     ones asked; it is valid from five minutes ago (clock skew) for spec.expirationSeconds
//     (between ten minutes and a year) or a year, never beyond the CA.
//   - The certificate is written through /status once; a conflict re-reads and re-checks.
package csrsigning
