package apiserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/registry"
)

// A watch is served by two goroutines: the encoder takes the registry's events as they
// come and queues them encoded; the handler's goroutine writes the queue to the client.
// The events of one revision are queued and written together (registry.Event.MidRevision).
// The queue is bounded (WatchBacklogBytes): a watcher whose client falls that far behind
// the changes is closed, and its client re-lists, as upstream's watch cache closes
// unresponsive watchers. Initial events (the objects at the start) are read from storage
// as the client takes them, so they wait for room instead: while more than
// initialWatchBytes are queued or being written, so a watcher that never reads holds
// about one storage page of them, however many objects there are. The watch's deadline
// (timeoutSeconds, or between MinRequestTimeout and twice it), plus WatchWriteGrace, is
// also the connection's write deadline: a client that stops reading cannot hold a watch
// past it.

// WatchWriteGrace is how long after a watch's deadline a batch of events being written
// may take to finish.
const WatchWriteGrace = 5 * time.Second

func (s *Server) watch(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	acc, sel, ok := s.readQuery(w, r, res, info)
	if !ok {
		return
	}
	q := query(r)
	deadline := time.Now().Add(s.watchTimeout(q.Get("timeoutSeconds")))
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	rc := http.NewResponseController(w)
	// The stream ends at the deadline between the batches it writes; the connection's
	// write deadline comes WatchWriteGrace later, so that a batch being written then (a
	// revision's events, which a client must get whole) is finished, while a client that
	// reads nothing is still cut off.
	_ = rc.SetWriteDeadline(deadline.Add(WatchWriteGrace))
	// Initial events beyond a page are a long read (see pager).
	var pace func(context.Context) (func(), error)
	if pacedLongReads(r.Context()) {
		ticket := s.requestTicket(r.Context())
		pace = func(ctx context.Context) (func(), error) {
			seat, err := s.pager.take(ctx, ticket)
			if err != nil {
				return nil, err
			}
			return seat.done, nil
		}
	}
	events, err := s.cfg.Store.Watch(ctx, res, info.Namespace, registry.WatchOptions{
		Selector: sel, ResourceVersion: q.Get("resourceVersion"),
		Bookmarks: queryTrue(q, "allowWatchBookmarks"), SendInitialEvents: queryTrue(q, "sendInitialEvents"),
		// A JSON watch writes its initial objects from their stored bytes.
		StoredInitial: !acc.table && !acc.partial,
		Pace:          pace,
	})
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()

	queue := newWatchQueue(s.cfg.WatchBacklogBytes)
	queue.waiting = s.cfg.ObserveWatchWaiting
	var encoder sync.WaitGroup
	encoder.Add(1)
	go func() {
		defer encoder.Done()
		defer queue.close()
		defer func() {
			if p := recover(); p != nil {
				s.notePanic(r, p, debug.Stack())
				cancel()
				_ = rc.SetWriteDeadline(time.Now())
			}
		}()
		enc := &watchEncoder{s: s, res: res, acc: acc, policy: includePolicy(r)}
		// A revision's events are queued as one chunk, written with one Write: the watch
		// ends (its deadline, a backlog, shutdown) between revisions, never inside one
		// whose rest a client resuming from the last resourceVersion would then miss.
		var revision []byte
		for ev := range events {
			b, err := enc.encode(ev)
			if err != nil {
				cancel()
				return
			}
			if ev.MidRevision {
				revision = append(revision, b...)
				continue
			}
			if revision != nil {
				b, revision = append(revision, b...), nil
			}
			if !queue.push(ctx, b, ev.Initial) {
				if ctx.Err() == nil {
					// Fell behind: end the watch, even while a write to the client hangs.
					s.logLimited(r.Context(), "watch-behind:"+res.GVR.String(), slog.LevelWarn, "closing a watch that fell behind",
						"path", r.URL.Path, "resource", res.GVR.String(), "backlogBytes", s.cfg.WatchBacklogBytes)
					cancel()
					_ = rc.SetWriteDeadline(time.Now())
				}
				return
			}
		}
	}()
	defer func() {
		cancel()
		encoder.Wait()
	}()
	for {
		chunks, ok := queue.take(ctx)
		if !ok {
			return
		}
		n := 0
		for _, c := range chunks {
			if _, err := w.Write(c); err != nil {
				cancel()
				return
			}
			n += len(c)
		}
		if err := rc.Flush(); err != nil {
			cancel()
			return
		}
		queue.written(n)
	}
}

// watchTimeout is a watch's duration: timeoutSeconds when positive, else a random time
// between MinRequestTimeout and twice it, as upstream spreads watch ends.
func (s *Server) watchTimeout(timeoutSeconds string) time.Duration {
	if n, err := strconv.ParseInt(timeoutSeconds, 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	min := s.cfg.MinRequestTimeout
	return min + time.Duration(rand.Int64N(int64(min)+1))
}

// watchEncoder encodes a watch's events, one JSON line each.
type watchEncoder struct {
	s      *Server
	res    *registry.Resource
	acc    accept
	policy metav1.IncludeObjectPolicy
	// tabled: a Table was sent, so later ones leave out their column definitions.
	tabled bool
}

// encode returns the event's line; events a Table cannot show are skipped (nil).
func (e *watchEncoder) encode(ev registry.Event) ([]byte, error) {
	if ev.Raw != nil {
		// What encoding the event below gives for the object Raw encodes.
		b := make([]byte, 0, len(`{"type":"","object":}`)+len(ev.Type)+len(ev.Raw)+1)
		b = append(append(append(b, `{"type":"`...), ev.Type...), `","object":`...)
		return append(append(b, ev.Raw...), "}\n"...), nil
	}
	obj := ev.Object
	if ev.Type != watch.Error && ev.Type != watch.Bookmark {
		switch {
		case e.acc.table && e.s.cfg.Table != nil:
			t, err := e.s.cfg.Table(e.res, []runtime.Object{obj}, e.s.cfg.Clock.Now(), e.policy)
			if err != nil {
				return nil, nil
			}
			t.APIVersion, t.Kind = "meta.k8s.io/"+e.acc.tableVer, "Table"
			if e.tabled {
				t.ColumnDefinitions = nil
			}
			e.tabled = true
			obj = t
		case e.acc.partial:
			obj = partialOf(obj, e.acc.tableVer)
		default:
			obj.GetObjectKind().SetGroupVersionKind(e.res.GVK())
		}
	} else if ev.Type == watch.Bookmark && (e.acc.table || e.acc.partial) {
		obj = partialOf(obj, e.acc.tableVer)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// initialWatchBytes is how many encoded bytes of initial events a watch queues or writes
// at once: about a storage page of small objects.
const initialWatchBytes = 256 << 10

// watchQueue is the encoded events waiting to be written, bounded in bytes.
type watchQueue struct {
	max    int
	mu     sync.Mutex
	chunks [][]byte
	bytes  int
	// pending is bytes plus those taken and not yet written: what initial events wait on.
	pending int
	closed  bool
	// waiting, when set, is told when an initial event starts (+1) and stops (-1) waiting
	// for the client to take the previous ones.
	waiting func(delta int)
	// ready is signalled when chunks are added or the queue closes; room when the writer
	// takes chunks.
	ready, room chan struct{}
}

func newWatchQueue(max int) *watchQueue {
	return &watchQueue{max: max, ready: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push queues an encoded event (nil: nothing). A change (initial false) past the bound
// makes it report false at once. An initial event waits, until ctx ends, while more than
// initialWatchBytes are queued or being written. An event is always taken into an empty
// queue, whatever its size.
func (q *watchQueue) push(ctx context.Context, b []byte, initial bool) bool {
	if b == nil {
		return true
	}
	waited := false
	defer func() {
		if waited && q.waiting != nil {
			q.waiting(-1)
		}
	}()
	for {
		q.mu.Lock()
		fits := q.bytes == 0 || q.bytes+len(b) <= q.max
		if initial {
			fits = q.pending == 0 || q.pending+len(b) <= initialWatchBytes
		}
		if fits {
			q.chunks = append(q.chunks, b)
			q.bytes += len(b)
			q.pending += len(b)
			q.mu.Unlock()
			signal(q.ready)
			return true
		}
		q.mu.Unlock()
		if !initial {
			return false
		}
		if !waited && q.waiting != nil {
			waited = true
			q.waiting(1)
		}
		select {
		case <-q.room:
		case <-ctx.Done():
			return false
		}
	}
}

// take returns every queued event, waiting for some; ok is false once the queue is
// closed and empty, or ctx ended.
func (q *watchQueue) take(ctx context.Context) (chunks [][]byte, ok bool) {
	for {
		q.mu.Lock()
		if len(q.chunks) > 0 {
			chunks, q.chunks, q.bytes = q.chunks, nil, 0
			q.mu.Unlock()
			signal(q.room)
			return chunks, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// written records that n bytes taken were written to the client.
func (q *watchQueue) written(n int) {
	q.mu.Lock()
	q.pending -= n
	q.mu.Unlock()
	signal(q.room)
}

// close ends the queue once what it holds is taken.
func (q *watchQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	signal(q.ready)
}
