package openapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestServeHTTP(t *testing.T) {
	docs := mustBuild(t)
	v1 := docs.Paths["api/v1"]
	tests := []struct {
		name         string
		method       string
		target       string
		header       map[string]string
		code         int
		body         []byte
		wantHeader   map[string]string
		absentHeader []string
	}{
		{name: "index", target: "/openapi/v3", code: 200, body: docs.Index,
			wantHeader: map[string]string{"Content-Type": "application/json", "Etag": strconv.Quote(docs.IndexHash)}},
		{name: "index with slash", target: "/openapi/v3/", code: 200, body: docs.Index},
		{name: "document", target: "/openapi/v3/api/v1", code: 200, body: v1.JSON,
			wantHeader:   map[string]string{"Content-Type": "application/json", "Etag": strconv.Quote(v1.Hash), "Vary": "Accept"},
			absentHeader: []string{"Cache-Control"}},
		{name: "current hash is immutable", target: "/openapi/v3/api/v1?hash=" + v1.Hash, code: 200, body: v1.JSON,
			wantHeader: map[string]string{"Cache-Control": "public, immutable"}},
		{name: "stale hash redirects", target: "/openapi/v3/api/v1?hash=OUTDATED", code: 301,
			wantHeader: map[string]string{"Location": "/openapi/v3/api/v1?hash=" + v1.Hash}},
		{name: "group document", target: "/openapi/v3/apis/apps/v1", code: 200, body: docs.Paths["apis/apps/v1"].JSON},
		{name: "unknown group-version", target: "/openapi/v3/apis/nope/v1", code: 404},
		{name: "outside the prefix", target: "/openapi/v2", code: 404},
		{name: "etag revalidation", target: "/openapi/v3/api/v1", header: map[string]string{"If-None-Match": strconv.Quote(v1.Hash)}, code: 304},
		{name: "index revalidation", target: "/openapi/v3", header: map[string]string{"If-None-Match": strconv.Quote(docs.IndexHash)}, code: 304},
		{name: "protobuf only", target: "/openapi/v3/api/v1", header: map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, code: 406},
		{name: "json refused", target: "/openapi/v3/api/v1", header: map[string]string{"Accept": "application/json;q=0"}, code: 406},
		{name: "json among others", target: "/openapi/v3/api/v1", header: map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf, application/json"}, code: 200, body: v1.JSON},
		{name: "wildcard", target: "/openapi/v3/api/v1", header: map[string]string{"Accept": "*/*"}, code: 200, body: v1.JSON},
		{name: "head", method: "HEAD", target: "/openapi/v3/api/v1", code: 200, body: []byte{}},
		{name: "post", method: "POST", target: "/openapi/v3", code: 405, wantHeader: map[string]string{"Allow": "GET, HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tt.target, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			docs.ServeHTTP(rec, req)
			if rec.Code != tt.code {
				t.Fatalf("code %d, want %d (%s)", rec.Code, tt.code, rec.Body.String())
			}
			if tt.body != nil && rec.Body.String() != string(tt.body) {
				t.Errorf("body differs (%d bytes, want %d)", rec.Body.Len(), len(tt.body))
			}
			for k, v := range tt.wantHeader {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			for _, k := range tt.absentHeader {
				if got := rec.Header().Get(k); got != "" {
					t.Errorf("%s: %q, want none", k, got)
				}
			}
		})
	}
}
