package apiserver

import (
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/audit"
	"github.com/quotad/quotad/internal/auth"
)

// The edge's part of the audit trail (kube-apiserver's audit filters): every request gets
// an audit ID, answered in the Audit-Id header; once the request is authenticated the
// policy decides its level, and its events are recorded as it is served.

// auditInit gives the request its audit ID: the one the client sent in Audit-ID, else a
// new UUID, and answers it in the Audit-Id header, as upstream's audit-init filter.
func (s *Server) auditInit(w *recorder, r *http.Request) {
	id := r.Header.Get(audit.HeaderAuditID)
	if id == "" {
		id = uuid.NewString()
	}
	w.auditID = id
	w.received = time.Now()
	w.Header().Set(audit.HeaderAuditID, id)
}

// auditBegin starts the audit of a request made by u and records RequestReceived. It returns the request carrying the audit in its context, and
// false when blocking-strict mode could not store the event (the request was answered
// with upstream's 500).
func (s *Server) auditBegin(w *recorder, r *http.Request, u *auth.User) (*http.Request, bool) {
	if s.cfg.Audit == nil {
		return r, true
	}
	attrs, ref, long := auditAttributes(r)
	attrs.User = *u
	a := s.cfg.Audit.Start(r, w.auditID, w.received, w.received.Add(s.cfg.RequestTimeout), attrs, ref, long)
	if a == nil {
		return r, true
	}
	r = r.WithContext(audit.WithRequest(r.Context(), a))
	if !a.Received() {
		audit.FailedToStore(w, r)
		return r, false
	}
	if a.CapturesRequestBody() && r.Body != nil && r.Body != http.NoBody {
		r.Body = &auditBody{ReadCloser: r.Body, a: a}
	}
	w.audit = a
	return r, true
}

// auditUnauthenticated records a request answered 401 as upstream: one ResponseStarted
// event without a user, saying which credentials were tried.
func (s *Server) auditUnauthenticated(w *recorder, r *http.Request) {
	if s.cfg.Audit == nil {
		return
	}
	attrs, ref, long := auditAttributes(r)
	if a := s.cfg.Audit.Start(r, w.auditID, w.received, w.received.Add(s.cfg.RequestTimeout), attrs, ref, long); a != nil {
		a.FailedAuthentication(r, http.StatusUnauthorized)
	}
}

// auditAnonymous begins the audit of a request served without authentication (the
// health checks), as upstream's anonymous user.
func (s *Server) auditAnonymous(w *recorder, r *http.Request) (*http.Request, bool) {
	if s.cfg.Audit == nil {
		return r, true
	}
	return s.auditBegin(w, r, &auth.User{Name: auth.Anonymous, Groups: []string{auth.AllUnauthenticated}})
}

// auditEnd records the request's last event with the status it was answered.
func (s *Server) auditEnd(w *recorder) {
	if w.audit == nil {
		return
	}
	if w.err != nil {
		st := statusOf(w.err)
		if int(st.Code) == w.status || w.status == 0 {
			w.audit.Complete(&st)
			return
		}
	}
	w.audit.Complete(nil)
}

// auditAttributes are the request's authorizer attributes (user aside), the object it is
// about and whether it is long-running.
func auditAttributes(r *http.Request) (auth.Attributes, *audit.ObjectReference, bool) {
	// The same attributes authorization decides on, as upstream's audit and authorization
	// filters read one RequestInfo.
	info, isResource := parseAPIPath(r)
	a := requestAttributes(r, info, isResource, auth.User{})
	if !isResource {
		return a, nil, false
	}
	ref := &audit.ObjectReference{
		Resource: info.Resource, Namespace: info.Namespace, Name: info.Name,
		APIGroup: info.Group, APIVersion: info.Version, Subresource: info.Subresource,
	}
	return a, ref, info.Verb == "watch"
}

// auditBody records a request's body as the handler reads it.
type auditBody struct {
	io.ReadCloser
	a *audit.Request
}

func (b *auditBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.a.RequestBody(p[:n])
	}
	return n, err
}

// auditExtra begins the audit of a request to an extra path (metrics, debug), which
// authenticates for itself: as its user when its credentials are good, else with none.
func (s *Server) auditExtra(w *recorder, r *http.Request) (*http.Request, bool) {
	if s.cfg.Audit == nil {
		return r, true
	}
	var u auth.User
	if s.cfg.Auth != nil {
		u, _ = s.cfg.Auth.Authenticate(r)
	}
	return s.auditBegin(w, r, &u)
}

// auditRequestObject completes the audit's object reference from the object a request
// sent, as upstream's LogRequestObject: its name, namespace, uid and resourceVersion where
// the path did not say them.
func auditRequestObject(r *http.Request, obj runtime.Object) {
	if a := audit.From(r.Context()); a != nil {
		m := metaOf(obj)
		a.RequestObjectMeta(m.Namespace, m.Name, m.UID, m.ResourceVersion)
	}
}

// auditRequestJSON records a request's body as JSON when it was sent in another encoding
// (protobuf), as upstream records the object decoded.
func auditRequestJSON(r *http.Request, j []byte) {
	if a := audit.From(r.Context()); a != nil && a.CapturesRequestBody() {
		a.RequestJSON(j)
	}
}
