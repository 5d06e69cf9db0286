package registry

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/registry/selector"
	"github.com/quotad/quotad/internal/registry/watchhub"
	"github.com/quotad/quotad/internal/storage"
)

// WatchOptions are the watch parameters of kube-apiserver.
type WatchOptions struct {
	Selector        selector.Selector
	ResourceVersion string
	// Bookmarks asks for BOOKMARK events carrying the current revision.
	Bookmarks bool
	// SendInitialEvents asks for the current objects as ADDED events first (also implied by an
	// empty or "0" resourceVersion).
	SendInitialEvents bool
	// Shared hands out the watch hub's objects themselves instead of copies: the receiver
	// must treat them as read-only (in-process controllers).
	Shared bool
	// Pace, when set, is called before initial objects after the first initialPaceChunk
	// are decoded (initialPaceChunk at a time); done is called once they are, before they
	// are sent. Its error ends the watch (the HTTP edge queues long reads there).
	Pace func(ctx context.Context) (done func(), err error)
	// StoredInitial asks for the initial events of a kind StoredListable allows as their
	// objects' JSON (Event.Raw) instead of decoded objects: for a receiver that writes them
	// as JSON, they are then copied, not encoded again (and decoded only to evaluate a
	// selector).
	StoredInitial bool
}

// initialPaceChunk is how many initial objects are decoded at a time (per call of
// WatchOptions.Pace after the first chunk).
const initialPaceChunk = 64

// bookmarkEvery is the least time between two BOOKMARK events of a watch (kube-apiserver
// sends one about every minute; etcd's progress notifications to an idle watch come every
// few seconds, and the index's progress requests more often).
const bookmarkEvery = time.Second

// initialPage is how many objects a watch's initial events read at a time.
const initialPage = 500

// eachPage reads every key under prefix at revision rev (0: the latest) initialPage keys
// at a time, handing each page to f until f returns false. It returns the revision read at.
func (s *Store) eachPage(ctx context.Context, prefix string, rev int64, f func([]storage.KV) bool) (int64, error) {
	start := ""
	for {
		lr, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{Revision: rev, Limit: initialPage, StartKey: start, NoCount: true})
		if err != nil {
			return 0, err
		}
		rev = lr.Revision
		if !f(lr.KVs) || !lr.More || len(lr.KVs) == 0 {
			return rev, nil
		}
		start = lr.KVs[len(lr.KVs)-1].Key + "\x00"
	}
}

// Event is one watch event; Object is an *metav1.Status for ERROR events.
type Event struct {
	Type   watch.EventType
	Object runtime.Object
	// Raw, instead of Object, is the JSON encoding of an initial event's object when the
	// watch asked for stored initial events (WatchOptions.StoredInitial).
	Raw []byte
	// Initial marks the initial events (the objects at the watch's start and the bookmark
	// ending them): they are read from storage as the receiver takes them, so a receiver
	// may make them wait, where changes after the start must be taken as they come.
	Initial bool
	// MidRevision tells that more events of this event's revision follow: one transaction
	// commits several objects at one revision (a group commit's objects, a write and the
	// quotas it charges), so their events share a resourceVersion. A client resumes a
	// watch from the last resourceVersion it saw, which would skip the rest of a revision
	// whose events a watch ended between: a receiver that may end the stream sends a
	// revision's events together, and ends only between revisions.
	MidRevision bool
}

// Watch streams changes of the resource in ns. The channel closes when ctx ends or after an
// ERROR event.
func (s *Store) Watch(ctx context.Context, res *Resource, ns string, opts WatchOptions) (<-chan Event, error) {
	if res.AppliedView {
		return s.watchApplied(ctx, res, ns, opts)
	}
	run, err := s.startWatch(ctx, res, ns, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan Event, 64)
	go func() {
		defer close(out)
		run(func(e Event) bool {
			select {
			case out <- e:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return out, nil
}

// WatchEach is Watch with each event handed to fn in the caller's goroutine, until fn returns
// false, ctx ends or the watch ends (after an ERROR event); it returns what Watch would
// return as its error. An in-process watcher (a controller, a cache) saves the goroutine and
// the channel between the watch and itself: one wake-up less per watcher and batch.
func (s *Store) WatchEach(ctx context.Context, res *Resource, ns string, opts WatchOptions, fn func(Event) bool) error {
	run, err := s.StartWatch(ctx, res, ns, opts)
	if err != nil {
		return err
	}
	run(fn)
	return nil
}

// StartWatch is WatchEach in two steps: it starts the watch (its error is Watch's) and
// returns the function that hands the events to fn, which the caller must call (it ends the
// watch when it returns).
func (s *Store) StartWatch(ctx context.Context, res *Resource, ns string, opts WatchOptions) (func(fn func(Event) bool), error) {
	if res.AppliedView {
		ctx, cancel := context.WithCancel(ctx)
		events, err := s.watchApplied(ctx, res, ns, opts)
		if err != nil {
			cancel()
			return nil, err
		}
		return func(fn func(Event) bool) {
			defer cancel()
			for e := range events {
				if !fn(e) {
					return
				}
			}
		}, nil
	}
	run, err := s.startWatch(ctx, res, ns, opts)
	if err != nil {
		return nil, err
	}
	return func(fn func(Event) bool) { run(func(e Event) bool { return ctx.Err() == nil && fn(e) }) }, nil
}

// startWatch does what Watch does before its first event (the start revision, a wait for it,
// the storage watch from it) and returns the rest, which sends each event through send until
// send returns false, the watch's context ends or the watch ends.
func (s *Store) startWatch(ctx context.Context, res *Resource, ns string, opts WatchOptions) (func(send func(Event) bool), error) {
	from, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	prefix := res.KeyPrefix(ns)
	// 0. Initial events asked for from a resourceVersion must come from a revision at
	// least as new: one the store has not reached is waited for (see rvwait.go); if it is
	// not reached, the watch's one event is upstream's ERROR with the 504 Status.
	if opts.SendInitialEvents && from > 0 {
		if err := s.awaitRevision(ctx, from, opts.ResourceVersion); err != nil {
			var se *apierrors.StatusError
			if !errors.As(err, &se) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
				return nil, err
			}
			st := se.Status()
			st.Kind, st.APIVersion = "Status", "v1"
			return func(send func(Event) bool) { send(Event{Type: watch.Error, Object: &st}) }, nil
		}
	}
	// 1. Initial events: the objects at one revision, read page by page while sending, so
	// a watch of 100,000 pods never holds them all.
	initial := from == 0 || opts.SendInitialEvents
	if initial {
		lr, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{Limit: 1, KeysOnly: true})
		if err != nil {
			return nil, internalError(err)
		}
		from = lr.Revision
	}
	wctx, cancel := context.WithCancel(ctx)
	src := s.watchDecoded(wctx, res, from, prefix)
	return func(send func(Event) bool) {
		defer cancel()
		if ctx.Err() != nil {
			return
		}
		if initial {
			sent, first := true, true
			var objs []runtime.Object
			var raws [][]byte
			var head []byte
			stored := opts.StoredInitial && StoredListable(res)
			sel := newSelection(res, opts.Selector)
			if stored {
				head = storedHead(res)
			}
			_, err := s.eachPage(wctx, prefix, from, func(kvs []storage.KV) bool {
				// Objects are decoded initialPaceChunk at a time, then sent; after the first
				// chunk, under opts.Pace (a watch of a few objects never waits; many watches
				// of many objects opened at once decode them in turns).
				for len(kvs) > 0 {
					n := min(len(kvs), initialPaceChunk)
					done := func() {}
					if !first && opts.Pace != nil {
						var err error
						if done, err = opts.Pace(wctx); err != nil {
							sent = false
							return false
						}
					}
					objs, raws = objs[:0], raws[:0]
					for i, kv := range kvs[:n] {
						if !first && opts.Pace != nil && i%PacedYieldEvery == PacedYieldEvery-1 {
							goruntime.Gosched() // background work: let waiting requests run
						}
						if stored {
							if ok, err := sel.matches(kv); err != nil || !ok {
								continue
							}
							if b, err := appendStoredJSON(nil, res, head, kv); err == nil {
								raws = append(raws, b)
							}
						} else if ok, _ := sel.matches(kv); ok {
							if obj, err := decodeKV(res, kv); err == nil {
								objs = append(objs, obj)
							}
						}
					}
					done()
					first = false
					kvs = kvs[n:]
					for i, b := range raws {
						raws[i] = nil
						if !send(Event{Type: watch.Added, Raw: b, Initial: true}) {
							sent = false
							return false
						}
					}
					for i, obj := range objs {
						objs[i] = nil
						if !send(Event{Type: watch.Added, Object: obj, Initial: true}) {
							sent = false
							return false
						}
					}
				}
				return true
			})
			if err != nil {
				send(Event{Type: watch.Error, Object: s.errorStatus(ctx, res, err, from)})
				return
			}
			if !sent {
				return
			}
		}
		if opts.SendInitialEvents && opts.Bookmarks {
			b := s.bookmark(res, from)
			objectMeta(b).SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			if !send(Event{Type: watch.Bookmark, Object: b, Initial: true}) {
				return
			}
		}
		var evs []Event
		var bookmarked time.Time
		src(func(wr watchhub.Batch) bool {
			if wr.Err != nil {
				st := s.errorStatus(ctx, res, wr.Err, from)
				send(Event{Type: watch.Error, Object: st})
				return false
			}
			if len(wr.Events) == 0 {
				// A progress notification: a BOOKMARK, at most one per bookmarkEvery (the
				// hub's progress requests for an index reach every watcher), but every one
				// to an in-process watcher, which may be waiting for the revision (the
				// garbage collector before it orphans an owner's dependents) and for which
				// a bookmark is a call, not a message.
				if now := s.cfg.Clock.Now(); opts.Bookmarks && wr.Rev > 0 && (opts.Shared || bookmarked.IsZero() || now.Sub(bookmarked) >= bookmarkEvery) {
					bookmarked = now
					return send(Event{Type: watch.Bookmark, Object: s.bookmark(res, wr.Rev)})
				}
				return true
			}
			// The revision's events are translated first, so that all but the last one sent
			// are marked MidRevision.
			evs = evs[:0]
			for _, ev := range wr.Events {
				if !inNamespace(ev.Key, prefix) {
					continue
				}
				if e, ok := translate(res, ev, opts.Selector, opts.Shared); ok {
					evs = append(evs, e)
				}
			}
			for i, e := range evs {
				e.MidRevision = i < len(evs)-1
				evs[i] = Event{}
				if !send(e) {
					return false
				}
			}
			return true
		})
	}, nil
}

func (s *Store) bookmark(res *Resource, rev int64) runtime.Object {
	obj := res.New()
	objectMeta(obj).SetResourceVersion(strconv.FormatInt(rev, 10))
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	return obj
}

// errorStatus is the Status of a watch's ERROR event. A compacted start is upstream's 410
// "too old resource version: <from> (<oldest>)", oldest being the first revision a watch may
// start from.
func (s *Store) errorStatus(ctx context.Context, res *Resource, err error, from int64) *metav1.Status {
	var se *apierrors.StatusError
	if errors.Is(err, storage.ErrCompacted) {
		se = apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.compactedRevision(ctx, res, from)))
	} else {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}

// compactedRevision finds the store's compaction revision, above from (compacted), by
// bisecting on reads at a revision: the oldest revision that can still be read.
func (s *Store) compactedRevision(ctx context.Context, res *Resource, from int64) int64 {
	hi, err := s.cfg.Storage.Revision(ctx)
	if err != nil {
		return from
	}
	lo := from // compacted
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		_, err := s.cfg.Storage.List(ctx, res.KeyPrefix(""), storage.ListOptions{Revision: mid, Limit: 1, KeysOnly: true, NoCount: true})
		switch {
		case errors.Is(err, storage.ErrCompacted):
			lo = mid
		case err != nil:
			return hi
		default:
			hi = mid
		}
	}
	return hi
}

// translate turns a decoded storage event into a watch event, applying selector
// transitions. The event's objects are shared: it returns deep copies unless shared.
func translate(res *Resource, ev watchhub.Event, sel selector.Selector, shared bool) (Event, bool) {
	cp := func(o runtime.Object) runtime.Object {
		if shared {
			return o
		}
		return o.DeepCopyObject()
	}
	cur := ev.Cur
	hadPrev := ev.Prev != nil
	var prev runtime.Object
	// The previous state is decoded only when needed: deletions, and selector transitions.
	if hadPrev && (ev.Type == storage.EventDelete || !sel.Empty()) {
		if prev = ev.Prev.Get(); prev == nil {
			hadPrev = false
		}
	}
	curOK := cur != nil && sel.Matches(res, cur)
	prevOK := hadPrev && (prev == nil || sel.Matches(res, prev))
	switch {
	case ev.Type == storage.EventDelete:
		if prev == nil || !prevOK {
			return Event{}, false
		}
		obj := prev.DeepCopyObject()
		objectMeta(obj).SetResourceVersion(strconv.FormatInt(ev.Rev, 10))
		return Event{Type: watch.Deleted, Object: obj}, true
	case curOK && !hadPrev:
		return Event{Type: watch.Added, Object: cp(cur)}, true
	case curOK && prevOK:
		return Event{Type: watch.Modified, Object: cp(cur)}, true
	case curOK:
		return Event{Type: watch.Added, Object: cp(cur)}, true
	case prevOK:
		// Left the selection: upstream reports the new state as DELETED.
		return Event{Type: watch.Deleted, Object: cp(cur)}, true
	}
	return Event{}, false
}
