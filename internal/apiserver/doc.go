// Package apiserver is quotad's HTTP edge: routing of the Kubernetes REST paths, discovery,
// OpenAPI v3, get/list/watch/create/update/patch/delete handlers, status and scale
// subresources, server-side Table output, dryRun and fieldValidation, authentication, and the
// only place that writes metav1.Status errors.
//
// Before a handler, a request goes through kube-apiserver's filters, in its order (edge.go):
// the request deadline (?timeout=, at most Config.RequestTimeout; watches excepted),
// authentication, the receiving of a write's body (body.go), the in-flight bounds (reads and
// writes apart; watches excepted), then the handler in a goroutine of its own, so that the
// client gets upstream's 504 at the deadline whatever the handler waits on.
//
// Invariants:
//   - every response is a Kubernetes object or a metav1.Status, except where upstream
//     answers in plain text: the 429 of the in-flight bounds, the 500 of a handler panic and
//     the 504 of the timeout, each byte for byte as upstream;
//   - a handler never panics the process: panics become 500s, are logged with their stack
//     and counted (Config.ObservePanic);
//   - no request outlives its deadline: the deadline is on its context (storage work stops)
//     and on the connection's reads (a body that stops arriving fails) and writes;
//   - a body's memory grows with the bytes that arrive, never with its declared length;
//     bodies over 3 MiB are refused with 413 before decoding;
//   - a write's body is received before the write takes an in-flight seat, so a slow body
//     holds no seat; the bodies held at once are bounded in bytes
//     (MaxBodyBytesInFlight), past which a write gets the in-flight 429;
//   - an unlimited list costs one storage page of memory: it is read and encoded page by
//     page, its bytes those of encoding the whole list at once; its pages after the first
//     are read and encoded holding one of MaxLongReads seats (fair.go), so long lists
//     queue for CPU while requests that take no such seat do not;
//   - a watch's initial events are read from storage as its client takes them: one that
//     never reads holds about one page of them;
//   - a watch ends at its timeoutSeconds (or between MinRequestTimeout and twice it) even
//     when its client reads nothing, and is closed when its client falls
//     WatchBacklogBytes behind the changes;
//   - a 5xx answer is logged once (repeats of a line are rate-limited), every request at
//     RequestLogLevel.
package apiserver
