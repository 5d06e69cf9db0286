package apiserver

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// Review answers a create of a review resource (registry.Resource.Review): obj is the
// decoded request, namespace the request's (for namespaced reviews); the answer is the
// object with its status filled in. It stores nothing.
type Review func(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error)

// TokenRequester answers a TokenRequest for ServiceAccount name in namespace (POST
// serviceaccounts/<name>/token), with warnings for the client.
type TokenRequester func(ctx context.Context, namespace, name string, req *authenticationv1.TokenRequest, dryRun bool) (*authenticationv1.TokenRequest, []string, error)

// tokenRequestResource is the kind the token subresource reads and answers.
var tokenRequestResource = &registry.Resource{
	GVR:  authenticationv1.SchemeGroupVersion.WithResource("tokenrequests"),
	Kind: "TokenRequest", Type: reflect.TypeOf(authenticationv1.TokenRequest{}),
}

// serveReview serves a review resource: create only, answered 201 with the status the
// review filled in; every other verb is upstream's 405.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	review := s.cfg.Reviews[res.GroupResource()]
	if res.GroupResource() == bindingsGR && info.Verb == "create" && info.Name == "" && info.Subresource == "" {
		s.createBinding(w, r, res, info)
		return
	}
	if info.Verb != "create" || info.Name != "" || info.Subresource != "" || review == nil {
		writeError(w, methodNotAllowed())
		return
	}
	obj, ok := s.readCreate(w, r, res, info)
	if !ok {
		return
	}
	out, err := review(r.Context(), info.Namespace, obj)
	if err != nil {
		writeError(w, err)
		return
	}
	out.GetObjectKind().SetGroupVersionKind(res.GVK())
	writeJSON(w, http.StatusCreated, out)
}

// serveTokenRequest serves POST serviceaccounts/<name>/token.
func (s *Server) serveTokenRequest(w http.ResponseWriter, r *http.Request, info requestInfo) {
	if s.cfg.TokenRequest == nil || info.Verb != "create" {
		writeError(w, methodNotAllowed())
		return
	}
	obj, ok := s.readCreate(w, r, tokenRequestResource, info)
	if !ok {
		return
	}
	q := query(r)
	out, warnings, err := s.cfg.TokenRequest(r.Context(), info.Namespace, info.Name, obj.(*authenticationv1.TokenRequest), len(q["dryRun"]) > 0)
	if err != nil {
		writeError(w, err)
		return
	}
	warn(w, warnings)
	out.GetObjectKind().SetGroupVersionKind(tokenRequestResource.GVK())
	writeJSON(w, http.StatusCreated, out)
}

// readCreate reads a create's options and body as an object of res; ok is false when it
// already answered with an error. The object's namespace, when set, must be the
// request's, as upstream's create handler checks.
func (s *Server) readCreate(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) (runtime.Object, bool) {
	if err := negotiateUntransformed(r); err != nil {
		writeError(w, err)
		return nil, false
	}
	if err := checkBodyType(r, true); err != nil {
		writeError(w, err)
		return nil, false
	}
	_, fv, err := writeOptions(r, "create", "")
	if err != nil {
		writeError(w, err)
		return nil, false
	}
	obj, warnings, err := s.decodeBody(r, res, fv)
	if err != nil {
		writeError(w, err)
		return nil, false
	}
	warn(w, warnings)
	if m, err := meta.Accessor(obj); err == nil {
		switch {
		case m.GetNamespace() == "":
			m.SetNamespace(info.Namespace)
		case m.GetNamespace() != info.Namespace:
			writeError(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return nil, false
		}
	}
	return obj, true
}

// reviewResources are the discovery entries of the review resources of one
// group-version: create only.
func reviewResources(all []*registry.Resource, group, version string) []metav1.APIResource {
	var out []metav1.APIResource
	for _, res := range all {
		if res.GVR.Group == group && res.GVR.Version == version {
			out = append(out, metav1.APIResource{Name: res.GVR.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind, Verbs: metav1.Verbs{"create"}})
		}
	}
	return out
}

// negotiateUntransformed reads the Accept header of an endpoint whose objects have no
// metadata (the reviews, TokenRequest): a Table or PartialObjectMetadata is not acceptable,
// so a request accepting only those is upstream's 406.
func negotiateUntransformed(r *http.Request) error {
	var plain []string
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if !strings.Contains(strings.ReplaceAll(part, " ", ""), ";as=") {
			plain = append(plain, part)
		}
	}
	if r.Header.Get("Accept") != "" && len(plain) == 0 {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
			Message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"}}
	}
	_, err := negotiate(&http.Request{Header: http.Header{"Accept": {strings.Join(plain, ",")}}})
	return err
}
