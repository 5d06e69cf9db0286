package apiserver

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// MaxBodyBytes is the largest request body accepted (kube-apiserver's 3 MiB).
const MaxBodyBytes = 3 << 20

// Authenticator maps a request to a user name, or reports it unauthenticated.
type Authenticator interface {
	Authenticate(r *http.Request) (user string, ok bool)
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
	Store   *registry.Store
	Auth    Authenticator
	Table   TableConverter
	OpenAPI OpenAPI
	// Extra serves non-API paths (metrics, debug) before authentication checks of API paths;
	// keys are exact paths or prefixes ending in "/".
	Extra   map[string]http.Handler
	Clock   func() time.Time
	Logger  *slog.Logger
	Version VersionInfo
	// Ready reports readiness for /readyz.
	Ready func(ctx context.Context) error
	// FieldManagers tracks field ownership for server-side apply; nil merges an applied
	// configuration onto the live object without managedFields.
	FieldManagers FieldManagers
}

// FieldManagers gives the server-side apply field manager of a resource.
type FieldManagers interface {
	For(res *registry.Resource) (*managedfields.FieldManager, error)
}

// VersionInfo is what /version reports.
type VersionInfo struct {
	Major, Minor, GitVersion string
}

// Server is the HTTP edge.
type Server struct {
	cfg Config
}

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{cfg: cfg}
}

// ServeHTTP routes one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.cfg.Logger.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			writeError(w, apierrors.NewInternalError(fmt.Errorf("%v", p)))
		}
	}()
	path := r.URL.Path
	switch path {
	case "/healthz", "/livez", "/readyz", "/healthz/", "/livez/", "/readyz/":
		s.health(w, r)
		return
	}
	for p, h := range s.cfg.Extra {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			h.ServeHTTP(w, r)
			return
		}
	}
	if s.cfg.Auth != nil {
		if _, ok := s.cfg.Auth.Authenticate(r); !ok {
			writeJSON(w, http.StatusUnauthorized, metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized,
			})
			return
		}
	}
	if r.ContentLength > MaxBodyBytes {
		writeError(w, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes)))
		return
	}
	switch {
	case path == "/version" || path == "/version/":
		writeJSON(w, http.StatusOK, s.versionInfo())
		return
	case path == "/api" || path == "/api/":
		s.serveAPIVersions(w, r)
		return
	case path == "/apis" || path == "/apis/":
		s.serveAPIGroupList(w, r)
		return
	case strings.HasPrefix(path, "/openapi/v3"):
		s.serveOpenAPI(w, r)
		return
	case path == "/openapi/v2" && s.cfg.OpenAPI != nil:
		s.cfg.OpenAPI.ServeV2(w, r)
		return
	}
	trimmed := strings.Trim(path, "/")
	segs := strings.Split(trimmed, "/")
	switch {
	case len(segs) == 2 && segs[0] == "api":
		s.serveResourceList(w, r, "", segs[1])
		return
	case len(segs) == 2 && segs[0] == "apis":
		s.serveAPIGroup(w, r, segs[1])
		return
	case len(segs) == 3 && segs[0] == "apis":
		s.serveResourceList(w, r, segs[1], segs[2])
		return
	}
	info, ok := parseAPIPath(r)
	if !ok {
		writeError(w, notFoundPath())
		return
	}
	s.serveResource(w, r, info)
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

func (s *Server) versionInfo() map[string]string {
	v := s.cfg.Version
	return map[string]string{
		"major": v.Major, "minor": v.Minor, "gitVersion": v.GitVersion,
		"gitCommit": "", "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z",
		"goVersion": goVersion(), "compiler": "gc", "platform": platform(),
	}
}

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
