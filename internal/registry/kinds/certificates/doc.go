// Package certificates holds the strategies of the certificates.k8s.io/v1 kinds
// (CertificateSigningRequest, PodCertificateRequest): one file per kind, each
// the kind's defaulting, create and update preparation, validation, warnings, field
// selectors and table printer (registry.Strategy and its optional interfaces), calling
// the defaults, validation and table libraries. Strategies hold no state and do no IO.
package certificates
