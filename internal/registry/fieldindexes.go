package registry

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry/fieldindex"
	"github.com/quotad/quotad/internal/registry/watchhub"
	"github.com/quotad/quotad/internal/storage"
)

// A list selecting one value of its resource's IndexedField (a kubelet's list of its own
// pods: spec.nodeName=<node>), or a cluster-wide list with a label selector (`kubectl get
// pods -A -l app=web`), reads only the objects an index gives for it, at the index's
// revision, instead of every object of the resource. Each resource's index
// (fieldindex.Index: each key's value of the field and its labels) is loaded by the first
// such list, in the background (that list reads every object), then fed by the resource's
// watch hub; one unused for indexIdle stops and forgets its keys.
//
// A list is read at a revision at least the one a list of every object would be read at:
// the store's current revision for a consistent list (resourceVersion "" or "0"), the one
// asked for otherwise. When the index has not reached it, the hub's storage watch is asked
// for a progress notification, as kube-apiserver asks before a consistent read from its
// watch cache; a list that waits indexWait in vain, continues a list, or asks for an exact
// revision reads every object as before.

const (
	// indexWait bounds a list's wait for its index (kube-apiserver's consistent reads from
	// the watch cache wait 3 s before reading etcd instead).
	indexWait = 3 * time.Second
	// indexIdle: an index no list used for this long stops, and its memory is freed.
	indexIdle = 10 * time.Minute
	// progressRetry is how long a list waits for its index to move before it asks for a
	// progress notification again.
	progressRetry = 100 * time.Millisecond
)

// fieldIndexes is the store's indexes, one per resource with an IndexedField.
type fieldIndexes struct {
	mu sync.Mutex
	m  map[*Resource]*fieldIndex
}

// fieldIndex is one resource's index and the state of its feed.
type fieldIndex struct {
	x *fieldindex.Index
	// running is set (under fieldIndexes.mu) while a feed loads or feeds x.
	running bool
	// lastUse is when a list last used the index (Unix nanoseconds).
	lastUse atomic.Int64
	// kick asks the feed for a progress notification.
	kick chan struct{}
}

// index returns res's index, starting its feed when it does not run.
func (s *Store) index(res *Resource) *fieldIndex {
	s.indexes.mu.Lock()
	defer s.indexes.mu.Unlock()
	if s.indexes.m == nil {
		s.indexes.m = map[*Resource]*fieldIndex{}
	}
	fi := s.indexes.m[res]
	if fi == nil {
		fi = &fieldIndex{x: fieldindex.New(), kick: make(chan struct{}, 1)}
		s.indexes.m[res] = fi
	}
	fi.lastUse.Store(time.Now().UnixNano())
	if !fi.running {
		fi.running = true
		go s.feedIndex(res, fi)
	}
	return fi
}

// feedIndex loads res's index and feeds it from the resource's watch hub until the hub's
// watch ends or the index has been unused for indexIdle; it then forgets the index.
func (s *Store) feedIndex(res *Resource, fi *fieldIndex) {
	defer func() {
		fi.x.Reset()
		s.indexes.mu.Lock()
		fi.running = false
		s.indexes.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rev, err := s.loadIndex(ctx, res, fi.x)
	if err != nil {
		s.cfg.Logger.Debug("field index: load failed", "resource", res.GVR.Resource, "err", err)
		return
	}
	h := s.hubs.Get(hubKey(res), res, func() watchhub.Source { return s.hubSource(res) })
	events := h.Watch(ctx, rev)
	if events == nil {
		return // changed too fast for the hub's history: the next list starts it again
	}
	fi.x.Synced(rev)
	idle := time.NewTicker(indexIdle / 4)
	defer idle.Stop()
	for {
		select {
		case b, ok := <-events:
			if !ok || b.Err != nil {
				return
			}
			for _, ev := range b.Events {
				if ev.Type == storage.EventDelete {
					fi.x.Delete(ev.Key)
					continue
				}
				v, labels, known := indexEntry(res, ev.Cur)
				fi.x.Put(ev.Key, v, labels, known)
			}
			fi.x.Synced(b.Rev)
		case <-fi.kick:
			h.RequestProgress()
		case <-idle.C:
			if time.Since(time.Unix(0, fi.lastUse.Load())) > indexIdle {
				return
			}
		}
	}
}

// indexEntry is what the index keeps of obj: the value of res's IndexedField and the
// labels (obj's own map: the objects a hub hands out are never modified), and whether
// they could be read.
func indexEntry(res *Resource, obj runtime.Object) (string, map[string]string, bool) {
	if obj == nil {
		return "", nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", nil, false
	}
	v, ok := res.Fields(obj)[res.IndexedField]
	return v, m.GetLabels(), ok
}

// loadIndex puts every object of res into x, read page by page at one revision (eachPage),
// which it returns.
func (s *Store) loadIndex(ctx context.Context, res *Resource, x *fieldindex.Index) (int64, error) {
	reader := newPrunedReader(res, true, []string{res.IndexedField})
	return s.eachPage(ctx, res.KeyPrefix(""), 0, func(kvs []storage.KV) bool {
		for _, kv := range kvs {
			v, labels, known := "", map[string]string(nil), false
			if obj, err := reader.object(kv); err == nil {
				v, labels, known = indexEntry(res, obj)
			}
			x.Put(kv.Key, v, labels, known)
		}
		return true
	})
}

// indexedKeys returns the keys under prefix an index gives for a list of res with opts, in
// order, and the revision to read them at; ok is false when the list must read every
// object: no index serves it, its index has not reached the list's revision in time, or
// its label selector alone matches most objects (reading them all at once is cheaper).
// An index serves lists selecting one value of res's IndexedField, and cluster-wide lists
// with a label selector (a namespace's few objects are read at once).
func (s *Store) indexedKeys(ctx context.Context, res *Resource, prefix string, opts ListOptions) (keys []string, rev int64, ok bool) {
	if res.IndexedField == "" || opts.Continue != "" {
		return nil, 0, false
	}
	var value *string
	if opts.Selector.Field != nil {
		if v, found := opts.Selector.Field.RequiresExactMatch(res.IndexedField); found {
			value = &v
		}
	}
	byLabels := opts.Selector.Label != nil && !opts.Selector.Label.Empty()
	if value == nil && (!byLabels || prefix != res.KeyPrefix("")) {
		return nil, 0, false
	}
	defer func() {
		if s.cfg.ObserveIndexedList != nil {
			s.cfg.ObserveIndexedList(res.GVR.GroupResource(), ok)
		}
	}()
	if opts.exact() {
		return nil, 0, false
	}
	fi := s.index(res)
	if _, synced := fi.x.Revision(); !synced {
		return nil, 0, false // loading: this list reads every object
	}
	atLeast, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, 0, false // the list answers the error
	}
	if atLeast == 0 {
		// A consistent list: at least the store's current revision.
		if atLeast, err = s.cfg.Storage.Revision(ctx); err != nil {
			return nil, 0, false
		}
	} else if got, _ := fi.x.Revision(); got < atLeast {
		// The store may not have reached it either: such a list waits for it as before
		// (and answers 504 if it does not come).
		if cur, err := s.cfg.Storage.Revision(ctx); err != nil || cur < atLeast {
			return nil, 0, false
		}
	}
	if !s.awaitIndex(ctx, fi, atLeast) {
		return nil, 0, false
	}
	var match func(map[string]string) bool
	if byLabels {
		match = opts.Selector.MatchesLabels
	}
	keys, considered, rev, ok := fi.x.Select(prefix, value, match)
	if value == nil && len(keys) > considered/2 {
		return nil, 0, false
	}
	return keys, rev, ok
}

// awaitIndex waits, at most indexWait, until fi has reached rev, asking for a progress
// notification whenever it has not.
func (s *Store) awaitIndex(ctx context.Context, fi *fieldIndex, rev int64) bool {
	wctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	for {
		if got, synced := fi.x.Revision(); !synced {
			return false
		} else if got >= rev {
			return true
		}
		select {
		case fi.kick <- struct{}{}:
		default: // a request is pending already
		}
		// Until the index moves, or progressRetry: a member behind the revision read (a
		// watch served by another member of an etcd cluster) answers at or below what the
		// index holds, and is asked again.
		got, _ := fi.x.Revision()
		rctx, rcancel := context.WithTimeout(wctx, progressRetry)
		fi.x.Wait(rctx, got+1)
		rcancel()
		if wctx.Err() != nil {
			r, synced := fi.x.Revision()
			return synced && r >= rev
		}
	}
}

// readKeys reads keys at revision rev, in order; a key missing there is left out.
func (s *Store) readKeys(ctx context.Context, keys []string, rev int64) ([]storage.KV, error) {
	kvs := make([]storage.KV, 0, len(keys))
	for _, key := range keys {
		lr, err := s.cfg.Storage.List(ctx, key, storage.ListOptions{Revision: rev, Limit: 1, NoCount: true, Serializable: true})
		if err != nil {
			return nil, err
		}
		if len(lr.KVs) == 1 && lr.KVs[0].Key == key {
			kvs = append(kvs, lr.KVs[0])
		}
	}
	return kvs, nil
}

// indexedPages reads the keys an index gave, pageSize at a time at rev, and gives each
// page to fn as listPages does (at least once).
func (s *Store) indexedPages(ctx context.Context, keys []string, rev, pageSize int64, opts ListOptions, prefix string, fn func(rev int64, kvs []storage.KV, paced bool) error) error {
	for first := true; first || len(keys) > 0; first = false {
		paced := !first && opts.Pace != nil
		if paced {
			if err := opts.Pace(ctx); err != nil {
				return err
			}
		}
		n := len(keys)
		if pageSize > 0 {
			n = min(n, int(pageSize))
		}
		kvs, err := s.readKeys(ctx, keys[:n], rev)
		if err != nil {
			return listError(err, opts, prefix, "")
		}
		if err := fn(rev, kvs, paced); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// indexedList is List of the keys an index gave, read at rev: opts.Limit objects at most,
// with a continue token that reads the rest of the prefix at rev.
func (s *Store) indexedList(ctx context.Context, res *Resource, prefix string, keys []string, rev int64, opts ListOptions) (*ListResult, error) {
	out := &ListResult{ResourceVersion: strconv.FormatInt(rev, 10)}
	sel := newSelection(res, opts.Selector)
	for len(keys) > 0 {
		n := len(keys)
		if opts.Limit > 0 {
			n = min(n, int(opts.Limit))
		}
		kvs, err := s.readKeys(ctx, keys[:n], rev)
		if err != nil {
			return nil, listError(err, opts, prefix, "")
		}
		keys = keys[n:]
		i, err := appendMatches(res, sel, kvs, out, opts.Limit)
		if err != nil {
			return nil, err
		}
		if i >= 0 && (i < len(kvs)-1 || len(keys) > 0) {
			out.Continue = encodeContinue(rev, strings.TrimPrefix(kvs[i].Key, prefix)+"\x00")
			return out, nil
		}
	}
	return out, nil
}
