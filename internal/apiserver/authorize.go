package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/audit"
	"github.com/quotad/quotad/internal/auth"
)

// Impersonation headers, as kubectl --as, --as-group and --as-uid send them.
const (
	impersonateUserHeader  = "Impersonate-User"
	impersonateGroupHeader = "Impersonate-Group"
	impersonateUIDHeader   = "Impersonate-Uid"
	impersonateExtraPrefix = "Impersonate-Extra-"
)

// requestAttributes returns what the authorizer is asked about a request made by u, as
// upstream's RequestInfoFactory derives it: for resource requests the verb, group, version,
// namespace (a namespace's own name for the namespaces resource), resource, subresource and
// name (for a list or watch, the name an exact metadata.name field selector names); for other
// paths the lowercase HTTP method and the path.
func requestAttributes(r *http.Request, info requestInfo, isResource bool, u auth.User) auth.Attributes {
	a := auth.Attributes{User: u, Path: r.URL.Path}
	if !isResource {
		a.Verb = strings.ToLower(r.Method)
		return a
	}
	a.ResourceRequest = true
	a.Verb, a.APIGroup, a.APIVersion = info.Verb, info.Group, info.Version
	a.Namespace, a.Resource, a.Subresource, a.Name = info.Namespace, info.Resource, info.Subresource, info.Name
	if a.Namespace == "" && a.Resource == "namespaces" && info.Parts >= 2 {
		a.Namespace = a.Name
	}
	// A field selector longer than HeavySelectorBytes is not parsed here, before the request
	// has a seat: such a list or watch is authorized without a name, as one without the
	// selector is.
	if fs := query(r).Get("fieldSelector"); fs != "" && (a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection") && len(fs) < HeavySelectorBytes {
		if sel, err := fields.ParseSelector(fs); err == nil {
			a.Fields = sel
			if name, ok := sel.RequiresExactMatch("metadata.name"); ok && a.Name == "" && a.Verb != "deletecollection" && len(path.IsValidPathSegmentName(name)) == 0 {
				a.Name = name
			}
		}
	}
	return a
}

// forbidden is upstream's 403 for attributes a refused with reason: "<resource> "<name>" is
// forbidden: User "<user>" cannot <verb> resource "<resource>[/<subresource>]" in API group
// "<group>" in the namespace "<ns>"" (or "at the cluster scope"), or for a path "forbidden:
// User "<user>" cannot <verb> path "<path>"", followed by ": <reason>" when there is one.
func forbidden(a auth.Attributes, reason string) error {
	var msg string
	switch {
	case !a.ResourceRequest:
		msg = fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	default:
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		if a.Namespace != "" {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User.Name, a.Verb, resource, a.APIGroup, a.Namespace)
		} else {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User.Name, a.Verb, resource, a.APIGroup)
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	var gr schema.GroupResource
	if a.ResourceRequest {
		gr = schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	}
	return apierrors.NewForbidden(gr, a.Name, textError(msg))
}

// textError is an error whose text is exactly its value.
type textError string

func (e textError) Error() string { return string(e) }

// allowed asks the authorizer about a and answers the request with upstream's 403 when it
// does not allow it (an authorizer error is a refusal too, its text the reason).
func (s *Server) allowed(w http.ResponseWriter, r *http.Request, a auth.Attributes) bool {
	d, reason, err := s.cfg.Authz.Authorize(r.Context(), a)
	if err == nil && d == auth.Allow {
		audit.Annotate(r.Context(), audit.AnnotationDecision, "allow")
		audit.Annotate(r.Context(), audit.AnnotationReason, reason)
		return true
	}
	if err != nil && reason == "" {
		reason = err.Error()
	}
	audit.Annotate(r.Context(), audit.AnnotationDecision, "forbid")
	audit.Annotate(r.Context(), audit.AnnotationReason, reason)
	writeError(w, forbidden(a, reason))
	return false
}

// impersonation is one thing a request asks to act as.
type impersonation struct {
	kind                 string // User, ServiceAccount, Group, UserExtra, UID
	namespace, name, key string
}

func (i impersonation) String() string {
	switch {
	case i.namespace != "":
		return fmt.Sprintf("%s %s/%s", i.kind, i.namespace, i.name)
	case i.key != "":
		return fmt.Sprintf("%s %s=%s", i.kind, i.key, i.name)
	}
	return i.kind + " " + i.name
}

// impersonationRequests reads the Impersonate-* headers as upstream's impersonation filter
// does; it is an error to ask for groups, extras or a uid without a user.
func impersonationRequests(h http.Header) ([]impersonation, error) {
	var reqs []impersonation
	user := h.Get(impersonateUserHeader)
	if user != "" {
		if ns, name, ok := splitServiceAccount(user); ok {
			reqs = append(reqs, impersonation{kind: "ServiceAccount", namespace: ns, name: name})
		} else {
			reqs = append(reqs, impersonation{kind: "User", name: user})
		}
	}
	others := false
	for _, g := range h.Values(impersonateGroupHeader) {
		others = true
		reqs = append(reqs, impersonation{kind: "Group", name: g})
	}
	for k, vs := range h {
		if !strings.HasPrefix(k, impersonateExtraPrefix) {
			continue
		}
		others = true
		key := strings.ToLower(k[len(impersonateExtraPrefix):])
		if unescaped, err := url.PathUnescape(key); err == nil {
			key = unescaped
		}
		for _, v := range vs {
			reqs = append(reqs, impersonation{kind: "UserExtra", key: key, name: v})
		}
	}
	if uid := h.Get(impersonateUIDHeader); uid != "" {
		others = true
		reqs = append(reqs, impersonation{kind: "UID", name: uid})
	}
	if others && user == "" {
		return nil, fmt.Errorf("requested %v without impersonating a user", reqs)
	}
	return reqs, nil
}

// splitServiceAccount splits system:serviceaccount:<ns>:<name> with a valid namespace and
// name.
func splitServiceAccount(user string) (ns, name string, ok bool) {
	rest, found := strings.CutPrefix(user, auth.ServiceAccountPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(apimachineryvalidation.ValidateNamespaceName(parts[0], false)) != 0 ||
		len(apimachineryvalidation.NameIsDNSSubdomain(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// impersonate returns the user a request acts as. Without Impersonate-* headers it is the
// authenticated requester; with them, each thing asked for (the user or ServiceAccount, each
// group, extra value and the uid) must be allowed to the requester by the "impersonate" verb
// on users, serviceaccounts, groups, userextras/<key> or uids, or the request is answered
// with upstream's 403 naming the first refused. The impersonated user then stands for the
// requester in everything after (authorization, admission, logs).
func (s *Server) impersonate(w http.ResponseWriter, r *http.Request, requester auth.User) (auth.User, bool) {
	// 1. Read the headers; none means no impersonation.
	reqs, err := impersonationRequests(r.Header)
	if err != nil {
		http.Error(w, fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err), http.StatusInternalServerError)
		return auth.User{}, false
	}
	if len(reqs) == 0 {
		return requester, true
	}
	// 2. Authorize each part as upstream does, building the user.
	var u auth.User
	groupsSpecified := len(r.Header.Values(impersonateGroupHeader)) > 0
	for _, req := range reqs {
		a := auth.Attributes{User: requester, Verb: "impersonate", ResourceRequest: true, Namespace: req.namespace, Name: req.name}
		switch req.kind {
		case "ServiceAccount":
			a.Resource = "serviceaccounts"
			u.Name = auth.ServiceAccountPrefix + req.namespace + ":" + req.name
			if !groupsSpecified {
				u.Groups = []string{auth.AllServiceAccounts, auth.AllServiceAccounts + ":" + req.namespace}
			}
		case "User":
			a.Resource = "users"
			u.Name = req.name
		case "Group":
			a.Resource = "groups"
			u.Groups = append(u.Groups, req.name)
		case "UserExtra":
			a.APIGroup, a.APIVersion, a.Resource, a.Subresource = "authentication.k8s.io", "v1", "userextras", req.key
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[req.key] = append(u.Extra[req.key], req.name)
		case "UID":
			a.APIGroup, a.APIVersion, a.Resource = "authentication.k8s.io", "v1", "uids"
			u.UID = req.name
		}
		if !s.allowed(w, r, a) {
			return auth.User{}, false
		}
	}
	// 3. system:authenticated (system:unauthenticated for the anonymous user) unless one of
	// the two was asked for.
	explicit := false
	for _, g := range u.Groups {
		if g == auth.AllAuthenticated || g == auth.AllUnauthenticated {
			explicit = true
		}
	}
	if !explicit {
		if u.Name == auth.Anonymous {
			u.Groups = append(u.Groups, auth.AllUnauthenticated)
		} else {
			u.Groups = append(u.Groups, auth.AllAuthenticated)
		}
	}
	// 4. The headers are consumed.
	for k := range r.Header {
		if strings.HasPrefix(k, impersonateExtraPrefix) || k == impersonateUserHeader || k == impersonateGroupHeader || k == impersonateUIDHeader {
			r.Header.Del(k)
		}
	}
	return u, true
}
