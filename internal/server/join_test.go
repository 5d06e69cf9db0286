package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/storage"
)

// fakeAdder records the learners it is asked to add.
type fakeAdder struct {
	added []string
	err   error
}

func (f *fakeAdder) AddLearner(_ context.Context, name string, peerURLs []string) ([]storage.Member, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.added = append(f.added, name)
	return []storage.Member{{Name: "first", ID: 1, PeerURLs: []string{"https://10.0.0.1:2380"}}, {Name: name, ID: 2, PeerURLs: peerURLs, Learner: true}}, nil
}

// TestJoinHandler: the join endpoint answers 404 on a quotad that is not a cluster member,
// serves the CA to anyone, refuses a wrong secret (401) and a bad request (400), maps an
// existing member to 409, and otherwise adds the member and hands over the shared secrets.
func TestJoinHandler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{"ca.key": "api-ca-key", "sa.key": "sa-key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "etcd-pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"ca.crt": "etcd-ca", "ca.key": "etcd-ca-key"} {
		if err := os.WriteFile(filepath.Join(dir, "etcd-pki", name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caPEM := []byte("api-ca")
	tok := joinToken{caHash: caHash(caPEM), secret: "s3cret"}
	adder := &fakeAdder{}
	h := &joinHandler{dataDir: dir, saKeyFile: filepath.Join(dir, "sa.key"), caPEM: caPEM, adminToken: "admin", token: tok, etcd: adder, log: slog.New(slog.DiscardHandler)}
	good := `{"name":"b","peerURLs":["https://10.0.0.2:2380"],"clientURLs":["https://10.0.0.2:2379"]}`
	do := func(h *joinHandler, method, path, secret, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if secret != "" {
			r.SetBasicAuth("server", secret)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	notClustered := &joinHandler{caPEM: caPEM, log: h.log}
	tests := []struct {
		name                 string
		h                    *joinHandler
		method, path, secret string
		body                 string
		want                 int
	}{
		{"not clustered: CA", notClustered, http.MethodGet, caCertsPath, "", "", http.StatusNotFound},
		{"not clustered: join", notClustered, http.MethodPost, joinPath, "s3cret", good, http.StatusNotFound},
		{"CA", h, http.MethodGet, caCertsPath, "", "", http.StatusOK},
		{"no secret", h, http.MethodPost, joinPath, "", good, http.StatusUnauthorized},
		{"wrong secret", h, http.MethodPost, joinPath, "s3cre", good, http.StatusUnauthorized},
		{"GET join", h, http.MethodGet, joinPath, "s3cret", "", http.StatusMethodNotAllowed},
		{"no name", h, http.MethodPost, joinPath, "s3cret", `{"peerURLs":["https://10.0.0.2:2380"]}`, http.StatusBadRequest},
		{"http peer", h, http.MethodPost, joinPath, "s3cret", `{"name":"b","peerURLs":["http://10.0.0.2:2380"]}`, http.StatusBadRequest},
		{"not JSON", h, http.MethodPost, joinPath, "s3cret", `name=b`, http.StatusBadRequest},
		{"joined", h, http.MethodPost, joinPath, "s3cret", good, http.StatusOK},
	}
	for _, tc := range tests {
		w := do(tc.h, tc.method, tc.path, tc.secret, tc.body)
		if w.Code != tc.want {
			t.Errorf("%s: %d %q, want %d", tc.name, w.Code, w.Body.String(), tc.want)
		}
	}
	if fmt.Sprint(adder.added) != "[b]" {
		t.Fatalf("learners added: %v, want [b]", adder.added)
	}
	var resp joinResponse
	if err := json.Unmarshal(do(h, http.MethodPost, joinPath, "s3cret", good).Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if string(resp.CACert) != "api-ca" || string(resp.CAKey) != "api-ca-key" || resp.AdminToken != "admin" ||
		string(resp.ServiceAccountKey) != "sa-key" || string(resp.EtcdCACert) != "etcd-ca" || string(resp.EtcdCAKey) != "etcd-ca-key" ||
		resp.JoinToken != tok.String() || len(resp.Members) != 2 {
		t.Fatalf("join response = %+v", resp)
	}
	adder.err = fmt.Errorf("wrapped: %w", storage.ErrMemberExists)
	if w := do(h, http.MethodPost, joinPath, "s3cret", good); w.Code != http.StatusConflict {
		t.Fatalf("existing member: %d, want 409", w.Code)
	}
}
