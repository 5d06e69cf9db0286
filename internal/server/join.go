package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quotad/quotad/internal/auth/authn"
	"github.com/quotad/quotad/internal/storage"
)

// The join endpoint's paths on the secure port.
const (
	// caCertsPath serves the API CA certificate to anyone: a joiner reads it without
	// verifying the server and checks it against its join token's hash.
	caCertsPath = "/v1-quotad/cacerts"
	// joinPath adds a member, for a caller presenting the join token's secret.
	joinPath = "/v1-quotad/join"
	// joinUser is the basic-auth user of a join request (the token's "server:" part).
	joinUser = "server"
)

// Bounds of the join exchange.
const (
	maxJoinBody       = 64 << 10
	maxJoinResponse   = 4 << 20
	joinAddTimeout    = 2 * time.Minute
	joinClientTimeout = joinAddTimeout + 30*time.Second
)

// Errors of a join, wrapped with what was joined.
var (
	// ErrJoinCAMismatch: the server's CA certificate is not the one the join token names.
	ErrJoinCAMismatch = errors.New("the server's CA certificate is not the one the join token names")
	// ErrJoinTokenRefused: the server refused the join token's secret.
	ErrJoinTokenRefused = errors.New("the join token was refused")
)

// joinRequest is what a joiner sends: its etcd member name and URLs.
type joinRequest struct {
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs,omitempty"`
}

// joinResponse is what a joiner receives: the secrets every replica shares, and the
// cluster's membership with the joiner added as a learner.
type joinResponse struct {
	// CACert and CAKey are the API CA (ca.crt, ca.key).
	CACert []byte `json:"caCert"`
	CAKey  []byte `json:"caKey"`
	// AdminToken is admin.token.
	AdminToken string `json:"adminToken"`
	// ServiceAccountKey is the ServiceAccount token signing key (sa.key).
	ServiceAccountKey []byte `json:"serviceAccountKey"`
	// EtcdCACert and EtcdCAKey are the etcd CA (etcd-pki/ca.crt, ca.key).
	EtcdCACert []byte `json:"etcdCACert"`
	EtcdCAKey  []byte `json:"etcdCAKey"`
	// JoinToken is the cluster's join token.
	JoinToken string           `json:"joinToken"`
	Members   []storage.Member `json:"members"`
}

// learnerAdder adds an etcd member as a learner (storage.Embedded).
type learnerAdder interface {
	AddLearner(ctx context.Context, name string, peerURLs []string) ([]storage.Member, error)
}

// joinHandler serves caCertsPath and joinPath on a cluster member; elsewhere (etcd nil) it
// answers 404. It checks its own credentials: the join token's secret, as basic auth.
type joinHandler struct {
	dataDir string
	// saKeyFile is the ServiceAccount signing key file this replica uses.
	saKeyFile  string
	caPEM      []byte
	adminToken string
	token      joinToken
	etcd       learnerAdder
	log        *slog.Logger
}

// AuthenticatesItself implements apiserver.SelfAuthenticating.
func (h *joinHandler) AuthenticatesItself() {}

func (h *joinHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.etcd == nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case r.URL.Path == caCertsPath && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(h.caPEM)
	case r.URL.Path == joinPath && r.Method == http.MethodPost:
		h.join(w, r)
	case r.URL.Path == caCertsPath || r.URL.Path == joinPath:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

// join adds the caller's member.
//  1. Authenticate: basic auth "server" and the token's secret, compared in constant time.
//  2. Read and check the request.
//  3. Read the shared secrets, add the member as a learner, and answer.
func (h *joinHandler) join(w http.ResponseWriter, r *http.Request) {
	user, secret, ok := r.BasicAuth()
	if !ok || user != joinUser || !h.token.secretMatches(secret) {
		h.log.Warn("cluster join refused: bad join token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Basic realm="quotad-join"`)
		http.Error(w, "join token refused", http.StatusUnauthorized)
		return
	}
	var req joinRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJoinBody)).Decode(&req); err != nil {
		http.Error(w, "bad join request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := req.check(); err != nil {
		http.Error(w, "bad join request: "+err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := h.secrets()
	if err != nil {
		h.log.Error("cluster join: reading the shared secrets", "err", err)
		http.Error(w, "cannot read the cluster's secrets", http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), joinAddTimeout)
	defer cancel()
	members, err := h.etcd.AddLearner(ctx, req.Name, req.PeerURLs)
	switch {
	case errors.Is(err, storage.ErrMemberExists):
		http.Error(w, err.Error(), http.StatusConflict)
		return
	case err != nil:
		h.log.Warn("cluster join: adding the member failed", "name", req.Name, "peerURLs", req.PeerURLs, "err", err)
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	resp.Members = members
	h.log.Info("cluster join: member added as a learner", "name", req.Name, "peerURLs", req.PeerURLs, "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// check reports what is wrong with a join request.
func (req joinRequest) check() error {
	if req.Name == "" || len(req.Name) > 253 || strings.ContainsAny(req.Name, "=, \t\n") {
		return fmt.Errorf("member name %q: want 1 to 253 characters without '=', ',' or spaces", req.Name)
	}
	if len(req.PeerURLs) == 0 {
		return errors.New("no peer URLs")
	}
	for _, u := range append(append([]string(nil), req.PeerURLs...), req.ClientURLs...) {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "https" || p.Port() == "" || p.Path != "" {
			return fmt.Errorf("URL %q: want https://<ip>:<port>", u)
		}
	}
	return nil
}

// secrets reads what every replica shares.
func (h *joinHandler) secrets() (joinResponse, error) {
	resp := joinResponse{CACert: h.caPEM, AdminToken: h.adminToken, JoinToken: h.token.String()}
	var err error
	if resp.CAKey, err = os.ReadFile(filepath.Join(h.dataDir, "ca.key")); err != nil {
		return resp, err
	}
	if resp.ServiceAccountKey, err = os.ReadFile(h.saKeyFile); err != nil {
		return resp, err
	}
	if resp.EtcdCACert, resp.EtcdCAKey, err = storage.ReadClusterCA(h.dataDir); err != nil {
		return resp, err
	}
	return resp, nil
}

// joinToken returns --join-token, or the token in --join-token-file.
func configJoinToken(cfg Config) (joinToken, error) {
	s := cfg.JoinToken
	if s == "" && cfg.JoinTokenFile != "" {
		b, err := os.ReadFile(cfg.JoinTokenFile)
		if err != nil {
			return joinToken{}, fmt.Errorf("--join-token-file: %w", err)
		}
		s = string(b)
	}
	t, err := parseJoinToken(s)
	if err != nil {
		return joinToken{}, fmt.Errorf("--join-token: %w", err)
	}
	return t, nil
}

// joinCluster joins the cluster of the quotad at --join as member m and returns the
// cluster's membership, m added as a learner.
//  1. Fetch the server's CA without verifying the server, and refuse it unless its hash is
//     the join token's.
//  2. Ask the server, now verified with that CA, to add m, presenting the token's secret.
//  3. Write what it answers into the data dir: the API CA and key, the admin token, the
//     ServiceAccount signing key, the etcd CA and key, and (last: it marks the data dir
//     as a cluster member's) the join token. The serving certificate is made again by the
//     shared CA.
func joinCluster(ctx context.Context, cfg Config, m storage.ClusterConfig, log *slog.Logger) ([]storage.Member, error) {
	tok, err := configJoinToken(cfg)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(cfg.Join, "/")
	if u, err := url.Parse(base); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("--join %q: want https://<host>:<secure-port>", cfg.Join)
	}
	// 1. The CA.
	insecure := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	caPEM, status, err := fetch(ctx, insecure, http.MethodGet, base+caCertsPath, nil, "")
	if err != nil {
		return nil, fmt.Errorf("joining %s: reading its CA: %w", base, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("joining %s: reading its CA: HTTP %d: %s (is it running with --cluster-init or joined to a cluster?)", base, status, bytes.TrimSpace(caPEM))
	}
	if !tok.matchesCA(caPEM) {
		return nil, fmt.Errorf("joining %s: %w (its sha256 is %s, the token's %s): wrong server or wrong token", base, ErrJoinCAMismatch, caHash(caPEM), tok.caHash)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("joining %s: its CA is not a PEM certificate", base)
	}
	// 2. The join.
	body, _ := json.Marshal(joinRequest{Name: m.Name, PeerURLs: []string{m.PeerURL()}, ClientURLs: []string{m.ClientURL()}})
	verified := &http.Client{Timeout: joinClientTimeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	out, status, err := fetch(ctx, verified, http.MethodPost, base+joinPath, body, tok.secret)
	if err != nil {
		return nil, fmt.Errorf("joining %s: %w", base, err)
	}
	switch status {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return nil, fmt.Errorf("joining %s: %w (its secret is not the cluster's)", base, ErrJoinTokenRefused)
	default:
		return nil, fmt.Errorf("joining %s: HTTP %d: %s", base, status, bytes.TrimSpace(out))
	}
	var resp joinResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("joining %s: reading the answer: %w", base, err)
	}
	if !bytes.Equal(resp.CACert, caPEM) {
		return nil, fmt.Errorf("joining %s: the answer's CA is not the one checked", base)
	}
	// 3. The files.
	if err := writeJoined(cfg.DataDir, resp, tok); err != nil {
		return nil, fmt.Errorf("joining %s: %w", base, err)
	}
	log.Info("joined the cluster as an etcd learner", "server", base, "name", m.Name, "members", len(resp.Members))
	return resp.Members, nil
}

// fetch does one request with an optional body and join secret, and returns the response
// body (bounded) and status.
func fetch(ctx context.Context, c *http.Client, method, u string, body []byte, secret string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if secret != "" {
		req.SetBasicAuth(joinUser, secret)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJoinResponse))
	return b, resp.StatusCode, err
}

// writeJoined writes a join's answer into the data dir dir.
func writeJoined(dir string, resp joinResponse, tok joinToken) error {
	if _, err := tls.X509KeyPair(resp.CACert, resp.CAKey); err != nil {
		return fmt.Errorf("the API CA: %w", err)
	}
	if resp.AdminToken == "" || len(resp.ServiceAccountKey) == 0 {
		return errors.New("the answer has no admin token or ServiceAccount key")
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"ca.key", resp.CAKey, 0o600},
		{"ca.crt", resp.CACert, 0o644},
		{"admin.token", []byte(resp.AdminToken), 0o600},
		{authn.KeyFile, resp.ServiceAccountKey, 0o600},
	}
	for _, f := range files {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := storage.WriteClusterCA(dir, resp.EtcdCACert, resp.EtcdCAKey); err != nil {
		return err
	}
	return writeJoinToken(dir, tok)
}
