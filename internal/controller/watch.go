package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/registry"
)

// Handler receives every object seen by a watch, with deleted true for deletions. The
// object is shared with every other in-process watcher: a handler must not modify it
// (deep-copy first).
type Handler func(obj runtime.Object, deleted bool)

// PanicObserver is told about every panic a controller recovered from (a metric).
type PanicObserver interface {
	ControllerPanicked(controller string)
}

// PanicCounterInitializer is a PanicObserver that sets the panic count of each controller
// to zero when its loop is made, so that the count is exported before any panic (a
// counter first seen at 1 hides the first panic from rate() and increase()).
type PanicCounterInitializer interface {
	InitControllerPanics(controller string)
}

// Loop is the plumbing one controller runs on: its watches and its workers. Every watch
// handler call and every sync is guarded: a panic is recovered, logged once at Error with
// its stack, reported to the PanicObserver, and (for a sync) its key retried with backoff,
// so no object can take the server down. Failures are logged through a Throttle, so a key
// failing the same way for hours logs a line now and then, not every retry.
type Loop struct {
	name     string
	store    Client
	log      *slog.Logger
	panics   PanicObserver
	throttle *Throttle
	clock    clock.PassiveClock
}

// NewLoop returns the loop of the controller called name. panics may be nil (not
// counted); clk drives the log throttle and, when it is a clock.Clock, the waits before
// a failed watch is retried (nil: the real clock).
func NewLoop(name string, store Client, log *slog.Logger, panics PanicObserver, clk clock.PassiveClock) *Loop {
	if log == nil {
		log = slog.Default()
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if i, ok := panics.(PanicCounterInitializer); ok {
		i.InitControllerPanics(name)
	}
	return &Loop{name: name, store: store, log: log, panics: panics, throttle: NewThrottle(clk, DefaultThrottleInterval), clock: clk}
}

// Watch delivers the current objects of res and then every change to h until ctx ends.
// After a watch ends (this watcher fell behind the hub, a storage error) it watches again
// from the last revision it saw, so the changes it missed, deletions included, are
// delivered as they happened; only when that revision is compacted away does it start
// over from the current objects (a deletion missed then is not delivered to h; an Index
// fed by WatchIndex delivers it). A handler that panics loses that one event (the panic
// is logged and counted); the next events are delivered.
func (l *Loop) Watch(ctx context.Context, res *registry.Resource, h Handler) {
	l.watch(ctx, res, h, nil)
}

// WatchIndex feeds x from a watch of res as Watch does, telling x when the current
// objects have all been delivered and which revision it has reached; next (may be nil)
// is called after x has recorded each event.
func (l *Loop) WatchIndex(ctx context.Context, res *registry.Resource, x *Index, next Handler) {
	l.watch(ctx, res, x.Feed(next), x)
}

// WatchReached is Watch that also tells reached each revision up to which h has been
// handed every change: the revision the current objects were read at once they have all
// been delivered, then each revision's last event and each bookmark (a resource nobody
// writes reaches a revision through the hub's progress notifications:
// registry.Store.RequestProgress).
func (l *Loop) WatchReached(ctx context.Context, res *registry.Resource, h Handler, reached func(rev int64)) {
	l.watch(ctx, res, h, reachedFunc(reached))
}

// progress is told how far a watch has gone: listing when it starts over from the current
// objects, listed when they have all been delivered (with the revision they were read at),
// reached once every change up to a revision has been. An Index is one.
type progress interface {
	listing()
	listed(rev int64)
	reached(rev int64)
}

// reachedFunc is a progress that only counts revisions.
type reachedFunc func(rev int64)

func (f reachedFunc) listing()          {}
func (f reachedFunc) listed(rev int64)  { f(rev) }
func (f reachedFunc) reached(rev int64) { f(rev) }

func (l *Loop) watch(ctx context.Context, res *registry.Resource, h Handler, x progress) {
	if res == nil {
		l.log.Error("watch of a resource that is not served", "controller", l.name)
		return
	}
	key := "watch " + res.GVR.String()
	backoff := 100 * time.Millisecond
	var last int64 // the last revision seen (0: none yet)
	for ctx.Err() == nil {
		opts := registry.WatchOptions{Shared: true, Bookmarks: true}
		if last > 0 {
			opts.ResourceVersion = strconv.FormatInt(last, 10)
		} else {
			// The current objects first, then a bookmark at the revision they were read at.
			opts.SendInitialEvents = true
			if x != nil {
				x.listing()
			}
		}
		// Each event is handled as it comes; with the registry's store, in this goroutine.
		started := false
		each := func(ev registry.Event) bool {
			if !started {
				started = true
				l.throttle.Succeeded(key)
				backoff = 100 * time.Millisecond
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				l.handle(h, res, ev.Object, false)
			case watch.Deleted:
				l.handle(h, res, ev.Object, true)
			case watch.Error:
				if expired(apierrors.FromObject(ev.Object)) {
					last = 0
				}
				return true
			}
			// The current objects carry the revisions they were written at, not the one
			// they were read at: the watch resumes from the list's revision, given by the
			// bookmark that ends them (a watch ended before it starts over).
			if ev.Initial && ev.Type != watch.Bookmark {
				return true
			}
			// One transaction's objects share a revision (a group commit's pods): the
			// revision is reached with its last event (a watch that ends between them
			// resumes before it, delivering its first events again).
			if ev.MidRevision {
				return true
			}
			rv := revisionOf(ev.Object)
			if rv > last {
				last = rv
			}
			if x != nil {
				if ev.Type == watch.Bookmark && ev.Initial {
					x.listed(rv)
				} else {
					x.reached(rv)
				}
			}
			return true
		}
		if err := watchEach(ctx, l.store, res, opts, each); err != nil {
			if expired(err) {
				last = 0
			}
			l.failed(ctx, key, "watch failed, retrying", err, "resource", res.GVR.String())
			select {
			case <-ctx.Done():
				return
			case <-l.after(backoff):
			}
			if backoff < 5*time.Second {
				backoff *= 2
			}
			continue
		}
	}
}

// eachWatcher is a client that hands a watch's events to a function in the caller's
// goroutine (registry.Store.WatchEach).
type eachWatcher interface {
	WatchEach(ctx context.Context, res *registry.Resource, ns string, opts registry.WatchOptions, fn func(registry.Event) bool) error
}

// watchEach runs a watch of res (all namespaces) to its end, handing each event to fn:
// through the client's WatchEach when it has one, else from its Watch channel.
func watchEach(ctx context.Context, c Client, res *registry.Resource, opts registry.WatchOptions, fn func(registry.Event) bool) error {
	if w, ok := c.(eachWatcher); ok {
		return w.WatchEach(ctx, res, "", opts, fn)
	}
	events, err := c.Watch(ctx, res, "", opts)
	if err != nil {
		return err
	}
	for ev := range events {
		fn(ev)
	}
	return nil
}

// expired reports a watch refused because its revision is compacted away (410).
func expired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// revisionOf is obj's resourceVersion as a revision (0 when it has none).
func revisionOf(obj runtime.Object) int64 {
	m, err := Meta(obj)
	if err != nil {
		return 0
	}
	rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	return rv
}

// handle runs one handler call, recovering a panic.
func (l *Loop) handle(h Handler, res *registry.Resource, obj runtime.Object, deleted bool) {
	defer func() {
		if r := recover(); r != nil {
			l.recovered(r, "resource", res.GVR.String(), "object", objectName(obj))
		}
	}()
	h(obj, deleted)
}

// SyncFunc handles one key; requeue > 0 asks for a later retry, an error for a retry
// with backoff.
type SyncFunc func(ctx context.Context, key string) (requeue time.Duration, err error)

// Process runs sync for each key of q with workers goroutines until ctx ends; failed
// (or panicking) keys are retried with backoff, requeue > 0 asks for a later retry.
func (l *Loop) Process(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], workers int, sync SyncFunc) {
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	done := make(chan struct{})
	for i := 0; i < workers; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				key, quit := q.Get()
				if quit {
					return
				}
				requeue, err := l.sync(ctx, sync, key)
				switch {
				case err != nil:
					if ctx.Err() == nil && !errors.Is(err, errPanicked) {
						l.failed(ctx, key, "sync failed, retrying", err)
					}
					q.AddRateLimited(key)
				case requeue > 0:
					l.throttle.Succeeded(key)
					q.Forget(key)
					q.AddAfter(key, requeue)
				default:
					l.throttle.Succeeded(key)
					q.Forget(key)
				}
				q.Done(key)
			}
		}()
	}
	for i := 0; i < workers; i++ {
		<-done
	}
}

// errPanicked is the error of a sync that panicked (already logged).
var errPanicked = errors.New("controller panicked")

// sync runs one sync, turning a panic into errPanicked.
func (l *Loop) sync(ctx context.Context, sync SyncFunc, key string) (requeue time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			l.recovered(r, "key", key)
			requeue, err = 0, fmt.Errorf("%w: %v", errPanicked, r)
		}
	}()
	return sync(ctx, key)
}

// Guard runs f, recovering a panic as the loop's handlers do; it reports whether f
// returned normally. For periodic work outside Watch and Process.
func (l *Loop) Guard(what string, f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			l.recovered(r, "work", what)
			ok = false
		}
	}()
	f()
	return true
}

// recovered logs a recovered panic with its stack and counts it.
func (l *Loop) recovered(r any, attrs ...any) {
	args := append([]any{"controller", l.name, "panic", fmt.Sprint(r)}, attrs...)
	args = append(args, "stack", string(debug.Stack()))
	l.log.Error("controller panic recovered", args...)
	if l.panics != nil {
		l.panics.ControllerPanicked(l.name)
	}
}

// failed logs a failure of key through the throttle: Debug for expected failures
// (already reported elsewhere, such as a quota refusal recorded as an Event), else Warn.
func (l *Loop) failed(ctx context.Context, key, msg string, err error, attrs ...any) {
	emit, repeats := l.throttle.Failed(key, failureShape(err))
	if !emit {
		return
	}
	level := slog.LevelWarn
	if IsExpected(err) {
		level = slog.LevelDebug
	}
	args := append([]any{"controller", l.name, "key", key, "err", err}, attrs...)
	if repeats > 0 {
		args = append(args, "repeats", repeats)
	}
	l.log.Log(ctx, level, msg, args...)
}

// failureShape is what makes two failures the same for the throttle: the error's text,
// without the name of the object an API error is about (a controller's attempts create
// objects named afresh from generateName, refused for the same reason each time).
func failureShape(err error) string {
	msg := err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if d := st.Status().Details; d != nil && d.Name != "" {
			return strings.Replace(msg, strconv.Quote(d.Name), `""`, 1)
		}
	}
	return msg
}

// NewQueue returns a rate-limited work queue of string keys.
func NewQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name},
	)
}

// after is the loop clock's After, or the real clock's when the loop's clock only tells
// the time.
func (l *Loop) after(d time.Duration) <-chan time.Time {
	if c, ok := l.clock.(clock.Clock); ok {
		return c.After(d)
	}
	return clock.RealClock{}.After(d)
}
