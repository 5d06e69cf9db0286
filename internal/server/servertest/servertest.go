package servertest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/storage"
)

// Server is a running in-process quotad.
type Server struct {
	*server.Running
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	DataDir string

	t      testing.TB
	cancel context.CancelFunc
	done   chan error
}

// Option changes the server configuration.
type Option func(*server.Config)

// WithDataDir runs on an existing data dir (for restart tests).
func WithDataDir(dir string) Option { return func(c *server.Config) { c.DataDir = dir } }

// Start starts quotad and stops it when the test ends, after checking the quota invariant.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := server.Config{
		DataDir: t.TempDir(), BindAddress: "127.0.0.1", SecurePort: 0,
		EtcdUnsafeNoFsync: true, EtcdFastElection: true, ResourceQuotaSyncPeriod: -1,
		Logger: slog.New(slog.NewTextHandler(logSink(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := startWith(t, cfg)
	t.Cleanup(func() {
		s.CheckInvariant()
		s.Stop()
	})
	return s
}

// logSink sends server logs to stderr only when QUOTAD_TEST_LOG is set.
func logSink() io.Writer {
	if os.Getenv("QUOTAD_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

func startWith(t testing.TB, cfg server.Config) *Server {
	t.Helper()
	ready := make(chan *server.Running, 1)
	cfg.Ready = func(r *server.Running) { ready <- r }
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{t: t, cancel: cancel, done: make(chan error, 1), DataDir: cfg.DataDir}
	go func() { s.done <- server.Run(ctx, cfg) }()
	select {
	case r := <-ready:
		s.Running = r
	case err := <-s.done:
		cancel()
		t.Fatalf("quotad did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("quotad did not start within 60s")
	}
	s.Config = &rest.Config{
		Host: s.URL, BearerToken: s.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM},
		QPS:             1000, Burst: 2000,
	}
	var err error
	if s.Client, err = kubernetes.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	if s.Dynamic, err = dynamic.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	return s
}

// Stop shuts the server down and waits for it (idempotent).
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	// Idle client connections are closed first: the server's graceful shutdown otherwise
	// waits http2's GOAWAY timeout (1s) for the client to close them. Connections
	// with requests in flight (watches) are left to the shutdown.
	if rt, err := rest.TransportFor(s.Config); err == nil {
		utilnet.CloseIdleConnectionsFor(rt)
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("quotad stopped with error: %v", err)
		}
	case <-time.After(60 * time.Second):
		s.t.Errorf("quotad did not stop within 60s")
	}
}

// Restart stops the server and starts a new one on the same data dir.
func (s *Server) Restart(t testing.TB) *Server {
	s.Stop()
	return Start(t, WithDataDir(s.DataDir))
}

// CheckInvariant recomputes every quota from storage at one revision and fails the test
// on any difference from its status (design.md §2, I1 and I3).
func (s *Server) CheckInvariant() {
	s.t.Helper()
	if s.cancel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	drifts, err := Violations(ctx, s.Store)
	if err != nil {
		s.t.Errorf("invariant check: %v", err)
		return
	}
	for _, d := range drifts {
		s.t.Errorf("%s", d)
	}
}

// Violations recomputes every quota and every cluster quota of store from storage (each
// kind at one revision) and describes each one whose stored status differs (design.md §2,
// I1 and I3). store is a running server's, or server.CheckingStore over a cluster's etcd.
func Violations(ctx context.Context, store *registry.Store) ([]string, error) {
	var out []string
	checks, err := store.CheckQuotas(ctx, "")
	if err != nil {
		return nil, err
	}
	for i := range checks {
		if checks[i].Drifted() {
			out = append(out, "quota invariant violated: "+checks[i].String())
		}
	}
	crqs, err := store.CheckClusterQuotas(ctx)
	if err != nil {
		return nil, err
	}
	for i := range crqs {
		if crqs[i].Drifted() {
			out = append(out, "cluster quota invariant violated: "+crqs[i].String())
		}
	}
	return out, nil
}

// WithEtcd runs against a separately started etcd as an external cluster (no embedded one),
// presenting its client certificate.
func WithEtcd(etcd *storage.Embedded) Option {
	return func(c *server.Config) {
		c.EtcdServers = etcd.Endpoints()
		f := etcd.ClientTLS()
		c.EtcdCAFile, c.EtcdCertFile, c.EtcdKeyFile = f.CAFile, f.CertFile, f.KeyFile
	}
}

// WithAdmissionConfig sets --admission-control-config-file.
func WithAdmissionConfig(path string) Option {
	return func(c *server.Config) { c.AdmissionControlConfigFile = path }
}

// EditStored rewrites the object stored at key behind the registry's back, as any etcd
// client could (the only way a quota's usage can drift): edit changes the object decoded
// from its stored JSON, which is written back guarded by its revision.
func EditStored[T any](t testing.TB, s *Server, key string, edit func(*T)) {
	t.Helper()
	ctx := context.Background()
	st := s.Store.Storage()
	kv, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	obj := new(T)
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		t.Fatal(err)
	}
	edit(obj)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Txn(ctx, storage.Txn{Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: key, Revision: kv.ModRevision}},
		Ops: []storage.Op{{Type: storage.OpPut, Key: key, Value: b}}}); err != nil {
		t.Fatal(err)
	}
}
