// Package audit is quotad's audit trail, as kube-apiserver's: audit.k8s.io/v1 Events (one
// JSON object per line, as upstream's log backend writes them), the audit.k8s.io/v1 Policy
// file format and its evaluation (first matching rule wins), and the log backend with
// upstream's rotation (lumberjack) and modes.
//
// A request's events are built by a Request (kept in the request's context by the HTTP
// edge): RequestReceived once authenticated, ResponseStarted when a long-running request
// (a watch) starts its answer, then ResponseComplete, or Panic when its handler panicked.
// Other layers add to the request's event through the context: Annotate (for example
// authorization.k8s.io/decision) and SetImpersonatedUser.
//
// Invariants:
//   - an event is encoded when its stage is reached, so later changes to the request's
//     event never alter an event already sent;
//   - writing never blocks a request past its deadline: the backend's buffer is bounded;
//     in blocking mode (upstream's default for the log backend) a request waits for room
//     until its deadline, in batch mode not at all; every event not written is counted in
//     apiserver_audit_error_total{plugin="log"};
//   - without a policy nothing is audited, as kube-apiserver (a log path alone records
//     nothing); a policy that does not parse or validate stops startup.
package audit
