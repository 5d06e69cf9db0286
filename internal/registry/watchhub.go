package registry

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry/watchhub"
	"github.com/quotad/quotad/internal/storage"
)

// The store's side of package watchhub: one hub per resource (hubKey), whose source is
// the resource's keys decoded as the resource's objects, and the offers of this replica's
// writes to the running hubs.

// hubKey names the hub of a resource: its key prefix, and its version when it shares
// another resource's storage (each version decodes the events into its own objects).
func hubKey(res *Resource) string {
	if res.Storage != nil {
		return res.KeyPrefix("") + "@" + res.GVR.GroupVersion().String()
	}
	return res.KeyPrefix("")
}

// hubSource is what the hub of res watches and how it decodes.
func (s *Store) hubSource(res *Resource) watchhub.Source {
	return watchhub.Source{
		Storage:     s.cfg.Storage,
		Prefix:      res.KeyPrefix(""),
		KeepsValues: res.HubKeepsValues,
		EachPage:    s.eachPage,
		Decode: func(evs []storage.Event, taken []runtime.Object) []watchhub.Event {
			return s.decodeEvents(res, evs, taken)
		},
	}
}

// watchDecoded starts a watch of res's decoded batches with revisions after from and
// returns what hands them to fn, in the caller's goroutine, until fn returns false, ctx
// ends or after an error batch. The watch starts at once (so no batch after from is
// missed, however late the returned function is called); it ends with ctx or when the
// function returns. prefix is the keys the caller reads (res's, or a namespace's): what
// the hub decodes again for it (cold history) or a watch of its own decodes is only theirs;
// batches may still carry other keys, which the caller filters.
func (s *Store) watchDecoded(ctx context.Context, res *Resource, from int64, prefix string) func(fn func(watchhub.Batch) bool) {
	h := s.hubs.Get(hubKey(res), res, func() watchhub.Source { return s.hubSource(res) })
	// A start the store has compacted away gets 410 Gone, even if the hub remembers it.
	if from > 0 {
		if _, err := s.cfg.Storage.List(ctx, res.KeyPrefix(""), storage.ListOptions{Revision: from, Limit: 1, KeysOnly: true, NoCount: true}); errors.Is(err, storage.ErrCompacted) {
			return func(fn func(watchhub.Batch) bool) { fn(watchhub.Batch{Err: err}) }
		}
	}
	if prefix == res.KeyPrefix("") {
		prefix = ""
	}
	if st := h.SubscribeUnder(ctx, from, prefix); st != nil {
		return st.Each
	}
	direct := s.hubSource(res)
	if prefix != "" {
		direct.Prefix = prefix
	}
	src := watchhub.Direct(ctx, direct, from)
	return func(fn func(watchhub.Batch) bool) {
		for b := range src {
			if !fn(b) {
				return
			}
		}
	}
}

// RequestProgress asks the running hub of res, if there is one, for a progress
// notification: each of its watchers that asked for bookmarks then gets one at the current
// revision (at most one a second each), so a watcher of a resource nobody writes learns how
// far the store has gone. It reports whether one was asked for.
func (s *Store) RequestProgress(res *Resource) bool {
	h := s.hubs.Lookup(hubKey(res), res)
	return h != nil && h.RequestProgress()
}

// offerWrite offers the object a write is about to commit to its resource's running hub.
// The hub gets a shallow copy: after a write, the store only sets the written object's own
// resourceVersion and kind, and writers never modify what they wrote (see Store.Create).
func (s *Store) offerWrite(w *write) {
	if w.Obj != nil && w.Value != nil {
		s.offer(w.res, w.Key, w.Value, func() runtime.Object { return shallowCopy(w.Obj) })
	}
}

// shallowCopy returns a new object with obj's fields (sharing its maps and slices).
func shallowCopy(obj runtime.Object) runtime.Object {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return obj.DeepCopyObject()
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	return cp.Interface().(runtime.Object)
}

// offer gives the running hub of res (if any) the object about to be stored as value at
// key (watchhub.Hub.Offer), for the kinds that share writes (Resource.SharesWrites).
func (s *Store) offer(res *Resource, key string, value []byte, obj func() runtime.Object) {
	if !res.SharesWrites {
		return
	}
	if h := s.hubs.Lookup(hubKey(res), res); h != nil {
		h.Offer(key, value, obj)
	}
}

// decodeEvents decodes the objects of storage events; undecodable values are skipped.
// taken, when not nil, holds for each event an object standing for its value (see
// watchhub.Hub.Offer).
func (s *Store) decodeEvents(res *Resource, evs []storage.Event, taken []runtime.Object) []watchhub.Event {
	out := make([]watchhub.Event, 0, len(evs))
	for i, ev := range evs {
		de := watchhub.Event{Type: ev.Type, Key: ev.KV.Key, Rev: ev.KV.ModRevision}
		if taken != nil && taken[i] != nil {
			de.Cur = taken[i]
		} else if ev.Type == storage.EventPut {
			obj, err := decodeKV(res, ev.KV)
			if err != nil {
				s.cfg.Logger.Warn("watch: undecodable value", "key", ev.KV.Key, "err", err)
				continue
			}
			de.Cur = obj
		}
		if ev.PrevKV != nil {
			de.Prev = watchhub.NewLazy((*storedDecoder)(res), ev.PrevKV)
			if ev.Type == storage.EventDelete {
				de.Prev.Get()
			}
		}
		out = append(out, de)
	}
	return out
}

// storedDecoder decodes the stored values of a resource (watchhub.Decoder).
type storedDecoder Resource

// DecodeKV decodes a stored value as decodeKV does.
func (d *storedDecoder) DecodeKV(kv *storage.KV) (runtime.Object, error) {
	return decodeStored((*Resource)(d), kv.Value, kv.ModRevision)
}

// inNamespace reports whether a key lies under a namespace's prefix.
func inNamespace(key, nsPrefix string) bool { return strings.HasPrefix(key, nsPrefix) }
