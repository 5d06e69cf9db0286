package storage

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func TestDefragPolicyDue(t *testing.T) {
	t.Parallel()
	def := defragPolicy{minFree: DefragMinFreeBytes, minFraction: DefragMinFreeFraction}
	tests := []struct {
		name        string
		policy      defragPolicy
		size, inUse int64
		want        bool
	}{
		{"empty", def, 0, 0, false},
		{"all in use", def, 1 << 30, 1 << 30, false},
		{"half free, above the minimum", def, 256 << 20, 128 << 20, true},
		{"mostly free, below the minimum", def, 100 << 20, 50 << 20, false},
		{"above the minimum, under half free", def, 1 << 30, 600 << 20, false},
		{"exactly the minimum and half", def, 128 << 20, 64 << 20, true},
		{"zero policy: always due", defragPolicy{}, 1 << 20, 1 << 20, true},
	}
	for _, tc := range tests {
		if got := tc.policy.due(tc.size, tc.inUse); got != tc.want {
			t.Errorf("%s: due(%d, %d) = %v, want %v", tc.name, tc.size, tc.inUse, got, tc.want)
		}
	}
}

// fill writes n keys of size bytes under prefix, then deletes them and compacts, leaving
// the space they used free in the backend file.
func fillAndFree(t *testing.T, s *Etcd, prefix string, n, size int) {
	t.Helper()
	ctx := t.Context()
	value := bytes.Repeat([]byte("x"), size)
	for i := 0; i < n; i += 10 {
		var ops []Op
		for j := i; j < i+10 && j < n; j++ {
			ops = append(ops, Op{Type: OpPut, Key: fmt.Sprintf("%s%05d", prefix, j), Value: value})
		}
		if _, err := s.Txn(ctx, Txn{Ops: ops}); err != nil {
			t.Fatalf("fill: %v", err)
		}
	}
	deleteAndCompact(t, s, prefix)
}

func deleteAndCompact(t *testing.T, s *Etcd, prefix string) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.client.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
		t.Fatalf("delete: %v", err)
	}
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, rev); err != nil {
		t.Fatalf("compact: %v", err)
	}
}

func TestEmbeddedDefragment(t *testing.T) {
	t.Parallel()
	e, err := StartEmbedded(t.Context(), t.TempDir(), nil, WithUnsafeNoFsync(), WithFastElection(), WithDefragInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.Store()
	defer s.Close()
	fillAndFree(t, s, "/defrag/", 1000, 8<<10)

	ctx := t.Context()
	before, err := e.client.Status(ctx, e.endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	// The default policy does not defragment a few megabytes.
	if did, err := e.maybeDefrag(ctx); did || err != nil {
		t.Fatalf("default policy: maybeDefrag = %v, %v; want false, nil (size %d, in use %d)", did, err, before.DbSize, before.DbSizeInUse)
	}
	// When bbolt returns the freed pages to its free list depends on etcd's background
	// commits, so the rest of the test uses a policy that is always due.
	e.defrag = defragPolicy{}
	if did, err := e.maybeDefrag(ctx); !did || err != nil {
		t.Fatalf("maybeDefrag = %v, %v; want true, nil", did, err)
	}
	after, err := e.client.Status(ctx, e.endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	if after.DbSize >= before.DbSize {
		t.Fatalf("size after defragmentation %d, want below %d", after.DbSize, before.DbSize)
	}
	// Right after defragmenting, a policy requiring free space is not due.
	e.defrag = defragPolicy{minFree: 1 << 20, minFraction: 0.5}
	if did, err := e.maybeDefrag(ctx); did || err != nil {
		t.Fatalf("maybeDefrag after defragmenting = %v, %v; want false, nil", did, err)
	}
}

// TestEmbeddedNoSpaceRecovery: once the quota is exhausted etcd refuses writes; freeing the
// space and defragmenting disarms the alarm so that writes work again.
func TestEmbeddedNoSpaceRecovery(t *testing.T) {
	t.Parallel()
	smallQuota := func(c *embeddedConfig) { c.quotaBackendBytes = 8 << 20 }
	e, err := StartEmbedded(t.Context(), t.TempDir(), nil, WithUnsafeNoFsync(), WithFastElection(), WithDefragInterval(0), smallQuota)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.defrag = defragPolicy{} // always due
	s := e.Store()
	defer s.Close()
	ctx := t.Context()

	value := bytes.Repeat([]byte("x"), 256<<10)
	put := func(key string) error {
		_, err := s.Txn(ctx, Txn{Ops: []Op{{Type: OpPut, Key: key, Value: value}}})
		return err
	}
	var full error
	for i := 0; i < 1000 && full == nil; i++ {
		full = put(fmt.Sprintf("/nospace/%05d", i))
	}
	if !errors.Is(full, rpctypes.ErrNoSpace) {
		t.Fatalf("writing past the quota: err = %v, want ErrNoSpace", full)
	}
	if errors.Is(full, ErrTooLarge) {
		t.Fatalf("quota exhaustion mapped to ErrTooLarge: %v", full)
	}
	deleteAndCompact(t, s, "/nospace/")
	if did, err := e.maybeDefrag(ctx); !did || err != nil {
		t.Fatalf("maybeDefrag = %v, %v; want true, nil", did, err)
	}
	if err := put("/nospace/again"); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
}

func TestZapToSlog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		min      slog.Level
		stopping *atomic.Bool
		log      func(*zap.Logger)
		want     string
		empty    bool
	}{
		{
			name: "error with fields and With",
			min:  slog.LevelError,
			log: func(l *zap.Logger) {
				l.Named("raft").With(zap.String("member", "m1")).Error("lost leader", zap.Int("term", 3), zap.Error(errors.New("boom")))
			},
			want: `level=ERROR msg="lost leader" component=etcd logger=raft member=m1 error=boom term=3`,
		},
		{
			name:  "info below the minimum",
			min:   slog.LevelError,
			log:   func(l *zap.Logger) { l.Info("serving") },
			empty: true,
		},
		{
			name: "info at a debug minimum",
			min:  slog.LevelDebug,
			log:  func(l *zap.Logger) { l.Info("serving", zap.Strings("urls", []string{"a", "b"})) },
			want: `level=INFO msg=serving component=etcd urls="[a b]"`,
		},
		{
			name:     "error while stopping is debug",
			min:      slog.LevelError,
			stopping: stopped(),
			log:      func(l *zap.Logger) { l.Error("setting up serving failed", zap.Error(errors.New("server closed"))) },
			empty:    true,
		},
		{
			name:     "error while stopping at a debug minimum",
			min:      slog.LevelDebug,
			stopping: stopped(),
			log:      func(l *zap.Logger) { l.Error("setting up serving failed") },
			want:     `level=DEBUG msg="setting up serving failed" component=etcd`,
		},
		{
			name:     "error while running",
			min:      slog.LevelError,
			stopping: new(atomic.Bool),
			log:      func(l *zap.Logger) { l.Error("disk full") },
			want:     `level=ERROR msg="disk full" component=etcd`,
		},
		{
			name: "warn",
			min:  slog.LevelInfo,
			log:  func(l *zap.Logger) { l.Warn("slow", zap.Duration("took", 1500000000)) },
			want: `level=WARN msg=slow component=etcd took=1.5s`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := slog.NewTextHandler(&buf, &slog.HandlerOptions{
				Level: slog.LevelDebug,
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				},
			})
			tc.log(newZapLogger(slog.New(h), tc.min, tc.stopping))
			got := strings.TrimSpace(buf.String())
			if tc.empty {
				if got != "" {
					t.Fatalf("logged %q, want nothing", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("logged\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}

func stopped() *atomic.Bool {
	b := new(atomic.Bool)
	b.Store(true)
	return b
}

// TestStartEtcdPortInUse pins the error StartEmbedded retries on: the client port taken
// between choosing it and etcd binding it.
func TestStartEtcdPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	pki, err := loadOrCreatePKI(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conf := embeddedConfig{compaction: time.Minute, quotaBackendBytes: 1 << 30}
	dataDir := filepath.Join(dir, "etcd")
	e, err := startEtcd(dataDir, singleMember(dataDir, pki, l.Addr().(*net.TCPAddr).Port), zap.NewNop(), conf)
	if err == nil {
		e.Close()
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("start with the client port in use: err = %v, want EADDRINUSE", err)
	}
}

// TestMembershipBehind: a joining member starts again when the peer it asked had not yet
// applied its addition (etcd's error, as a joining replica logged it), and only then.
func TestMembershipBehind(t *testing.T) {
	lagging := errors.New("error validating peerURLs {ClusterID:88e452a83a8ede2d Members:[&{ID:5f9ab895caba5410 RaftAttributes:{PeerURLs:[https://127.0.0.1:22261] IsLearner:false}}] RemovedMemberIDs:[]}: member count is unequal")
	if !membershipBehind(fmt.Errorf("start: %w", lagging)) {
		t.Error("a peer's membership without the new member is not taken as lagging")
	}
	for _, err := range []error{
		errors.New("listen tcp 127.0.0.1:2380: bind: address already in use"),
		errors.New("PeerURLs: no match found for existing member (5f9ab895caba5410, [https://127.0.0.1:22261]), last resolver error (<nil>)"),
	} {
		if membershipBehind(err) {
			t.Errorf("%v is taken as a lagging peer", err)
		}
	}
}
