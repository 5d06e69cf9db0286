package storage_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"

	"github.com/quotad/quotad/internal/storage"
)

// TestTryLockOutlastsALentDescriptor: a lock whose open file a forked child still holds
// (a duplicated descriptor, until the child execs) is taken once the child lets go, and a
// lock held by a live holder is refused with fileutil.ErrLocked.
func TestTryLockOutlastsALentDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, err := storage.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	lent, err := syscall.Dup(int(first.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fileutil.TryLockFile(path, syscall.O_WRONLY, 0o600); !errors.Is(err, fileutil.ErrLocked) {
		t.Fatalf("with the lent descriptor open: %v, want the lock held", err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := storage.TryLock(path)
		if err == nil {
			err = l.Close()
		}
		got <- err
	}()
	if err := syscall.Close(lent); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("TryLock after the lent descriptor closed: %v", err)
	}

	held, err := storage.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := storage.TryLock(path); !errors.Is(err, fileutil.ErrLocked) {
		t.Fatalf("TryLock of a held lock: %v, want %v", err, fileutil.ErrLocked)
	}
}
