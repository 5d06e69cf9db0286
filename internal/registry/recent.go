package registry

import (
	"sync"

	"github.com/quotad/quotad/internal/storage"
)

// Recent writes: where the next update of an object starts.
//
// An update reads the object it changes, then commits guarded by the mod revision it read.
// Most updates in a cluster rewrite what the same server wrote last (a node renewing its
// Lease every 10 s, a pod's status, a node's status), so the store keeps the stored bytes and
// revision of the objects it updated last and the next update of one starts from them
// instead of a read of etcd, as kube-apiserver's GuaranteedUpdate starts from its watch
// cache. Nothing else changes:
//
//   - the commit is still guarded by that mod revision, so an entry made stale by another
//     replica's write (or a delete and create) fails its guard and the update starts over
//     from etcd;
//   - an update that fails for any other reason, or turns out a no-op or a deletion, on a
//     remembered object is tried again from etcd before it answers (a stale object could
//     refuse a resourceVersion precondition or a quota the stored one passes, or answer a
//     no-op with an old object), as GuaranteedUpdate retries on a cached state;
//   - an entry is taken by the update that uses it (never shared) and put back by that
//     update's commit; deletions drop it; dry runs neither use nor put one.
//
// The memory is bounded: entries of at most recentMaxValue bytes, recentMaxBytes in all
// (an arbitrary entry goes when a new one needs the room).
type recentWrites struct {
	mu    sync.Mutex
	m     map[string]storage.KV
	bytes int
}

const (
	recentMaxValue = 16 << 10
	recentMaxBytes = 16 << 20
)

// take removes and returns the entry of key.
func (r *recentWrites) take(key string) (storage.KV, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kv, ok := r.m[key]
	if ok {
		delete(r.m, key)
		r.bytes -= len(kv.Value)
	}
	return kv, ok
}

// put records what key holds after a commit at rev (value: its stored bytes).
func (r *recentWrites) put(key string, value []byte, rev int64) {
	if len(value) == 0 || len(value) > recentMaxValue {
		r.drop(key)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]storage.KV{}
	}
	if old, ok := r.m[key]; ok {
		r.bytes -= len(old.Value)
	}
	for k, v := range r.m {
		if r.bytes+len(value) <= recentMaxBytes {
			break
		}
		delete(r.m, k)
		r.bytes -= len(v.Value)
	}
	r.m[key] = storage.KV{Key: key, Value: value, ModRevision: rev}
	r.bytes += len(value)
}

// drop forgets key.
func (r *recentWrites) drop(key string) { r.take(key) }
