package apiserver

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestParseAPIPathInternsNamespace: the namespace of a request path is a string of its own,
// shared by every request naming it, not a slice of the request's path (which an object
// created in the namespace would keep in memory through its metadata.namespace).
func TestParseAPIPathInternsNamespace(t *testing.T) {
	parse := func(target string) (ns string, path string) {
		r := httptest.NewRequest("POST", target, nil)
		info, ok := parseAPIPath(r)
		if !ok || info.Namespace != "team-a" {
			t.Fatalf("parseAPIPath(%s) = %+v, %v; want namespace team-a", target, info, ok)
		}
		return info.Namespace, r.URL.Path
	}
	a, pathA := parse("/api/v1/namespaces/team-a/pods")
	b, _ := parse("/apis/apps/v1/namespaces/team-a/deployments")
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("two requests in one namespace got two copies of its name")
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(pathA)))
	if p := uintptr(unsafe.Pointer(unsafe.StringData(a))); p >= start && p < start+uintptr(len(pathA)) {
		t.Error("the namespace is a slice of the request path")
	}
}

// TestPathSegments: pathSegments splits as strings.Split does, in its buffer or beyond it.
func TestPathSegments(t *testing.T) {
	for _, p := range []string{"", "api", "api/v1", "api/v1/namespaces/a/pods/b/status", "a/b/c/d/e/f/g/h",
		"a/b/c/d/e/f/g/h/i", "a//b/", "/", "apis/g/v1/namespaces/n/r/name/proxy/x/y/z"} {
		var buf [8]string
		got, want := pathSegments(p, &buf), strings.Split(p, "/")
		if !slices.Equal(got, want) {
			t.Errorf("pathSegments(%q) = %q, want %q", p, got, want)
		}
	}
}
