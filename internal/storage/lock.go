package storage

import (
	"errors"
	"os"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
)

// lockGrace is how long TryLock waits for a lock that another holder is releasing.
const lockGrace = time.Second

// TryLock takes the exclusive lock on the file at path (created if missing) without
// blocking on a live holder: it fails with fileutil.ErrLocked once the lock has stayed
// held for lockGrace.
//
// The short wait is for holders that are going away. A lock is released when the last
// descriptor of its open file closes, and a process that forks (to run any command) lends
// its descriptors to the child until the child execs. So a quotad stopped in a process
// that forks at that moment, or a quotad restarted by a supervisor a moment after its
// predecessor exits, may find the lock held for an instant by no live quotad.
func TryLock(path string) (*fileutil.LockedFile, error) {
	deadline := time.Now().Add(lockGrace)
	for {
		l, err := fileutil.TryLockFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
		if err == nil || !errors.Is(err, fileutil.ErrLocked) || !time.Now().Before(deadline) {
			return l, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
