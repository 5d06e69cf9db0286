package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/audit"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry"
)

// MaxBodyBytes is the largest request body accepted (kube-apiserver's 3 MiB).
const MaxBodyBytes = 3 << 20

// Authenticator maps a request to its user, or reports it unauthenticated.
type Authenticator interface {
	Authenticate(r *http.Request) (user auth.User, ok bool)
}

// TableConverter renders objects of one resource as a server-side Table.
type TableConverter func(res *registry.Resource, objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error)

// OpenAPI serves the /openapi/v3 documents and /openapi/v2.
type OpenAPI interface {
	// Index returns the /openapi/v3 document.
	Index() ([]byte, error)
	// Document returns the document of one group-version path ("api/v1") and its hash.
	Document(path string) (doc []byte, hash string, ok bool, err error)
	// ServeV2 serves GET /openapi/v2 (JSON or protobuf by the Accept header).
	ServeV2(w http.ResponseWriter, r *http.Request)
}

// Config wires a Server.
type Config struct {
	Store *registry.Store
	Auth  Authenticator
	// Authz authorizes every authenticated API request (and impersonation); nil allows
	// every authenticated user everything.
	Authz auth.Authorizer
	// Table converts one object (a GET, a watch event); ListTable converts a list's items,
	// or one page of them (nil: Table). They differ for the kinds whose printer looks
	// across a list (registry.ListTableConvertor).
	Table     TableConverter
	ListTable TableConverter
	OpenAPI   OpenAPI
	// Extra serves non-API paths (metrics, debug) before authentication checks of API paths;
	// keys are exact paths or prefixes ending in "/". Their requests must carry good API
	// credentials, unless the handler is SelfAuthenticating.
	Extra map[string]http.Handler
	// Clock is the server's now (nil: the real clock).
	Clock   clock.PassiveClock
	Logger  *slog.Logger
	Version version.Info
	// Ready reports readiness for /readyz.
	Ready func(ctx context.Context) error
	// FieldManagers tracks field ownership for server-side apply; nil merges an applied
	// configuration onto the live object without managedFields.
	FieldManagers FieldManagers

	// RequestTimeout is the deadline of every request but watches (kube-apiserver's
	// --request-timeout); a request's ?timeout= may only shorten it. Zero is
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MinRequestTimeout: a watch without timeoutSeconds ends after a random time between
	// it and twice it (kube-apiserver's --min-request-timeout). Zero is
	// DefaultMinRequestTimeout.
	MinRequestTimeout time.Duration
	// MaxRequestsInflight bounds the reads (get, list, discovery) served at once and
	// MaxMutatingRequestsInflight the writes, as kube-apiserver's --max-requests-inflight
	// (400 there) and --max-mutating-requests-inflight (200); past them a request gets
	// upstream's 429. Watches are not counted. Zero is no bound.
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// QueueLength is how many requests of one client (user) may wait for a seat of a
	// full bound, shared fairly among the clients waiting (flow.go); zero refuses at once,
	// as kube-apiserver's max-in-flight filter without priority and fairness. Negative is
	// DefaultQueueLength.
	QueueLength int
	// Penalties slow down the clients whose requests keep being refused (penalty.go);
	// the zero value is DefaultPenalties, a zero Rate with a non-zero Burst none.
	Penalties Penalties
	// ObserveQueueWaiting, when set, is told when a request starts (+1) and stops (-1)
	// waiting for an in-flight seat.
	ObserveQueueWaiting func(delta int)
	// ObservePenalty, when set, is told of every request held for its client's penalty.
	ObservePenalty func()
	// MaxWatchesPerUser bounds the watches one user (system:masters aside) holds open at
	// once; past it a watch gets the in-flight 429. Zero is DefaultMaxWatchesPerUser,
	// negative no bound.
	MaxWatchesPerUser int
	// MaxBodyBytesInFlight bounds the memory of the request bodies received or served at
	// once; a body that would pass it gets the in-flight 429. Zero is
	// DefaultMaxBodyBytesInFlight.
	MaxBodyBytesInFlight int64
	// MaxLongReads is how many pages of long reads (un-paged lists and watches' initial
	// events beyond their first page) are read and encoded at once; the others wait
	// within their deadline (see fair.go). Zero is half of GOMAXPROCS, at least one.
	MaxLongReads int
	// WatchBacklogBytes is how far, in encoded bytes, a watch may fall behind the changes
	// it is sent before it is closed (its client re-lists, as from upstream's watch cache).
	// Zero is DefaultWatchBacklogBytes.
	WatchBacklogBytes int
	// ObserveWatchWaiting, when set, is told when a watch starts (+1) and stops (-1)
	// waiting for its client to take its initial events.
	ObserveWatchWaiting func(delta int)
	// ObserveLongReadWaiting, when set, is told when a page of a long read starts (+1) and
	// stops (-1) waiting for its seat (MaxLongReads).
	ObserveLongReadWaiting func(delta int)
	// ObservePanic, when set, is called once per handler panic recovered.
	ObservePanic func()
	// Requests, when set, is told of the requests kube-apiserver's request metrics count
	// (metrics.go).
	Requests RequestObserver
	// Reviews answer creates of the review resources (registry.Resource.Review), by
	// group-resource; a review resource without one answers 405.
	Reviews map[schema.GroupResource]Review
	// TokenRequest answers the serviceaccounts/token subresource (nil: 405).
	TokenRequest TokenRequester
	// EvictionAdmission, when set, admits a pods/eviction create (its object the Eviction)
	// before the eviction is decided, as upstream's admission chain does.
	EvictionAdmission func(ctx context.Context, a *admission.Attributes) error
	// Audit records the audit trail; nil records nothing.
	Audit *audit.Auditor
}

// FieldManagers gives the server-side apply field manager of a resource.
type FieldManagers interface {
	For(res *registry.Resource) (*managedfields.FieldManager, error)
}

// Server is the HTTP edge.
type Server struct {
	cfg       Config
	inflight  *inflight
	penalties *penaltyBox
	watches   *watchCounts
	bodies    *bodyBudget
	pager     *pager
	// pages are page buffers of lists (see streamList).
	pages sync.Pool
	logs  logLimiter
	// discovery caches the aggregated discovery documents.
	discovery discoveryCache
	// workers run the handlers of requests (withDeadline).
	workers *handlerWorkers
	// serving counts the requests being served (Drain).
	serving serving
}

// DefaultWatchBacklogBytes is how far a watch may fall behind by default.
const DefaultWatchBacklogBytes = 8 << 20

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MinRequestTimeout <= 0 {
		cfg.MinRequestTimeout = DefaultMinRequestTimeout
	}
	if cfg.WatchBacklogBytes <= 0 {
		cfg.WatchBacklogBytes = DefaultWatchBacklogBytes
	}
	if cfg.MaxLongReads <= 0 {
		cfg.MaxLongReads = heavySeats()
	}
	if cfg.MaxBodyBytesInFlight <= 0 {
		cfg.MaxBodyBytesInFlight = DefaultMaxBodyBytesInFlight
	}
	if cfg.QueueLength < 0 {
		cfg.QueueLength = DefaultQueueLength
	}
	if cfg.Penalties.Burst == 0 && cfg.Penalties.Rate == 0 {
		cfg.Penalties = DefaultPenalties
	}
	return &Server{cfg: cfg, inflight: newInflight(cfg.MaxRequestsInflight, cfg.MaxMutatingRequestsInflight, cfg.QueueLength, cfg.ObserveQueueWaiting),
		penalties: newPenaltyBox(cfg.Penalties, cfg.Clock), watches: newWatchCounts(cfg.MaxWatchesPerUser),
		bodies: &bodyBudget{max: cfg.MaxBodyBytesInFlight}, pager: newPager(cfg.MaxLongReads, cfg.ObserveLongReadWaiting),
		workers: newHandlerWorkers()}
}

// SelfAuthenticating is an Extra handler that checks credentials of its own (the cluster
// join endpoint, whose callers hold a join token, not an API credential): the edge passes
// it requests without API credentials, and audits them without their bodies.
type SelfAuthenticating interface {
	http.Handler
	AuthenticatesItself()
}

// ServeHTTP serves one request: health and extra paths as they are; API requests
// authenticated, bounded in number (watches aside) and, watches aside, given a deadline;
// every request logged once answered, and a panic in any handler recovered.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serving.begin()
	defer s.serving.end() // last: after the audit event is written
	start := time.Now()
	r = withQuery(r)
	rec := &recorder{ResponseWriter: w}
	s.auditInit(rec, r)
	defer s.logRequest(rec, r, start)
	defer s.auditEnd(rec)
	defer func() {
		if p := recover(); p != nil {
			if rec.audit != nil && p != http.ErrAbortHandler {
				rec.audit.Panicked(p)
			}
			if p == http.ErrAbortHandler || !s.recovered(rec, r, p, debug.Stack()) {
				panic(http.ErrAbortHandler)
			}
		}
	}()
	s.serve(rec, r)
	if rec.penalty != "" && refusal(rec.status) {
		s.penalties.refused(rec.penalty)
	}
}

// serve is ServeHTTP's routing (the order of kube-apiserver's filters: request deadline,
// authentication, impersonation, authorization, max-in-flight, then the handler).
func (s *Server) serve(w *recorder, r *http.Request) {
	path := r.URL.Path
	switch path {
	case "/healthz", "/livez", "/readyz", "/healthz/", "/livez/", "/readyz/":
		// Everyone may ask, but a credential that does not verify is a 401 here too, as
		// upstream's authentication filter answers before anything else.
		if s.cfg.Auth != nil && !anonymous(r) {
			if _, ok := s.cfg.Auth.Authenticate(r); !ok {
				s.unauthorized(w, r)
				return
			}
		}
		if r, ok := s.auditAnonymous(w, r); ok {
			s.health(w, r)
		}
		return
	}
	for p, h := range s.cfg.Extra {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			// Extra paths authorize for themselves, but a request without good
			// credentials is refused here, as on the API paths, unless the path checks
			// credentials of its own.
			_, own := h.(SelfAuthenticating)
			if s.cfg.Auth != nil && !own {
				if _, ok := s.cfg.Auth.Authenticate(r); !ok {
					s.unauthorized(w, r)
					return
				}
			}
			if r, ok := s.auditExtra(w, r); ok {
				if a := audit.From(r.Context()); a != nil && own {
					// Its bodies hold secrets (join tokens, keys).
					a.OmitBodies()
				}
				h.ServeHTTP(w, r)
			}
			return
		}
	}
	info, isResource := parseAPIPath(r)
	watch := isResource && info.Verb == "watch"
	var timeout time.Duration
	if !watch {
		var err error
		if timeout, err = s.requestTimeout(r); err != nil {
			writeError(w, err)
			return
		}
	}
	if s.cfg.Auth != nil {
		if (path == "/version" || path == "/version/") && anonymous(r) {
			// Upstream's system:public-info-viewer lets everyone read /version.
			w.user = auth.Anonymous
			writeJSON(w, http.StatusOK, s.versionInfo())
			return
		}
		user, ok := s.cfg.Auth.Authenticate(r)
		if !ok {
			s.unauthorized(w, r)
			return
		}
		w.user = user.Name
		// A client whose requests keep being refused waits here, before anything is done
		// for its request (penalty.go).
		if !exempt(user) {
			w.penalty = userClient(user.Name)
			if !s.penalties.wait(r.Context(), w.penalty, s.cfg.ObservePenalty) {
				w.penalty = ""
				tooManyRequests(w)
				return
			}
		}
		// Upstream's filter order: authentication, audit, impersonation, authorization.
		if r, ok = s.auditBegin(w, r, &user); !ok {
			return
		}
		if s.cfg.Authz != nil {
			requester := user
			if user, ok = s.impersonate(w, r, user); !ok {
				return
			}
			if user.Name != requester.Name || len(r.Header.Values(impersonateUserHeader)) > 0 {
				audit.SetImpersonatedUser(r.Context(), user)
			}
			w.user = user.Name
			if !s.allowed(w, r, requestAttributes(r, info, isResource, user)) {
				return
			}
		}
		r = r.WithContext(auth.WithUser(r.Context(), user))
	}
	if isResource {
		s.measure(w, r, info)
	}
	if watch {
		if u, ok := auth.UserFrom(r.Context()); ok && !exempt(u) {
			done, ok := s.watches.open(u.Name)
			if !ok {
				tooManyRequests(w)
				return
			}
			defer done()
		}
		defer s.longRunning(w)()
		s.serveAPI(w, r, info, isResource)
		return
	}
	mutating, ok := r.Method != http.MethodGet && r.Method != http.MethodHead, true
	if isResource {
		mutating = info.Verb != "get" && info.Verb != "list"
	}
	if !isResource || info.Verb != "list" || !unpagedList(r) {
		// Long reads rest while this request is served (fair.go).
		s.pager.otherStarts()
		defer s.pager.otherEnds()
	}
	deadline := time.Now().Add(timeout)
	received := func() {}
	if isResource && mutating {
		// The body is received before the write takes a seat (within its deadline).
		_ = http.NewResponseController(w).SetReadDeadline(deadline)
		if received, ok = s.receiveBody(w, r); !ok {
			return
		}
	}
	seat, ok := s.inflight.acquire(r.Context(), mutating, w.user)
	if !ok {
		received()
		tooManyRequests(w)
		return
	}
	release := func() { seat(); received() }
	defer s.longRunning(w)()
	s.withDeadline(w, r, deadline, release, func(w http.ResponseWriter, r *http.Request) {
		s.serveAPI(w, r, info, isResource)
	})
}

// unpagedList reports whether a list request asks for every object at once (no positive
// limit): a long read.
func unpagedList(r *http.Request) bool {
	l := query(r).Get("limit")
	n, err := strconv.ParseInt(l, 10, 64)
	return l == "" || err != nil || n <= 0
}

// serveAPI serves an authenticated API request.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, info requestInfo, isResource bool) {
	path := r.URL.Path
	// Admission's warnings (a ValidatingAdmissionPolicy's Warn action, a quota's finding, a
	// workload's replicas that do not fit) become Warning headers, each text once as
	// upstream's recorder (a write retried after a conflict runs admission again).
	// Admission's audit annotations (a quota in Audit mode) go to the request's audit event.
	ctx := admission.WithWarnings(r.Context(), onceEach(func(msg string) { warn(w, []string{msg}) }))
	auditCtx := r.Context()
	ctx = admission.WithAuditAnnotations(ctx, func(key, value string) { audit.Annotate(auditCtx, key, value) })
	r = r.WithContext(ctx)
	if r.ContentLength > MaxBodyBytes {
		writeError(w, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes)))
		return
	}
	switch {
	case path == "/version" || path == "/version/":
		writeJSON(w, http.StatusOK, s.versionInfo())
		return
	case path == "/api" || path == "/api/":
		if m := aggregatedMedia(r.Header.Get("Accept")); m != "" {
			s.serveAggregated(w, r, "/api", m)
			return
		}
		s.serveAPIVersions(w, r)
		return
	case path == "/apis" || path == "/apis/":
		if m := aggregatedMedia(r.Header.Get("Accept")); m != "" {
			s.serveAggregated(w, r, "/apis", m)
			return
		}
		s.serveAPIGroupList(w, r)
		return
	case strings.HasPrefix(path, "/openapi/v3"):
		s.serveOpenAPI(w, r)
		return
	case path == "/openapi/v2" && s.cfg.OpenAPI != nil:
		s.cfg.OpenAPI.ServeV2(w, r)
		return
	}
	if isResource {
		s.serveResource(w, r, info)
		return
	}
	// The discovery documents below the roots (/api/<v>, /apis/<g>, /apis/<g>/<v>), which
	// parseAPIPath does not take for resource paths.
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) == 2 && segs[0] == "api":
		s.serveResourceList(w, r, "", segs[1])
	case len(segs) == 2 && segs[0] == "apis":
		s.serveAPIGroup(w, r, segs[1])
	case len(segs) == 3 && segs[0] == "apis":
		s.serveResourceList(w, r, segs[1], segs[2])
	default:
		writeError(w, notFoundPath())
	}
}

// anonymous reports whether a request presents no credential at all (a credential that
// does not verify is a 401 everywhere, as upstream).
// unauthorized answers upstream's 401 and records the failed authentication.
func (s *Server) unauthorized(w *recorder, r *http.Request) {
	client := addressClient(r)
	if !s.penalties.wait(r.Context(), client, s.cfg.ObservePenalty) {
		tooManyRequests(w)
		return
	}
	s.penalties.refused(client)
	writeJSON(w, http.StatusUnauthorized, metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized,
	})
	s.auditUnauthenticated(w, r)
}

func anonymous(r *http.Request) bool {
	return r.Header.Get("Authorization") == "" && (r.TLS == nil || len(r.TLS.PeerCertificates) == 0)
}

func notFoundPath() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Message: "the server could not find the requested resource",
		Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound, Details: &metav1.StatusDetails{},
	}}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil {
		if err := s.cfg.Ready(r.Context()); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "[-]etcd failed: %v\nhealthz check failed\n", err)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

func (s *Server) versionInfo() version.Info { return s.cfg.Version }

// metaOf returns a copy of an object's ObjectMeta.
func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return m.DeepCopy()
		}
	}
	out := &metav1.ObjectMeta{}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if md, ok := u.Object["metadata"].(map[string]interface{}); ok {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(md, out)
		}
		return out
	}
	if m, err := meta.Accessor(obj); err == nil {
		out.Name, out.Namespace, out.UID, out.ResourceVersion = m.GetName(), m.GetNamespace(), m.GetUID(), m.GetResourceVersion()
		out.Labels, out.Annotations, out.CreationTimestamp = m.GetLabels(), m.GetAnnotations(), m.GetCreationTimestamp()
	}
	return out
}

// onceEach returns add that passes each distinct message to add once.
func onceEach(add func(msg string)) func(msg string) {
	var mu sync.Mutex
	var seen map[string]bool
	return func(msg string) {
		mu.Lock()
		dup := seen[msg]
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[msg] = true
		mu.Unlock()
		if !dup {
			add(msg)
		}
	}
}
