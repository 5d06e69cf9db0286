// Package pcrcleaner is kube-controller-manager's podcertificaterequest-cleaner-controller
// (pkg/controller/certificates/cleaner): every period (5 minutes) it deletes each
// PodCertificateRequest created at least the threshold (15 minutes) ago, whatever its
// state (pending, Issued, Denied or Failed): every flow is expected to complete well
// within that time, and the kubelet keeps what it was issued, not the request.
//
// Invariants:
//   - A pass reads the requests from storage when it runs; each delete is guarded by the
//     UID read, so a request deleted and created again under the same name meanwhile is
//     kept (and a request already gone is no error).
//   - A request already being deleted (held by finalizers) is not deleted again: the
//     delete would change nothing, as a request has no grace period.
//   - Time is the injected clock's: the age of a request and the period between passes,
//     which starts when a pass ends (upstream's wait.UntilWithContext). Nothing sleeps.
//   - It writes no Events: upstream's logs its start, its stop and each failed delete.
package pcrcleaner
