package storage_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// waitTimeout bounds waits on channels; it is a failure guard only.
const waitTimeout = 30 * time.Second

// startEmbedded starts an embedded etcd in a fresh temporary dir, closed at cleanup (a
// single member elects itself at once: storage.WithFastElection).
func startEmbedded(t *testing.T, dir string, opts ...storage.EmbeddedOption) *storage.Embedded {
	t.Helper()
	opts = append([]storage.EmbeddedOption{storage.WithFastElection()}, opts...)
	e, err := storage.StartEmbedded(t.Context(), dir, slog.New(slog.NewTextHandler(t.Output(), nil)), opts...)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// clientTLS is the TLS configuration of a client of e's endpoints.
func clientTLS(t *testing.T, e *storage.Embedded) *tls.Config {
	t.Helper()
	f := e.ClientTLS()
	c, err := storage.ExternalTLS(f.CAFile, f.CertFile, f.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEtcdConformanceEmbedded(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s := e.Store()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestEtcdConformanceExternal runs the suite over a network client, as with --etcd-servers.
func TestEtcdConformanceExternal(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	client, err := storage.ConnectExternal(t.Context(), e.Endpoints(), clientTLS(t, e), nil)
	if err != nil {
		t.Fatalf("ConnectExternal: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s := storage.NewEtcd(client)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestUncountedPages: an embedded member's store reads NoCount pages without counting the
// rest of the range, a network client's cannot (etcd's Range counts).
func TestUncountedPages(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	local := e.Store()
	defer local.Close()
	client, err := storage.ConnectExternal(t.Context(), e.Endpoints(), clientTLS(t, e), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	remote := storage.NewEtcd(client)
	defer remote.Close()
	if !storage.ReadsUncountedPages(local) || storage.ReadsUncountedPages(remote) {
		t.Errorf("ReadsUncountedPages: embedded %v, external %v; want true, false", storage.ReadsUncountedPages(local), storage.ReadsUncountedPages(remote))
	}
}

func TestWatchProgressOnIdle(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir(), storage.WithProgressNotifyInterval(100*time.Millisecond))
	s := e.Store()
	defer s.Close()
	ctx := t.Context()

	start, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch := s.Watch(ctx, "/idle/", start)
	res, err := s.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/busy/a", Value: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(waitTimeout)
	for {
		select {
		case r, ok := <-ch:
			if !ok || r.Err != nil || len(r.Events) != 0 {
				t.Fatalf("idle watch delivered %+v (open=%v), want progress notifications only", r, ok)
			}
			if r.Revision >= res.Revision {
				return
			}
		case <-timeout:
			t.Fatalf("idle watch revision never reached %d", res.Revision)
		}
	}
}

func TestStoreCloseEndsWatches(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	s := e.Store()
	ch := s.Watch(context.Background(), "/x/", 0)
	s.Close()
	select {
	case r, ok := <-ch:
		if ok {
			t.Fatalf("watch delivered %+v after Close, want closed", r)
		}
	case <-time.After(waitTimeout):
		t.Fatal("watch not closed by Close")
	}
	// The client stays usable: the store does not own it.
	if _, err := e.Store().Revision(t.Context()); err != nil {
		t.Fatalf("client unusable after the store closed: %v", err)
	}
}

func TestCompactErrors(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	s := e.Store()
	defer s.Close()
	ctx := t.Context()
	var last int64
	for range 3 {
		res, err := s.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/c/k", Value: []byte("v")}}})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Revision
	}
	tests := []struct {
		name string
		rev  int64
		want error
	}{
		{"current", last - 1, nil},
		{"already compacted", last - 2, storage.ErrCompacted},
		{"future", last + 100, storage.ErrFutureRevision},
	}
	for _, tc := range tests {
		err := s.Compact(ctx, tc.rev)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: Compact(%d) = %v, want %v", tc.name, tc.rev, err, tc.want)
		}
	}
}

func TestTxnInvalid(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	s := e.Store()
	defer s.Close()
	tests := []struct {
		name string
		txn  storage.Txn
	}{
		{"duplicate key", storage.Txn{Ops: []storage.Op{
			{Type: storage.OpPut, Key: "/d/a", Value: []byte("1")},
			{Type: storage.OpDelete, Key: "/d/a"},
		}}},
		{"unknown compare", storage.Txn{Compares: []storage.Compare{{Target: 99, Key: "/d/a"}}}},
		{"negative revision", storage.Txn{Compares: []storage.Compare{{Key: "/d/a", Revision: -1}}}},
		{"unknown op", storage.Txn{Ops: []storage.Op{{Type: 99, Key: "/d/a"}}}},
	}
	for _, tc := range tests {
		_, err := s.Txn(t.Context(), tc.txn)
		if err == nil || errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrTooLarge) {
			t.Errorf("%s: err = %v, want an untyped error", tc.name, err)
		}
	}
	if _, err := s.Get(t.Context(), "/d/a"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("invalid txns wrote /d/a: %v", err)
	}
}

// TestNewEtcdNeedsConnection: the in-process client has no connection to carry requests
// built directly; NewEtcd says so at once and points to Embedded.Store.
func TestNewEtcdNeedsConnection(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	defer func() {
		r := recover()
		if msg, _ := r.(string); !strings.Contains(msg, "Embedded.Store") {
			t.Fatalf("NewEtcd over the in-process client: recovered %v, want a panic naming Embedded.Store", r)
		}
	}()
	storage.NewEtcd(e.Client())
	t.Fatal("NewEtcd over the in-process client returned")
}

// laggingKV is a client KV whose serving member is behind: a serializable read at a
// revision fails with etcd's future-revision error, as on a member that has not applied it.
type laggingKV struct {
	clientv3.KV
	lagged *int
}

func (k laggingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if op := clientv3.OpGet(key, opts...); op.IsSerializable() && op.Rev() > 0 {
		*k.lagged++
		return nil, rpctypes.ErrFutureRev
	}
	return k.KV.Get(ctx, key, opts...)
}

// TestSerializableListOnLaggingMember: a serializable list at a revision read from another
// member (the client balances requests over an external cluster's members) is served
// although its member lags; a revision beyond the cluster's still gives ErrFutureRevision.
// Three quotad replicas on a three-member etcd answered writes with 500 "revision not yet
// reached" before (test/ha).
func TestSerializableListOnLaggingMember(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	client, err := storage.ConnectExternal(t.Context(), e.Endpoints(), clientTLS(t, e), nil)
	if err != nil {
		t.Fatalf("ConnectExternal: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	lagged := 0
	client.KV = laggingKV{KV: client.KV, lagged: &lagged}
	s := storage.NewEtcd(client)
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	res, err := s.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/lag/a", Value: []byte("1")}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    storage.ListOptions
		wantErr error
		wantKVs int
	}{
		{"serializable at a committed revision", storage.ListOptions{Revision: res.Revision, Serializable: true}, nil, 1},
		{"serializable beyond the cluster", storage.ListOptions{Revision: res.Revision + 1000, Serializable: true}, storage.ErrFutureRevision, 0},
		{"linearizable beyond the cluster", storage.ListOptions{Revision: res.Revision + 1000}, storage.ErrFutureRevision, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr, err := s.List(ctx, "/lag/", tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("List: err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (len(lr.KVs) != tt.wantKVs || lr.Revision != tt.opts.Revision) {
				t.Fatalf("List: %d keys at %d, want %d at %d", len(lr.KVs), lr.Revision, tt.wantKVs, tt.opts.Revision)
			}
		})
	}
	if lagged != 2 {
		t.Errorf("the lagging member served %d serializable reads, want 2", lagged)
	}
}

// electingKV is a client KV whose reads fail with etcd's "leader changed" the first fail
// times, as reads in flight during an election do.
type electingKV struct {
	clientv3.KV
	fail *int
}

func (k electingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if *k.fail > 0 {
		*k.fail--
		return nil, rpctypes.ErrLeaderChanged
	}
	return k.KV.Get(ctx, key, opts...)
}

// TestReadAfterLeaderChange: a read that etcd answers with "leader changed" is sent again
// (a bounded number of times): Get, List and Revision succeed across an election, and
// fail with the error only when the elections do not stop.
func TestReadAfterLeaderChange(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	client, err := storage.ConnectExternal(t.Context(), e.Endpoints(), clientTLS(t, e), nil)
	if err != nil {
		t.Fatalf("ConnectExternal: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	fail := 0
	client.KV = electingKV{KV: client.KV, fail: &fail}
	s := storage.NewEtcd(client)
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	if _, err := s.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/elect/a", Value: []byte("1")}}}); err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		name string
		read func() error
	}{
		{"get", func() error { _, err := s.Get(ctx, "/elect/a"); return err }},
		{"list", func() error { _, err := s.List(ctx, "/elect/", storage.ListOptions{}); return err }},
		{"revision", func() error { _, err := s.Revision(ctx); return err }},
	}
	for _, r := range reads {
		for _, failures := range []int{1, 3, 4} {
			t.Run(fmt.Sprintf("%s after %d", r.name, failures), func(t *testing.T) {
				fail = failures
				err := r.read()
				if want := failures > 3; want != errors.Is(err, rpctypes.ErrLeaderChanged) || (!want && err != nil) {
					t.Fatalf("err = %v after %d elections", err, failures)
				}
			})
		}
	}
}
