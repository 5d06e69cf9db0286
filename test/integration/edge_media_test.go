package integration

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestUnsupportedBodyMediaType: a body in a media type the server does not decode is
// upstream's 415 with upstream's text, and changes nothing.
func TestUnsupportedBodyMediaType(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := edgeCtx(t)
	settle(t, s, "default")
	if _, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := revision(t, s)
	const objects = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf","reason":"UnsupportedMediaType","code":415}`
	// A built-in kind's patch of another media type is refused by upstream's router, with
	// its message (custom resources get the list of patch types).
	const patches = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}`
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"changed"}}`
	cases := []struct {
		name, method, path, contentType, body, want string
	}{
		{"create text/plain", http.MethodPost, "/api/v1/namespaces/default/configmaps", "text/plain", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}`, objects},
		{"create malformed type", http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json;;", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}`, objects},
		{"create text/plain dry run", http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", "text/plain", `{}`, objects},
		{"update text/plain", http.MethodPut, "/api/v1/namespaces/default/configmaps/c", "text/plain", cm, objects},
		{"update text/xml", http.MethodPut, "/api/v1/namespaces/default/configmaps/c", "text/xml; charset=utf-8", cm, objects},
		{"delete options text/plain", http.MethodDelete, "/api/v1/namespaces/default/configmaps/c", "text/plain", `{"kind":"DeleteOptions","apiVersion":"v1"}`, objects},
		{"patch text/plain", http.MethodPatch, "/api/v1/namespaces/default/configmaps/c", "text/plain", `{"data":{"k":"changed"}}`, patches},
		{"finalize text/plain", http.MethodPut, "/api/v1/namespaces/default/finalize", "text/plain", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`, objects},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := edgeDo(t, ctx, s, tc.method, tc.path, tc.contentType, tc.body)
			if resp.StatusCode != http.StatusUnsupportedMediaType || body != tc.want {
				t.Errorf("got %d %s\nwant 415 %s", resp.StatusCode, body, tc.want)
			}
		})
	}
	if after := revision(t, s); after != before {
		t.Errorf("refused requests changed storage: revision %d → %d", before, after)
	}
	// The media types served are still decoded, parameters and case aside.
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON", "application/yaml"} {
		resp, body := edgeDo(t, ctx, s, http.MethodPut, "/api/v1/namespaces/default/configmaps/c", ct, cm)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", ct, resp.StatusCode, body)
		}
	}
}
