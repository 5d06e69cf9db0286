package commit

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/quotad/quotad/internal/storage"
)

// memStore is storage.Store over memKV, for engines under test: reads at past revisions
// from memKV's history, and watches.
type memStore struct {
	mu sync.Mutex
	kv *memKV
	// changed is closed (and replaced) at every revision, waking the watches.
	changed chan struct{}
	// onWatch, when set, is told the prefix of every watch opened.
	onWatch func(prefix string)
}

func newMemStore(kv *memKV) *memStore { return &memStore{kv: kv, changed: make(chan struct{})} }

func (s *memStore) Get(_ context.Context, key string) (storage.KV, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kv, ok := s.kv.keys[key]
	if !ok {
		return storage.KV{}, storage.ErrNotFound
	}
	return kv, nil
}

// List lists prefix at opts.Revision (the latest when 0); it honours Limit, not StartKey.
func (s *memStore) List(_ context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev := opts.Revision
	if rev == 0 {
		rev = s.kv.rev
	}
	if rev > s.kv.rev {
		return storage.ListResult{}, storage.ErrFutureRevision
	}
	var kvs []storage.KV
	if rev == s.kv.rev {
		kvs = s.kv.list(prefix)
	} else {
		kvs = s.at(prefix, rev)
	}
	lr := storage.ListResult{KVs: kvs, Revision: rev}
	if opts.Limit > 0 && int64(len(kvs)) > opts.Limit {
		lr.KVs, lr.More, lr.Remaining = kvs[:opts.Limit], true, int64(len(kvs))-opts.Limit
	}
	return lr, nil
}

// at replays the history up to rev: the keys under prefix then, in key order.
func (s *memStore) at(prefix string, rev int64) []storage.KV {
	keys := map[string]storage.KV{}
	for _, r := range s.kv.log {
		if r.rev > rev {
			break
		}
		for _, op := range r.ops {
			if !strings.HasPrefix(op.Key, prefix) {
				continue
			}
			if op.Type == storage.OpDelete {
				delete(keys, op.Key)
				continue
			}
			kv := keys[op.Key]
			if kv.CreateRevision == 0 {
				kv.CreateRevision = r.rev
			}
			kv.Key, kv.Value, kv.ModRevision = op.Key, op.Value, r.rev
			keys[op.Key] = kv
		}
	}
	out := make([]storage.KV, 0, len(keys))
	for _, kv := range keys {
		out = append(out, kv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (s *memStore) Watch(ctx context.Context, prefix string, fromRev int64) <-chan storage.WatchResult {
	return s.WatchWithoutPrev(ctx, prefix, fromRev)
}

// WatchWithoutPrev delivers the revisions after fromRev that change keys under prefix, one
// result per revision, until ctx ends.
func (s *memStore) WatchWithoutPrev(ctx context.Context, prefix string, fromRev int64) <-chan storage.WatchResult {
	out := make(chan storage.WatchResult)
	s.mu.Lock()
	if fromRev == 0 {
		fromRev = s.kv.rev
	}
	s.mu.Unlock()
	if s.onWatch != nil {
		s.onWatch(prefix)
	}
	go func() {
		defer close(out)
		last := fromRev
		for {
			s.mu.Lock()
			var results []storage.WatchResult
			for _, r := range s.kv.log {
				if r.rev <= last {
					continue
				}
				var evs []storage.Event
				for _, op := range r.ops {
					if !strings.HasPrefix(op.Key, prefix) {
						continue
					}
					ev := storage.Event{Type: storage.EventPut, KV: storage.KV{Key: op.Key, Value: op.Value, ModRevision: r.rev}}
					if op.Type == storage.OpDelete {
						ev = storage.Event{Type: storage.EventDelete, KV: storage.KV{Key: op.Key, ModRevision: r.rev}}
					}
					evs = append(evs, ev)
				}
				if len(evs) > 0 {
					results = append(results, storage.WatchResult{Events: evs, Revision: r.rev})
				}
			}
			last = s.kv.rev
			changed := s.changed
			s.mu.Unlock()
			for _, r := range results {
				select {
				case out <- r:
				case <-ctx.Done():
					return
				}
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func (s *memStore) Txn(_ context.Context, txn storage.Txn) (storage.TxnResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.kv.rev
	rev := s.kv.txn(txn)
	if rev == 0 {
		return storage.TxnResult{}, storage.ErrConflict
	}
	if rev != before {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return storage.TxnResult{Revision: rev}, nil
}

// Txns commits each transaction on its own (each at a revision of its own, which the
// engine does not tell apart from one shared revision).
func (s *memStore) Txns(ctx context.Context, txns []storage.Txn) ([]storage.TxnOutcome, error) {
	out := make([]storage.TxnOutcome, len(txns))
	for i, txn := range txns {
		out[i].TxnResult, out[i].Err = s.Txn(ctx, txn)
	}
	return out, nil
}

func (s *memStore) Revision(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kv.rev, nil
}

func (s *memStore) Close() error { return nil }
