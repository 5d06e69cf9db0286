package storage_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"

	"github.com/quotad/quotad/internal/storage"
)

// TestEmbeddedRestart closes the server and starts it again on the same dir: keys, values,
// revisions and the store revision are the same, and new writes continue after them.
func TestEmbeddedRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()

	e1, err := storage.StartEmbedded(ctx, dir, nil, storage.WithFastElection())
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	s1 := e1.Store()
	txns := []storage.Txn{
		{Ops: []storage.Op{{Type: storage.OpPut, Key: "/r/a", Value: []byte("a1")}, {Type: storage.OpPut, Key: "/r/b", Value: []byte("b1")}}},
		{Ops: []storage.Op{{Type: storage.OpPut, Key: "/r/a", Value: []byte("a2")}, {Type: storage.OpPut, Key: "/r/c", Value: []byte("c1")}}},
		{Ops: []storage.Op{{Type: storage.OpDelete, Key: "/r/b"}}},
	}
	for i, txn := range txns {
		if _, err := s1.Txn(ctx, txn); err != nil {
			t.Fatalf("txn %d: %v", i, err)
		}
	}
	before, err := s1.List(ctx, "/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	if err := e1.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	e2 := startEmbedded(t, dir)
	s2 := e2.Store()
	defer s2.Close()
	after, err := s2.List(ctx, "/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(after), describe(before); !slices.Equal(got, want) || after.Revision != before.Revision {
		t.Fatalf("after restart: %q at %d, want %q at %d", got, after.Revision, want, before.Revision)
	}
	res, err := s2.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/r/d", Value: []byte("d1")}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != before.Revision+1 {
		t.Fatalf("first write after restart at %d, want %d", res.Revision, before.Revision+1)
	}
}

func describe(res storage.ListResult) []string {
	var out []string
	for _, kv := range res.KVs {
		out = append(out, fmt.Sprintf("%s=%s mod=%d create=%d", kv.Key, kv.Value, kv.ModRevision, kv.CreateRevision))
	}
	return out
}

// TestEmbeddedDirInUse: a second server on a dir in use fails at once; the dir is free
// again after Close.
func TestEmbeddedDirInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e1, err := storage.StartEmbedded(t.Context(), dir, nil, storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	if e2, err := storage.StartEmbedded(t.Context(), dir, nil, storage.WithFastElection()); !errors.Is(err, fileutil.ErrLocked) {
		if e2 != nil {
			e2.Close()
		}
		t.Fatalf("second start on a dir in use: err = %v, want fileutil.ErrLocked", err)
	}
	e1.Close()
	startEmbedded(t, dir)
}

// TestEmbeddedEndpoints: the advertised endpoints serve the same data as the in-process client.
func TestEmbeddedEndpoints(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	local := e.Store()
	defer local.Close()
	res, err := local.Txn(t.Context(), storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/e/a", Value: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := storage.ConnectExternal(t.Context(), e.Endpoints(), clientTLS(t, e), slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	remote := storage.NewEtcd(client)
	defer remote.Close()
	kv, err := remote.Get(t.Context(), "/e/a")
	if err != nil || string(kv.Value) != "x" || kv.ModRevision != res.Revision {
		t.Fatalf("Get over the endpoints = %+v, %v", kv, err)
	}
}

func TestConnectExternalNoEndpoints(t *testing.T) {
	t.Parallel()
	if _, err := storage.ConnectExternal(t.Context(), nil, nil, nil); err == nil {
		t.Fatal("ConnectExternal without endpoints succeeded")
	}
}

// TestConnectLocal: a second client reaches a running embedded etcd through the data
// dir alone (the recorded endpoints and the client certificate in etcd-pki).
func TestConnectLocal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	e, err := storage.StartEmbedded(ctx, dir, nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Client().Put(ctx, "/registry/probe", "v"); err != nil {
		t.Fatal(err)
	}
	c, err := storage.ConnectLocal(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Get(ctx, "/registry/probe")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v" {
		t.Fatalf("get through ConnectLocal: %v %v", got, err)
	}
	if _, err := storage.ConnectLocal(ctx, t.TempDir(), nil); err == nil {
		t.Fatal("ConnectLocal on a data dir where no etcd ran: want an error")
	}
}
