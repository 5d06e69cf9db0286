package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/storage"
)

// A watch hub runs ONE storage watch per resource and decodes every event once for all the
// watchers of that resource (controllers, informers, kubectl get -w), as kube-apiserver's
// watch cache does. It keeps the last hubHistory batches so a watcher starting a little in
// the past (the revision of its list) is served from memory; older starts use a watch of
// their own. Watchers get deep copies: objects in the hub are never handed out.

const (
	hubHistory   = 512
	hubSubBuffer = 2048
)

// decodedEvent is a storage event with its objects decoded (shared, read-only).
type decodedEvent struct {
	typ storage.EventType
	key string
	rev int64
	cur runtime.Object
	// prev is the previous state: decoded at once for deletions, on first use for updates
	// (only watchers with selectors need it), shared by every watcher.
	prev *lazyObject
}

// decodedBatch is what a watcher receives: the events of one revision, a progress
// notification (no events), or a terminal error.
type decodedBatch struct {
	rev    int64
	events []decodedEvent
	err    error
}

type hubSub struct {
	ch   chan decodedBatch
	from int64
	// behind is set (under the hub's lock) when the watcher fell behind and was dropped.
	behind bool
}

type watchHub struct {
	store   *Store
	res     *Resource
	prefix  string
	mu      sync.Mutex
	running bool
	lastRev int64
	// floor: every event after floor is either in history or still to come.
	floor   int64
	history []decodedBatch
	subs    map[*hubSub]struct{}
	// stop ends the running storage watch (the hub stops when its last watcher leaves);
	// epoch tells the runs apart, so a stopped run cannot touch a newer one's watchers.
	stop  context.CancelFunc
	epoch int64
	// offers are objects this replica's writers are committing, by key, so that the hub
	// need not decode them again (see Resource.SharesWrites).
	offers map[string]offer
}

// offer is an object being committed and the exact bytes it is stored as.
type offer struct {
	value []byte
	obj   runtime.Object
}

// maxOffers bounds the offers a hub keeps: offers of writes that failed are never taken,
// so past this many the hub forgets them all (and decodes those events instead).
const maxOffers = 1024

type hubs struct {
	mu sync.Mutex
	m  map[string]*watchHub
}

// hubKey names the hub of a resource: its key prefix, and its version when it shares
// another resource's storage (each version decodes the events into its own objects).
func hubKey(res *Resource) string {
	if res.Storage != nil {
		return res.KeyPrefix("") + "@" + res.GVR.GroupVersion().String()
	}
	return res.KeyPrefix("")
}

func (s *Store) hub(res *Resource) *watchHub {
	s.hubs.mu.Lock()
	defer s.hubs.mu.Unlock()
	if s.hubs.m == nil {
		s.hubs.m = map[string]*watchHub{}
	}
	prefix := res.KeyPrefix("")
	h := s.hubs.m[hubKey(res)]
	if h == nil || h.res != res {
		h = &watchHub{store: s, res: res, prefix: prefix, subs: map[*hubSub]struct{}{}}
		s.hubs.m[hubKey(res)] = h
	}
	return h
}

// watchDecoded streams decoded batches of res with revisions after from, until ctx ends or
// an error batch.
func (s *Store) watchDecoded(ctx context.Context, res *Resource, from int64) <-chan decodedBatch {
	h := s.hub(res)
	// A start the store has compacted away gets 410 Gone, even if the hub remembers it.
	if from > 0 {
		if _, err := s.cfg.Storage.List(ctx, res.KeyPrefix(""), storage.ListOptions{Revision: from, Limit: 1, KeysOnly: true, NoCount: true}); errors.Is(err, storage.ErrCompacted) {
			out := make(chan decodedBatch, 1)
			out <- decodedBatch{err: err}
			close(out)
			return out
		}
	}
	if sub := h.subscribe(from); sub != nil {
		out := make(chan decodedBatch)
		go func() {
			defer close(out)
			defer h.unsubscribe(sub)
			for {
				select {
				case <-ctx.Done():
					return
				case b, ok := <-sub.ch:
					if !ok {
						h.mu.Lock()
						behind := sub.behind
						h.mu.Unlock()
						if behind {
							select {
							case out <- decodedBatch{err: fmt.Errorf("watcher of %s fell behind", h.prefix)}:
							case <-ctx.Done():
							}
						}
						return
					}
					if b.err == nil && len(b.events) > 0 && b.rev <= sub.from {
						continue
					}
					select {
					case out <- b:
					case <-ctx.Done():
						return
					}
					if b.err != nil {
						return
					}
				}
			}
		}()
		return out
	}
	return s.directWatch(ctx, res, res.KeyPrefix(""), from)
}

// subscribe registers a watcher from revision from; nil means the hub cannot serve it.
func (h *watchHub) subscribe(from int64) *hubSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := &hubSub{ch: make(chan decodedBatch, hubSubBuffer), from: from}
	if !h.running {
		h.running = true
		h.lastRev, h.floor = from, from
		h.history = nil
		h.offers = nil
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		h.epoch++
		go h.run(ctx, cancel, from, h.epoch)
		h.subs[sub] = struct{}{}
		return sub
	}
	if from < h.lastRev {
		// Replay from history if it holds every event after from.
		if from < h.floor {
			return nil
		}
		i := 0
		for i < len(h.history) && h.history[i].rev <= from {
			i++
		}
		if len(h.history)-i > hubSubBuffer/2 {
			return nil
		}
		for _, b := range h.history[i:] {
			sub.ch <- b
		}
	}
	h.subs[sub] = struct{}{}
	return sub
}

func (h *watchHub) unsubscribe(sub *hubSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
	if len(h.subs) == 0 && h.running {
		h.running = false
		h.history = nil
		h.offers = nil
		h.stop()
	}
}

// run is the hub's storage watch.
func (h *watchHub) run(ctx context.Context, cancel context.CancelFunc, from, epoch int64) {
	defer cancel()
	var src <-chan storage.WatchResult
	var values *keptValues
	if h.res.HubKeepsValues {
		var err error
		if values, from, err = h.store.keepValues(ctx, h.prefix, from); err != nil {
			h.deliver(decodedBatch{err: err}, epoch)
			return
		}
		src = h.store.cfg.Storage.WatchWithoutPrev(ctx, h.prefix, from)
	} else {
		src = h.store.cfg.Storage.Watch(ctx, h.prefix, from)
	}
	for wr := range src {
		b := decodedBatch{rev: wr.Revision, err: wr.Err}
		if wr.Err == nil {
			if values != nil {
				values.fill(wr.Events)
			}
			b.events = h.store.decodeEvents(h.res, wr.Events, h.takeOffers(wr.Events))
		}
		if !h.deliver(b, epoch) {
			return
		}
	}
	h.deliver(decodedBatch{err: fmt.Errorf("watch of %s ended", h.prefix)}, epoch)
}

// deliver fans a batch out; it stops the hub after an error. Watchers that cannot keep up
// are ended with an error and re-list, as upstream ends slow watchers.
func (h *watchHub) deliver(b decodedBatch, epoch int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if epoch != h.epoch || !h.running {
		return false // this run was stopped
	}
	if b.err != nil {
		for sub := range h.subs {
			select {
			case sub.ch <- b:
			default:
			}
			close(sub.ch)
			delete(h.subs, sub)
		}
		h.running = false
		h.history = nil
		h.offers = nil
		return false
	}
	if len(b.events) > 0 {
		h.history = append(h.history, b)
		// Trim in chunks so that keeping history costs O(1) per batch.
		if len(h.history) >= 2*hubHistory {
			drop := len(h.history) - hubHistory
			h.floor = h.history[drop-1].rev
			h.history = append(h.history[:0:0], h.history[drop:]...)
		}
	}
	if b.rev > h.lastRev {
		h.lastRev = b.rev
	}
	for sub := range h.subs {
		select {
		case sub.ch <- b:
		default:
			sub.behind = true
			close(sub.ch)
			delete(h.subs, sub)
		}
	}
	return true
}

// keptValues is the stored value of every key under a prefix, as a watch without previous
// values goes: it gives each event the previous value storage would have sent.
type keptValues struct {
	kvs map[string]*storage.KV
}

// keepValues reads every key under prefix at revision rev (0: the latest, which it returns).
func (s *Store) keepValues(ctx context.Context, prefix string, rev int64) (*keptValues, int64, error) {
	v := &keptValues{kvs: map[string]*storage.KV{}}
	rev, err := s.eachPage(ctx, prefix, rev, func(kvs []storage.KV) bool {
		for i := range kvs {
			v.kvs[kvs[i].Key] = &kvs[i]
		}
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	return v, rev, nil
}

// fill sets each event's previous value and records its new one.
func (v *keptValues) fill(evs []storage.Event) {
	for i := range evs {
		ev := &evs[i]
		ev.PrevKV = v.kvs[ev.KV.Key]
		if ev.Type == storage.EventDelete {
			delete(v.kvs, ev.KV.Key)
		} else {
			v.kvs[ev.KV.Key] = &ev.KV
		}
	}
}

// directWatch is a watch of its own, for starts the hub's history does not cover.
func (s *Store) directWatch(ctx context.Context, res *Resource, prefix string, from int64) <-chan decodedBatch {
	out := make(chan decodedBatch, 64)
	go func() {
		defer close(out)
		for wr := range s.cfg.Storage.Watch(ctx, prefix, from) {
			b := decodedBatch{rev: wr.Revision, err: wr.Err}
			if wr.Err == nil {
				b.events = s.decodeEvents(res, wr.Events, nil)
			}
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	return out
}

// offerWrite offers the object a write is about to commit to its resource's running hub.
// The hub gets a shallow copy: after a write, the store only sets the written object's own
// resourceVersion and kind, and writers never modify what they wrote (see Store.Create).
func (s *Store) offerWrite(w *write) {
	if w.obj != nil && w.value != nil {
		s.offer(w.res, w.key, w.value, func() runtime.Object { return shallowCopy(w.obj) })
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
// key; the hub takes it only if an event's value is byte for byte that value. obj returns
// the object, which nothing may modify afterwards; it is called only when a hub runs.
func (s *Store) offer(res *Resource, key string, value []byte, obj func() runtime.Object) {
	if !res.SharesWrites {
		return
	}
	s.hubs.mu.Lock()
	h := s.hubs.m[hubKey(res)]
	s.hubs.mu.Unlock()
	if h == nil || h.res != res {
		return
	}
	h.mu.Lock()
	running := h.running
	h.mu.Unlock()
	if !running {
		return
	}
	o := offer{value: value, obj: obj()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return
	}
	if h.offers == nil || len(h.offers) >= maxOffers {
		h.offers = map[string]offer{}
	}
	h.offers[key] = o
}

// takeOffers removes the offers matching puts of evs and returns, for each event, the
// object (with its resourceVersion set) that stands for its decoded value, or nil.
func (h *watchHub) takeOffers(evs []storage.Event) []runtime.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.offers) == 0 {
		return nil
	}
	var out []runtime.Object
	for i, ev := range evs {
		o, ok := h.offers[ev.KV.Key]
		if !ok || ev.Type != storage.EventPut || !bytes.Equal(o.value, ev.KV.Value) {
			continue
		}
		delete(h.offers, ev.KV.Key)
		objectMeta(o.obj).SetResourceVersion(strconv.FormatInt(ev.KV.ModRevision, 10))
		if out == nil {
			out = make([]runtime.Object, len(evs))
		}
		out[i] = o.obj
	}
	return out
}

// decodeEvents decodes the objects of storage events; undecodable values are skipped.
// taken, when not nil, holds for each event an object standing for its value (see
// takeOffers).
func (s *Store) decodeEvents(res *Resource, evs []storage.Event, taken []runtime.Object) []decodedEvent {
	out := make([]decodedEvent, 0, len(evs))
	for i, ev := range evs {
		de := decodedEvent{typ: ev.Type, key: ev.KV.Key, rev: ev.KV.ModRevision}
		if taken != nil && taken[i] != nil {
			de.cur = taken[i]
		} else if ev.Type == storage.EventPut {
			obj, err := decodeKV(res, ev.KV)
			if err != nil {
				s.cfg.Logger.Warn("watch: undecodable value", "key", ev.KV.Key, "err", err)
				continue
			}
			de.cur = obj
		}
		if ev.PrevKV != nil {
			de.prev = &lazyObject{res: res, kv: ev.PrevKV}
			if ev.Type == storage.EventDelete {
				de.prev.get()
			}
		}
		out = append(out, de)
	}
	return out
}

// lazyObject is a stored value decoded at most once, when first needed.
type lazyObject struct {
	res  *Resource
	kv   *storage.KV
	once sync.Once
	obj  runtime.Object
}

// get returns the decoded object, or nil when the value cannot be decoded.
func (l *lazyObject) get() runtime.Object {
	l.once.Do(func() {
		if obj, err := decodeStored(l.res, l.kv.Value, l.kv.ModRevision); err == nil {
			l.obj = obj
		}
	})
	return l.obj
}

// inNamespace reports whether a key lies under a namespace's prefix.
func inNamespace(key, nsPrefix string) bool { return strings.HasPrefix(key, nsPrefix) }
