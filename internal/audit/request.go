package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/auth"
)

// Upstream's annotation keys of authorization decisions.
const (
	AnnotationDecision = "authorization.k8s.io/decision"
	AnnotationReason   = "authorization.k8s.io/reason"
)

// HeaderAuditID is the header a request's audit ID is answered in (and may be given in).
const HeaderAuditID = "Audit-ID"

// maxUserAgent is how much of a User-Agent is recorded, as upstream.
const maxUserAgent = 1024

// lateWait is how long an event sent past its request's deadline (the last event of a
// request answered with the timeout, or of a watch) may wait for room in the backend.
const lateWait = 10 * time.Second

// maxCapture bounds the bytes of a response body kept for responseObject; a longer
// response is recorded without it.
const maxCapture = 16 << 20

// Request is one request's audit: its event, the policy's decision and the bodies it
// records. Its methods are safe for concurrent use (a handler may still run after the
// edge answered its timeout).
type Request struct {
	backend  *Backend
	decision Decision
	longRun  bool
	// deadline is how long the request's events may wait for room in the backend.
	deadline time.Time

	mu        sync.Mutex
	ev        Event
	started   bool
	panicked  bool
	reqBody   bytes.Buffer
	respBody  bytes.Buffer
	respOver  bool
	captureRq bool
	captureRs bool
}

type requestKey struct{}

// WithRequest returns ctx carrying the request's audit.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// From returns the request's audit, nil when the request is not audited.
func From(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// Annotate adds an annotation to the request's event (the first value of a key stays, as
// upstream); it does nothing for a request not audited.
func Annotate(ctx context.Context, key, value string) {
	r := From(ctx)
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ev.Annotations == nil {
		r.ev.Annotations = map[string]string{}
	}
	if _, ok := r.ev.Annotations[key]; !ok {
		r.ev.Annotations[key] = value
	}
}

// SetImpersonatedUser records the user a request acts as; it does nothing for a request
// not audited.
func SetImpersonatedUser(ctx context.Context, u auth.User) {
	r := From(ctx)
	if r == nil {
		return
	}
	ui := userInfo(u)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ev.ImpersonatedUser = &ui
}

func userInfo(u auth.User) authnv1.UserInfo {
	ui := authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		ui.Extra = make(map[string]authnv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			ui.Extra[k] = v
		}
	}
	return ui
}

// Auditor starts the audit of requests: a policy and a backend. A nil *Auditor audits
// nothing.
type Auditor struct {
	checker *Checker
	backend *Backend
}

// NewAuditor returns an Auditor; nil when either part is missing (kube-apiserver records
// nothing without both a policy and a backend).
func NewAuditor(c *Checker, b *Backend) *Auditor {
	if c == nil || b == nil {
		return nil
	}
	return &Auditor{checker: c, backend: b}
}

// Start decides the level of a request (its authorizer attributes; a zero User for a
// request that failed authentication) and, unless it is None, returns its audit. ref is
// the object a resource request is about; longRunning requests (watches) also record
// ResponseStarted. The request's events wait for room in the backend until deadline.
func (a *Auditor) Start(r *http.Request, id string, received, deadline time.Time, attrs auth.Attributes, ref *ObjectReference, longRunning bool) *Request {
	if a == nil {
		return nil
	}
	d := a.checker.Decide(attrs)
	if d.Level == LevelNone || d.Level.ordinal() < 0 {
		return nil
	}
	ua := r.UserAgent()
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent] + "...TRUNCATED"
	}
	var ips []string
	for _, ip := range utilnet.SourceIPs(r) {
		ips = append(ips, ip.String())
	}
	req := &Request{backend: a.backend, decision: d, longRun: longRunning, deadline: deadline}
	req.ev = Event{
		TypeMeta: metav1.TypeMeta{Kind: KindEvent, APIVersion: APIVersion},
		Level:    d.Level, AuditID: types.UID(id), RequestURI: r.URL.RequestURI(), Verb: attrs.Verb,
		User: userInfo(attrs.User), SourceIPs: ips, UserAgent: ua, ObjectRef: ref,
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		req.captureRq = !d.Level.Less(LevelRequest)
	}
	req.captureRs = d.Level == LevelRequestResponse && !longRunning
	return req
}

// Level is the request's audit level.
func (r *Request) Level() Level { return r.decision.Level }

// CapturesRequestBody reports whether the request's body should be passed to
// RequestBody: it is recorded at Request and above.
func (r *Request) CapturesRequestBody() bool { return r.captureRq }

// OmitBodies makes the request's events carry neither its body nor its response's,
// whatever the level: for paths whose bodies hold secrets (the cluster join endpoint).
// Call it on the request's goroutine before its handler runs.
func (r *Request) OmitBodies() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.captureRq, r.captureRs = false, false
}

// RequestBody records bytes of the request's body as they are read.
func (r *Request) RequestBody(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.captureRq {
		return
	}
	if r.reqBody.Len()+len(p) <= maxCapture {
		r.reqBody.Write(p)
	}
}

// RequestObjectMeta completes the object reference from the object the request sent
// (what its path did not say), at every level, as upstream.
func (r *Request) RequestObjectMeta(namespace, name string, uid types.UID, resourceVersion string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := r.ev.ObjectRef
	if ref == nil {
		return
	}
	if ref.Namespace == "" {
		ref.Namespace = namespace
	}
	if ref.Name == "" {
		ref.Name = name
	}
	if ref.UID == "" {
		ref.UID = uid
	}
	if ref.ResourceVersion == "" {
		ref.ResourceVersion = resourceVersion
	}
}

// RequestJSON replaces the request's body recorded with its JSON form (of a body sent
// in protobuf).
func (r *Request) RequestJSON(j []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqBody.Reset()
	if len(j) <= maxCapture {
		r.reqBody.Write(j)
	}
}

// ResponseBody records bytes of the response's body at RequestResponse.
func (r *Request) ResponseBody(p []byte) {
	if !r.captureRs {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.respOver {
		return
	}
	if r.respBody.Len()+len(p) > maxCapture {
		r.respOver = true
		r.respBody = bytes.Buffer{}
		return
	}
	r.respBody.Write(p)
}

// Received sends the RequestReceived event. ok is false only in blocking-strict mode
// when it could not be stored: the request must then fail (FailedToStore).
func (r *Request) Received() (ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ev.Stage = StageRequestReceived
	r.ev.StageTimestamp = r.ev.RequestReceivedTimestamp
	return r.sendLocked() || r.backend.Mode() != ModeBlockingStrict
}

// FailedToStore is upstream's answer to a request whose event blocking-strict mode could
// not store.
func FailedToStore(w http.ResponseWriter, req *http.Request) {
	sanitizer := strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")
	http.Error(w, sanitizer.Replace(fmt.Sprintf("Internal Server Error: %q: %v", req.RequestURI, "failed to store audit event")), http.StatusInternalServerError)
}

// ResponseStarted notes the response's code when its header is written; a long-running
// request then records ResponseStarted.
func (r *Request) ResponseStarted(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	if r.ev.ResponseStatus == nil {
		r.ev.ResponseStatus = &metav1.Status{}
	}
	r.ev.ResponseStatus.Code = int32(code)
	if r.longRun {
		r.ev.Stage = StageResponseStarted
		r.ev.StageTimestamp = metav1.NewMicroTime(time.Now())
		r.sendLocked()
	}
}

// FailedAuthentication records a request that failed authentication as upstream: one
// ResponseStarted event with no user, its code and which credentials were tried.
func (r *Request) FailedAuthentication(req *http.Request, code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
	r.ev.ResponseStatus = &metav1.Status{Message: authMethods(req), Code: int32(code)}
	r.ev.Stage = StageResponseStarted
	r.ev.StageTimestamp = metav1.NewMicroTime(time.Now())
	r.sendLocked()
}

// authMethods is upstream's account of the credentials a request tried.
func authMethods(req *http.Request) string {
	var m []string
	if _, _, ok := req.BasicAuth(); ok {
		m = append(m, "basic")
	}
	parts := strings.Split(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	if len(parts) > 1 && strings.ToLower(parts[0]) == "bearer" {
		m = append(m, "bearer")
	}
	if strings.Contains(req.URL.RawQuery, "access_token") && strings.TrimSpace(req.URL.Query().Get("access_token")) != "" {
		m = append(m, "access_token")
	}
	if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
		m = append(m, "x509")
	}
	if len(m) > 0 {
		return "Authentication failed, attempted: " + strings.Join(m, ", ")
	}
	return "Authentication failed, no credentials provided"
}

// Panicked notes that the request's handler panicked: the request ends with the Panic
// stage instead of ResponseComplete.
func (r *Request) Panicked(p any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.panicked = true
	r.ev.ResponseStatus = &metav1.Status{
		Code: http.StatusInternalServerError, Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError,
		Message: fmt.Sprintf("APIServer panic'd: %v", p),
	}
}

// Complete sends the request's last event: Panic, or ResponseComplete with the status
// answered (failed is the Status of an error answer, nil for success) and, by level, the
// request and response objects. A request that wrote no header is recorded as upstream
// fakes it: 200 "Connection closed early".
func (r *Request) Complete(failed *metav1.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.panicked {
		r.ev.Stage = StagePanic
		r.ev.StageTimestamp = metav1.NewMicroTime(time.Now())
		r.sendLocked()
		return
	}
	fake := &metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"}
	if r.ev.ResponseStatus == nil && r.longRun {
		r.ev.ResponseStatus = fake
		r.ev.Stage = StageResponseStarted
		r.ev.StageTimestamp = metav1.NewMicroTime(time.Now())
		r.sendLocked()
	}
	if r.ev.ResponseStatus == nil {
		r.ev.ResponseStatus = fake
	}
	if failed != nil {
		r.ev.ResponseStatus = &metav1.Status{Status: failed.Status, Message: failed.Message, Reason: failed.Reason, Details: failed.Details, Code: failed.Code}
	}
	r.objectsLocked()
	r.ev.Stage = StageResponseComplete
	r.ev.StageTimestamp = metav1.NewMicroTime(time.Now())
	r.sendLocked()
}

// objectsLocked fills, by level, requestObject and responseObject.
func (r *Request) objectsLocked() {
	if r.reqBody.Len() > 0 {
		body := asJSON(r.reqBody.Bytes())
		if !r.decision.Level.Less(LevelRequest) && body != nil {
			r.ev.RequestObject = r.trim(body)
		}
	}
	if r.captureRs && !r.respOver && r.respBody.Len() > 0 {
		if body := asJSON(r.respBody.Bytes()); body != nil {
			r.ev.ResponseObject = r.trim(body)
		}
	}
}

// trim drops managedFields when the policy says so.
func (r *Request) trim(body json.RawMessage) json.RawMessage {
	if !r.decision.OmitManagedFields {
		return body
	}
	return omitManagedFields(body)
}

// asJSON returns a body as compact JSON: JSON as it is, YAML converted; nil for anything
// else (protobuf).
func asJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		return buf.Bytes()
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil || len(j) == 0 || j[0] != '{' {
		return nil
	}
	return j
}

// omitManagedFields removes metadata.managedFields from an object and from each item of
// a list.
func omitManagedFields(body json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	changed := dropManaged(obj)
	if raw, ok := obj["items"]; ok {
		var items []map[string]json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			dropped := false
			for _, it := range items {
				if dropManaged(it) {
					dropped = true
				}
			}
			if dropped {
				if b, err := json.Marshal(items); err == nil {
					obj["items"], changed = b, true
				}
			}
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}

func dropManaged(obj map[string]json.RawMessage) bool {
	raw, ok := obj["metadata"]
	if !ok {
		return false
	}
	var md map[string]json.RawMessage
	if json.Unmarshal(raw, &md) != nil {
		return false
	}
	if _, ok := md["managedFields"]; !ok {
		return false
	}
	delete(md, "managedFields")
	b, err := json.Marshal(md)
	if err != nil {
		return false
	}
	obj["metadata"] = b
	return true
}

// sendLocked encodes the event at its stage and hands it to the backend unless the
// policy omits the stage; it reports false when the event was dropped.
func (r *Request) sendLocked() bool {
	if r.decision.Omits(r.ev.Stage) {
		return true
	}
	b, err := json.Marshal(&r.ev)
	if err != nil {
		return false
	}
	deadline := r.deadline
	if now := time.Now(); r.ev.Stage != StageRequestReceived && now.After(deadline) {
		deadline = now.Add(lateWait)
	}
	return r.backend.Process(deadline, append(b, '\n'))
}
