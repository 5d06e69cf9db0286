package apiserver

import (
	"net/http"
	"strings"
	"unique"
)

// requestInfo is a parsed API path.
type requestInfo struct {
	// APIPrefix is "api" or "apis".
	APIPrefix   string
	Group       string
	Version     string
	Namespace   string
	Resource    string
	Name        string
	Subresource string
	// Rest is the path after the subresource (pods/<name>/proxy/<rest>), as upstream's
	// RequestInfo keeps it out of the subresource.
	Rest string
	// Verb is get, list, watch, create, update, patch, delete or deletecollection.
	Verb string
	// Parts is the number of path segments after the group-version.
	Parts int
}

// pathSegments is strings.Split(p, "/") into buf when p has at most len(buf) segments (a
// request's path almost always has), without allocating.
func pathSegments(p string, buf *[8]string) []string {
	if strings.Count(p, "/") >= len(buf) {
		return strings.Split(p, "/")
	}
	segs := buf[:0]
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(segs, p)
		}
		segs = append(segs, p[:i])
		p = p[i+1:]
	}
}

// parseAPIPath parses /api/v1/... and /apis/<g>/<v>/... resource paths. ok is false for
// paths that are not resource paths (discovery documents are handled separately).
func parseAPIPath(r *http.Request) (info requestInfo, ok bool) {
	var buf [8]string
	segs := pathSegments(strings.Trim(r.URL.Path, "/"), &buf)
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		info.APIPrefix, info.Version = "api", segs[1]
		segs = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		info.APIPrefix, info.Group, info.Version = "apis", segs[1], segs[2]
		segs = segs[3:]
	default:
		return info, false
	}
	for _, s := range segs {
		if s == "" {
			return info, false
		}
	}
	info.Parts = len(segs)
	// /namespaces/{ns}/{resource}... unless it is the namespace itself with a subresource.
	if len(segs) >= 3 && segs[0] == "namespaces" && !(len(segs) == 3 && (segs[2] == "status" || segs[2] == "finalize")) {
		// Interned: the segment is part of the request line, which an object created in the
		// namespace would otherwise keep in memory for as long as anything holds its
		// namespace (the garbage collector's graph holds every object's).
		info.Namespace = unique.Make(segs[1]).Value()
		segs = segs[2:]
	}
	info.Resource = segs[0]
	if len(segs) > 1 {
		info.Name = segs[1]
	}
	if len(segs) > 2 {
		info.Subresource = segs[2]
		info.Rest = strings.Join(segs[3:], "/")
	}
	isWatch := queryTrue(query(r), "watch")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case info.Name == "" && isWatch:
			info.Verb = "watch"
		case info.Name == "":
			info.Verb = "list"
		default:
			// As upstream: a named GET is a get, whatever its watch parameter says.
			info.Verb = "get"
		}
	case http.MethodPost:
		info.Verb = "create"
	case http.MethodPut:
		info.Verb = "update"
	case http.MethodPatch:
		info.Verb = "patch"
	case http.MethodDelete:
		if info.Name == "" {
			info.Verb = "deletecollection"
		} else {
			info.Verb = "delete"
		}
	}
	return info, true
}
