package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quotad/quotad/internal/storage"
)

// TestSnapshotSaveRestore saves a snapshot over the client listener (after a member that
// does not answer), restores it into a new dir and starts the embedded etcd there: same
// keys, values and revisions. A second restore into that dir is refused.
func TestSnapshotSaveRestore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := startEmbedded(t, t.TempDir())
	st := e.Store()
	defer st.Close()
	for i, txn := range []storage.Txn{
		{Ops: []storage.Op{{Type: storage.OpPut, Key: "/r/a", Value: []byte("a1")}, {Type: storage.OpPut, Key: "/r/b", Value: []byte("b1")}}},
		{Ops: []storage.Op{{Type: storage.OpPut, Key: "/r/a", Value: []byte("a2")}}},
	} {
		if _, err := st.Txn(ctx, txn); err != nil {
			t.Fatalf("txn %d: %v", i, err)
		}
	}
	before, err := st.List(ctx, "/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "snap.db")
	dead := "https://127.0.0.1:1" // nothing listens there
	if err := storage.SaveSnapshot(ctx, append([]string{dead}, e.Endpoints()...), clientTLS(t, e), file, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v", fi, err)
	}
	// Written after the snapshot: not restored.
	if _, err := st.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/r/c", Value: []byte("c1")}}}); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	if err := storage.RestoreSnapshot(file, dir, nil); err != nil {
		t.Fatal(err)
	}
	if err := storage.RestoreSnapshot(file, dir, nil); !errors.Is(err, storage.ErrDataDirHasEtcd) {
		t.Fatalf("second restore: %v", err)
	}
	r := startEmbedded(t, dir)
	rs := r.Store()
	defer rs.Close()
	after, err := rs.List(ctx, "/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(after), describe(before); !slices.Equal(got, want) || after.Revision != before.Revision {
		t.Fatalf("restored: %q at %d, want %q at %d", got, after.Revision, want, before.Revision)
	}
}
