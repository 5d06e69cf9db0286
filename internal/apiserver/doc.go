// Package apiserver is quotad's HTTP edge: routing of the Kubernetes REST paths, discovery,
// OpenAPI v3, get/list/watch/create/update/patch/delete handlers, status and scale
// subresources, server-side Table output, dryRun and fieldValidation, authentication, and the
// only place that writes metav1.Status errors.
//
// Before a handler, a request goes through kube-apiserver's filters, in its order (edge.go):
// the request deadline (?timeout=, at most Config.RequestTimeout; watches excepted),
// authentication, impersonation (Impersonate-* headers, each part allowed by the
// "impersonate" verb), authorization (Config.Authz, with upstream's request attributes and
// 403 texts; authorize.go), the receiving of a write's body (body.go), the in-flight bounds
// (reads and writes apart; watches excepted), then the handler in a goroutine of its own, so that the client gets upstream's
// 504 at the deadline whatever the handler waits on.
//
// Discovery (discovery.go, aggregated.go) serves /api and /apis in two forms chosen by
// content negotiation as kube-apiserver's: the legacy APIVersions / APIGroupList (with
// /api/v1 and /apis/<group>/<version> resource lists), or, when a media range of the
// Accept header asks for application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList
// (or YAML, or protobuf), the aggregated document of every group, version, resource and
// subresource at once (freshness Current, preferred version first), with the ETag
// kube-apiserver computes (the SHA-512 of its JSON) and 304 on a matching If-None-Match.
// As in v1.37, apidiscovery v2beta1 is no longer served (such a range is skipped). Groups
// are listed in kube-apiserver's order (its aggregator's group priorities, then names).
// Both are built from the same per-resource entries of the live catalogue, so a custom
// resource is listed in both as soon as its CRD is Established; the aggregated documents
// are cached per catalogue generation.
//
// The audit trail (audit.go, package internal/audit) wraps them as upstream's audit filters:
// every request gets an audit ID (the client's Audit-ID, else a UUID) answered in the
// Audit-Id header; once authenticated, the policy decides its level from its user and
// attributes and RequestReceived is recorded; ResponseStarted when a watch starts its
// answer; ResponseComplete (or Panic) with the status answered, the edge's 429, 500 and 504
// included. A request that fails authentication is recorded once, without a user, as
// upstream. Later filters add to the event through the request's context
// (audit.Annotate, audit.SetImpersonatedUser).
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
//   - an unlimited list costs one storage page of memory: it is read, encoded and written
//     page by page, its bytes those of encoding the whole list at once (for JSON, the
//     stored bytes); its pages after the first are read, encoded and written holding one
//     of MaxLongReads seats (fair.go), so long lists queue for CPU while requests that
//     take no such seat do not, and while such requests are served a seat rests three
//     times as long as a page held it (long reads are background work);
//   - a request's work is bounded and charged as it grows (fair.go, patchcost.go): JSON
//     patches by internal/jsonpatch (10,000 operations, 3 MiB of copies, stopped with the
//     request), strategic merges refused past MaxStrategicMergeCost, selectors compiled so
//     that matching costs an object's labels; long selectors, large patches and patches
//     whose work grows past HeavyWorkBytes hold a seat of long reads while they work;
//   - a request's query is parsed once (query.go);
//   - a watch's initial events are read from storage as its client takes them: one that
//     never reads holds about one page of them; a JSON watch writes them from the
//     stored bytes;
//   - a watch ends at its timeoutSeconds (or between MinRequestTimeout and twice it) even
//     when its client reads nothing, and is closed when its client falls
//     WatchBacklogBytes behind the changes; it ends between revisions, never inside one
//     (the events one transaction commits share a resourceVersion, and a client resumes
//     after the last one it saw: registry.Event.MidRevision);
//   - a request without credentials gets upstream's 401 Status, except the health paths,
//     /version (upstream's system:public-info-viewer) and Extra handlers that are
//     SelfAuthenticating (the cluster join endpoint), which check credentials of their own
//     and are audited without bodies; a credential that does not verify is a 401 everywhere
//     but the health paths and those handlers;
//   - review resources (registry.Resource.Review: TokenReview, SubjectAccessReview and the
//     like) and serviceaccounts/<name>/token serve create only (405 otherwise) and store
//     nothing: Config.Reviews and Config.TokenRequest answer them;
//   - componentstatuses (registry.Resource.Synthesized) serve get and list only, computed on
//     each request (etcd-0 from Config.Ready) with upstream's deprecation warning;
//   - a 5xx answer is logged once (repeats of a line are rate-limited), every request at
//     RequestLogLevel;
//   - every request to a served resource that passed authentication and authorization is
//     told once answered to Config.Requests with kube-apiserver's request metric labels,
//     and watches and connect requests also while open (metrics.go); label values are
//     bounded by the catalogue, and the edge imports no metrics library.
package apiserver
