package watchhub

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/storage"
)

// A watch hub runs ONE storage watch per resource and decodes every event once for all the
// watchers of that resource (controllers, informers, kubectl get -w), as kube-apiserver's
// watch cache does. It keeps the last hubHistory batches so a watcher starting a little in
// the past (the revision of its list) is served from memory; older starts use a watch of
// their own (Direct). Objects in the hub are shared: the store hands watchers deep copies.

const (
	// The history keeps the last hubHistory batches, and no more than hubHistoryEvents
	// events and hubHistoryBytes of stored values (current and previous): with group
	// commit a batch may hold dozens of objects, a cluster quota over a thousand
	// namespaces is rewritten as a value of 160 KB by every joined round, and the history
	// holds every one it names (a watcher starting further back is served by a watch of
	// its own).
	hubHistory       = 512
	hubHistoryEvents = 4096
	hubHistoryBytes  = 16 << 20
	hubSubBuffer     = 2048
	// hubHotEvents: the history's newest events (to a quarter past) are held decoded, as
	// they were delivered; older ones only as stored, decoded again for a watcher that
	// replays them (a decoded pod is several times its stored bytes, and full of pointers
	// every garbage collection marks, where stored values are marked as one object each).
	// Watchers starting from a list's revision replay the newest events.
	hubHotEvents = 512
)

// Event is a storage event with its objects decoded (shared, read-only).
type Event struct {
	Type storage.EventType
	Key  string
	Rev  int64
	Cur  runtime.Object
	// Prev is the previous state: decoded at once for deletions, on first use for updates
	// (only watchers with selectors need it), shared by every watcher.
	Prev *Lazy
}

// Batch is what a watcher receives: the events of one revision, a progress notification
// (no events), or a terminal error.
type Batch struct {
	Rev    int64
	Events []Event
	Err    error
	// bytes is the size of the batch's stored values, current and previous (the
	// history's bound).
	bytes int
	// raw is what the hub's batch was decoded from. A batch of the history older than its
	// hubHotEvents newest events holds it alone (cold, Events nil); a watcher replaying it
	// decodes it again (Stream.Each).
	raw  []storage.Event
	cold bool
}

// hasEvents reports whether the batch carries events (decoded, or held cold).
func (b *Batch) hasEvents() bool { return len(b.Events) > 0 || b.cold }

// thawed is a cold batch's events under prefix ("": all) decoded again by src; false when
// it has none there.
func (b Batch) thawed(src *Source, under string) (Batch, bool) {
	raw := b.raw
	if under != "" {
		raw = nil
		for _, ev := range b.raw {
			if strings.HasPrefix(ev.KV.Key, under) {
				raw = append(raw, ev)
			}
		}
		if len(raw) == 0 {
			return b, false
		}
	}
	b.Events, b.cold = src.Decode(raw, nil), false
	return b, true
}

// Source is what a hub watches: one resource's keys, and how their events are decoded.
type Source struct {
	// Storage is watched under Prefix.
	Storage storage.Store
	Prefix  string
	// KeepsValues makes the hub keep every key's stored value and watch without previous
	// values, which it then fills in itself (registry.Resource.HubKeepsValues).
	KeepsValues bool
	// EachPage reads every key under a prefix at a revision (0: the latest), page by page,
	// and returns that revision; used when KeepsValues.
	EachPage func(ctx context.Context, prefix string, rev int64, f func([]storage.KV) bool) (int64, error)
	// Decode decodes events; taken, when not nil, holds for each event an object offered
	// for its value (see Hub.Offer) that stands for its decoding.
	Decode func(evs []storage.Event, taken []runtime.Object) []Event
}

// hubSub is one watcher's backlog: the batches delivered and not yet taken, at most
// hubSubBuffer of them. It grows with what is waiting and is let go when drained, so an
// idle watcher holds no buffer (a channel of hubSubBuffer batches was 112 KB a watcher,
// which every garbage collection scanned).
type hubSub struct {
	from int64
	// ready is signalled (never blocking: capacity 1) when batches are queued or the
	// watcher is ended.
	ready chan struct{}
	mu    sync.Mutex
	queue []Batch
	// ended: no batch comes after those queued. behind: the watcher fell behind and was
	// dropped.
	ended, behind bool
}

func newHubSub(from int64) *hubSub {
	return &hubSub{from: from, ready: make(chan struct{}, 1)}
}

// push queues b; it reports false (queuing nothing) when the backlog is full.
func (s *hubSub) push(b Batch) bool {
	s.mu.Lock()
	full := len(s.queue) >= hubSubBuffer
	if !full {
		s.queue = append(s.queue, b)
	}
	s.mu.Unlock()
	if !full {
		s.signal()
	}
	return !full
}

// end ends the watcher after what is queued, with last queued first when it is not
// nil (whether or not the backlog is full); behind records that it fell behind.
func (s *hubSub) end(last *Batch, behind bool) {
	s.mu.Lock()
	if last != nil {
		s.queue = append(s.queue, *last)
	}
	s.ended, s.behind = true, behind
	s.mu.Unlock()
	s.signal()
}

func (s *hubSub) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// take returns what is queued, leaving spare (empty) to queue the next batches in, and
// whether the watcher ended, and if so whether behind.
func (s *hubSub) take(spare []Batch) (batches []Batch, ended, behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	batches = s.queue
	s.queue = spare
	return batches, s.ended, s.behind
}

// recycle returns a delivered take emptied for the next one, holding none of its batches;
// nil when it grew past maxSpareBatches (a burst's backlog is let go, not kept while the
// watcher idles).
func recycle(taken []Batch) []Batch {
	if cap(taken) > maxSpareBatches {
		return nil
	}
	clear(taken)
	return taken[:0]
}

// maxSpareBatches bounds the drained backlog a watcher keeps for its next batches.
const maxSpareBatches = 16

// Hub is the fan-out of one resource's storage watch to its watchers, with a bounded
// history and bounded per-watcher backlogs.
type Hub struct {
	src     Source
	owner   any
	mu      sync.Mutex
	running bool
	lastRev int64
	// floor: every event after floor is either in history or still to come.
	floor   int64
	history []Batch
	// histEvents and histBytes count the events of history and their values' bytes;
	// history[hot:] are held decoded, hotEvents of them.
	histEvents, histBytes int
	hot, hotEvents        int
	subs                  map[*hubSub]struct{}
	// stop ends the running storage watch (the hub stops when its last watcher leaves);
	// epoch tells the runs apart, so a stopped run cannot touch a newer one's watchers.
	stop  context.CancelFunc
	epoch int64
	// progress asks the running storage watch for a progress notification (nil: the
	// storage cannot, or the watch has not started).
	progress func() error
	// offers are objects this replica's writers are committing, by key (oldest first, at
	// most maxOffersPerKey: a key rewritten by every round, as a cluster quota is, is offered
	// again before the hub sees the previous round's event), so that the hub need not decode
	// them again (see registry.Resource.SharesWrites).
	offers map[string][]offer
	// offerCount and offerBytes count the offers and their values' bytes.
	offerCount, offerBytes int
}

// offer is an object being committed and the exact bytes it is stored as.
type offer struct {
	value []byte
	obj   runtime.Object
}

// maxOffers and maxOfferBytes bound the offers a hub keeps (their number, their values'
// bytes): offers of writes that failed are never taken, so past either bound the hub
// forgets them all (and decodes those events instead). Without the second, a client
// whose large writes kept failing (creates racing for names) left a thousand of them.
const (
	maxOffers       = 1024
	maxOfferBytes   = 16 << 20
	maxOffersPerKey = 4
)

// Hubs is a set of hubs by name (the zero value is empty and ready).
type Hubs struct {
	mu sync.Mutex
	m  map[string]*Hub
}

// Get returns the hub named key of owner, making it when there is none or the one there
// is another owner's (a resource replaced in the catalogue gets a hub of its own); src
// gives the new hub's source.
func (hs *Hubs) Get(key string, owner any, src func() Source) *Hub {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[string]*Hub{}
	}
	h := hs.m[key]
	if h == nil || h.owner != owner {
		h = &Hub{src: src(), owner: owner, subs: map[*hubSub]struct{}{}}
		hs.m[key] = h
	}
	return h
}

// Lookup returns the hub named key of owner, or nil.
func (hs *Hubs) Lookup(key string, owner any) *Hub {
	hs.mu.Lock()
	h := hs.m[key]
	hs.mu.Unlock()
	if h == nil || h.owner != owner {
		return nil
	}
	return h
}

// Watch streams the batches with revisions after from, until ctx ends or an error batch;
// nil when the hub cannot serve from (its history no longer holds every event after it,
// or replaying it would fill half a watcher's backlog): Direct serves those. A goroutine
// passes the batches to the channel; Subscribe's Stream hands them to the watcher's own.
func (h *Hub) Watch(ctx context.Context, from int64) <-chan Batch {
	st := h.Subscribe(ctx, from)
	if st == nil {
		return nil
	}
	out := make(chan Batch)
	go func() {
		defer close(out)
		st.Each(func(b Batch) bool {
			select {
			case out <- b:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return out
}

// Stream is one watcher of a hub read in the watcher's own goroutine (Each): the hub queues
// its batches and wakes the watcher itself, with no goroutine between them.
type Stream struct {
	h     *Hub
	sub   *hubSub
	ctx   context.Context
	stop  func() bool
	under string
}

// Subscribe starts a watcher of the batches with revisions after from, as Watch does (nil:
// the hub cannot serve from). The watcher is ended when ctx ends or Each returns; one that
// never calls Each must end ctx.
func (h *Hub) Subscribe(ctx context.Context, from int64) *Stream {
	return h.SubscribeUnder(ctx, from, "")
}

// SubscribeUnder is Subscribe for a watcher that reads only the keys under prefix (a
// namespace's): of the history's cold batches it replays, only the events under prefix are
// decoded again, and a batch with none there is left out (the other batches it is handed
// whole, and it filters them itself). A tenant's watch of its namespace from an older
// revision so costs what its own namespace wrote, not what every namespace did.
func (h *Hub) SubscribeUnder(ctx context.Context, from int64, prefix string) *Stream {
	sub := h.subscribe(from)
	if sub == nil {
		return nil
	}
	st := &Stream{h: h, sub: sub, ctx: ctx, under: prefix}
	st.stop = context.AfterFunc(ctx, func() { h.unsubscribe(sub) })
	return st
}

// Each hands fn the stream's batches in order until ctx ends, fn returns false, or after an
// error batch (a watcher that fell behind gets one); then it ends the watcher. Called once.
func (st *Stream) Each(fn func(Batch) bool) {
	defer func() {
		if st.stop() {
			st.h.unsubscribe(st.sub)
		}
	}()
	ctx, sub := st.ctx, st.sub
	var spare []Batch
	for {
		batches, ended, behind := sub.take(spare)
		for _, b := range batches {
			if b.Err == nil && b.hasEvents() && b.Rev <= sub.from {
				continue
			}
			if b.cold {
				var ok bool
				if b, ok = b.thawed(&st.h.src, st.under); !ok {
					continue
				}
			}
			if ctx.Err() != nil || !fn(b) || b.Err != nil {
				return
			}
		}
		spare = recycle(batches)
		if ended {
			if behind && ctx.Err() == nil {
				fn(Batch{Err: fmt.Errorf("watcher of %s fell behind", st.h.src.Prefix)})
			}
			return
		}
		if len(batches) > 0 {
			continue // more may have come while these were handed over
		}
		select {
		case <-ctx.Done():
			return
		case <-sub.ready:
		}
	}
}

func (h *Hub) subscribe(from int64) *hubSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := newHubSub(from)
	if !h.running {
		h.running = true
		h.lastRev, h.floor = from, from
		h.forget()
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		h.epoch++
		h.progress = nil
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
		for i < len(h.history) && h.history[i].Rev <= from {
			i++
		}
		if len(h.history)-i > hubSubBuffer/2 {
			return nil
		}
		sub.queue = append(sub.queue, h.history[i:]...)
	}
	h.subs[sub] = struct{}{}
	return sub
}

// forget drops the history and the offers (under mu).
func (h *Hub) forget() {
	h.history, h.histEvents, h.histBytes, h.hot, h.hotEvents = nil, 0, 0, 0, 0
	h.offers, h.offerCount, h.offerBytes = nil, 0, 0
}

func (h *Hub) unsubscribe(sub *hubSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
	if len(h.subs) == 0 && h.running {
		h.running = false
		h.forget()
		h.stop()
	}
}

// run is the hub's storage watch.
func (h *Hub) run(ctx context.Context, cancel context.CancelFunc, from, epoch int64) {
	defer cancel()
	var values *keptValues
	if h.src.KeepsValues {
		var err error
		if values, from, err = keepValues(ctx, h.src, from); err != nil {
			h.deliver(Batch{Err: err}, epoch)
			return
		}
	}
	src := h.watch(ctx, from, values == nil, epoch)
	for wr := range src {
		b := Batch{Rev: wr.Revision, Err: wr.Err}
		if wr.Err == nil {
			if values != nil {
				values.fill(wr.Events)
			}
			b.Events = h.src.Decode(wr.Events, h.takeOffers(wr.Events))
			b.bytes, b.raw = valueBytes(wr.Events), wr.Events
		}
		if !h.deliver(b, epoch) {
			return
		}
	}
	h.deliver(Batch{Err: fmt.Errorf("watch of %s ended", h.src.Prefix)}, epoch)
}

// watch starts the run's storage watch, with previous values or not; a storage that is a
// ProgressWatcher gives the hub its progress requests (RequestProgress).
func (h *Hub) watch(ctx context.Context, from int64, prevKV bool, epoch int64) <-chan storage.WatchResult {
	pw, ok := h.src.Storage.(storage.ProgressWatcher)
	if !ok {
		if prevKV {
			return h.src.Storage.Watch(ctx, h.src.Prefix, from)
		}
		return h.src.Storage.WatchWithoutPrev(ctx, h.src.Prefix, from)
	}
	src, progress := pw.WatchProgressing(ctx, h.src.Prefix, from, prevKV)
	h.mu.Lock()
	if epoch == h.epoch {
		h.progress = progress
	}
	h.mu.Unlock()
	return src
}

// RequestProgress asks the running hub's storage watch for a progress notification, which
// reaches every watcher as a batch without events at a revision at least the store's when
// asked. It reports whether it could ask (the hub runs on a storage that answers).
func (h *Hub) RequestProgress() bool {
	h.mu.Lock()
	progress := h.progress
	if !h.running {
		progress = nil
	}
	h.mu.Unlock()
	return progress != nil && progress() == nil
}

// deliver fans a batch out; it stops the hub after an error. Watchers that cannot keep up
// are ended with an error and re-list, as upstream ends slow watchers.
func (h *Hub) deliver(b Batch, epoch int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if epoch != h.epoch || !h.running {
		return false // this run was stopped
	}
	if b.Err != nil {
		for sub := range h.subs {
			sub.end(&b, false)
			delete(h.subs, sub)
		}
		h.running = false
		h.forget()
		return false
	}
	if len(b.Events) > 0 {
		h.keep(b)
	}
	if b.Rev > h.lastRev {
		h.lastRev = b.Rev
	}
	for sub := range h.subs {
		if !sub.push(b) {
			sub.end(nil, true)
			delete(h.subs, sub)
		}
	}
	return true
}

// keep adds a delivered batch to the history (under mu). The history is trimmed to its
// bounds, and its batches past the newest hubHotEvents events let their decoded events go,
// in chunks (once a bound is passed by a quarter of it) so that keeping history costs O(1)
// per batch.
func (h *Hub) keep(b Batch) {
	h.history = append(h.history, b)
	h.histEvents += len(b.raw)
	h.histBytes += b.bytes
	h.hotEvents += len(b.Events)
	if len(h.history) >= trimAt(hubHistory) || h.histEvents >= trimAt(hubHistoryEvents) || h.histBytes >= trimAt(hubHistoryBytes) {
		drop := max(len(h.history)-hubHistory, 0)
		events, bytes := h.histEvents, h.histBytes
		for _, old := range h.history[:drop] {
			events, bytes = events-len(old.raw), bytes-old.bytes
		}
		for drop < len(h.history)-1 && (events > hubHistoryEvents || bytes > hubHistoryBytes) {
			events, bytes = events-len(h.history[drop].raw), bytes-h.history[drop].bytes
			drop++
		}
		if drop > 0 {
			for _, old := range h.history[h.hot:max(drop, h.hot)] {
				h.hotEvents -= len(old.Events)
			}
			h.hot = max(h.hot-drop, 0)
			h.floor = h.history[drop-1].Rev
			h.history = append(h.history[:0:0], h.history[drop:]...)
			h.histEvents, h.histBytes = events, bytes
		}
	}
	if h.hotEvents >= trimAt(hubHotEvents) {
		// Watchers hold copies of the batches they were handed: the history's own copy lets
		// the decoded events go, theirs keep them until they are done.
		for h.hotEvents > hubHotEvents && h.hot < len(h.history)-1 {
			old := &h.history[h.hot]
			h.hotEvents -= len(old.Events)
			old.Events, old.cold = nil, true
			h.hot++
		}
	}
}

// trimAt is where the history is trimmed back to bound: a quarter past it. The objects of
// the batches past the bound are kept alive only for watchers starting that far back, so
// the slack is what keeping history O(1) per batch needs, not more.
func trimAt(bound int) int { return bound + bound/4 }

// valueBytes is the size of the events' values, current and previous.
func valueBytes(evs []storage.Event) int {
	n := 0
	for _, ev := range evs {
		n += len(ev.KV.Value)
		if ev.PrevKV != nil {
			n += len(ev.PrevKV.Value)
		}
	}
	return n
}

// keptValues is the stored value of every key under a prefix, as a watch without previous
// values goes: it gives each event the previous value storage would have sent.
//
// Each value is kept in a KV of its own, never as a pointer into a page or a batch: an
// event's PrevKV is the kept value, and a pointer into the previous batch's events would
// keep that whole batch alive, whose events point into the batch before: every version
// of every key, for as long as the hub runs (a cluster quota rewritten by every joined
// round held 1.4 KB per create).
type keptValues struct {
	kvs map[string]*storage.KV
}

// keepValues reads every key of src at revision rev (0: the latest, which it returns).
func keepValues(ctx context.Context, src Source, rev int64) (*keptValues, int64, error) {
	v := &keptValues{kvs: map[string]*storage.KV{}}
	rev, err := src.EachPage(ctx, src.Prefix, rev, func(kvs []storage.KV) bool {
		for _, kv := range kvs {
			v.kvs[kv.Key] = &kv
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
			kv := ev.KV
			v.kvs[kv.Key] = &kv
		}
	}
}

// Direct is a watch of its own, for starts a hub's history does not cover: src's storage
// watch from revision from, decoded, until ctx ends or an error batch.
func Direct(ctx context.Context, src Source, from int64) <-chan Batch {
	out := make(chan Batch, 64)
	go func() {
		defer close(out)
		for wr := range src.Storage.Watch(ctx, src.Prefix, from) {
			b := Batch{Rev: wr.Revision, Err: wr.Err}
			if wr.Err == nil {
				b.Events = src.Decode(wr.Events, nil)
			}
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
			if b.Err != nil {
				return
			}
		}
	}()
	return out
}

// Offer gives the hub, when it runs, the object about to be stored as value at key; the
// hub takes it only if an event's value is byte for byte that value. obj returns the
// object, which nothing may modify afterwards; it is called only when the hub runs.
func (h *Hub) Offer(key string, value []byte, obj func() runtime.Object) {
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
	list := h.offers[key]
	if n := len(list); n > 0 && bytes.Equal(list[n-1].value, value) {
		// The same write offered again (evaluated again after a conflict): once.
		list = list[:n-1]
		h.offerCount, h.offerBytes = h.offerCount-1, h.offerBytes-len(value)
	}
	if len(list) >= maxOffersPerKey {
		h.offerCount, h.offerBytes = h.offerCount-1, h.offerBytes-len(list[0].value)
		list = list[1:]
	}
	if h.offers == nil || h.offerCount >= maxOffers || h.offerBytes+len(value) > maxOfferBytes {
		h.offers, h.offerCount, h.offerBytes, list = map[string][]offer{}, 0, 0, nil
	}
	h.offers[key] = append(list, o)
	h.offerCount, h.offerBytes = h.offerCount+1, h.offerBytes+len(value)
}

// takeOffers removes the offers matching puts of evs and returns, for each event, the
// object (with its resourceVersion set) that stands for its decoded value, or nil.
func (h *Hub) takeOffers(evs []storage.Event) []runtime.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.offers) == 0 {
		return nil
	}
	var out []runtime.Object
	for i, ev := range evs {
		if ev.Type != storage.EventPut {
			continue
		}
		list := h.offers[ev.KV.Key]
		at := slices.IndexFunc(list, func(o offer) bool { return bytes.Equal(o.value, ev.KV.Value) })
		if at < 0 {
			continue
		}
		o := list[at]
		// Offers before it were of writes the key's later ones replaced (or that failed):
		// they are forgotten with it.
		for _, old := range list[:at+1] {
			h.offerCount, h.offerBytes = h.offerCount-1, h.offerBytes-len(old.value)
		}
		if rest := list[at+1:]; len(rest) > 0 {
			h.offers[ev.KV.Key] = rest
		} else {
			delete(h.offers, ev.KV.Key)
		}
		m, err := meta.Accessor(o.obj)
		if err != nil {
			continue // decoded instead
		}
		m.SetResourceVersion(strconv.FormatInt(ev.KV.ModRevision, 10))
		if out == nil {
			out = make([]runtime.Object, len(evs))
		}
		out[i] = o.obj
	}
	return out
}

// Decoder decodes a stored value.
type Decoder interface {
	DecodeKV(kv *storage.KV) (runtime.Object, error)
}

// Lazy is a stored value decoded at most once, when first needed.
type Lazy struct {
	dec  Decoder
	kv   *storage.KV
	once sync.Once
	obj  runtime.Object
}

// NewLazy returns kv, to be decoded by dec when first needed.
func NewLazy(dec Decoder, kv *storage.KV) *Lazy { return &Lazy{dec: dec, kv: kv} }

// Get returns the decoded object, or nil when the value cannot be decoded.
func (l *Lazy) Get() runtime.Object {
	l.once.Do(func() {
		if obj, err := l.dec.DecodeKV(l.kv); err == nil {
			l.obj = obj
		}
	})
	return l.obj
}
