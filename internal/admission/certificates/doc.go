// Package certificates is upstream's CertificateApproval and CertificateSigning admission:
// approving or denying a CertificateSigningRequest (a write to /approval) needs the "approve"
// verb, and setting its certificate (a /status write that changes status.certificate) the
// "sign" verb, on the certificates.k8s.io "signers" resource named after the request's
// signerName (or its "<domain>/*" wildcard). So a user allowed to update CSRs cannot approve
// a request for a signer they do not own, such as kubernetes.io/kube-apiserver-client,
// which issues credentials for any identity.
//
// It also holds the "sign" check of a PodCertificateRequest /status write
// (ValidatePodCertificateRequestStatus), which upstream makes in the kind's status strategy:
// changing the status needs "sign" on the request's signer, and its refusal is a 422
// (`PodCertificateRequest.certificates.k8s.io "x" is invalid: spec.signerName: Forbidden:
// User "u" is not permitted to "sign" for signer "y"`).
//
// Invariants:
//   - Only /approval and /status writes of CertificateSigningRequests are checked; in-process
//     controllers (no request user) and system:masters are not.
//   - With no RuleResolver nobody else holds any permission.
//   - Refusals are upstream's 403s: `certificatesigningrequests.certificates.k8s.io "x" is
//     forbidden: user not permitted to approve requests with signerName "y"`.
package certificates
