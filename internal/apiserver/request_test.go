package apiserver

import (
	"net/http/httptest"
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
