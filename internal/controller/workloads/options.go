package workloads

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/record"
)

// Options are the injectable parts of every controller in this package.
type Options struct {
	// Clock drives timestamps, event times, minReadySeconds, progress deadlines, Job
	// deadlines and CronJob schedules (default: the real clock).
	Clock clock.WithTicker
	// Workers is the number of concurrent syncs (default 2).
	Workers int
	// Panics counts recovered panics (may be nil).
	Panics controller.PanicObserver
	// Pods, when set, is the index of pods shared with the other controllers watching
	// every pod (it must then run once the controllers have started: SharedPods.Run); nil:
	// indexes of their own, watched from Start. Its views are shared by the indexes of
	// this package's own.
	Pods *controller.SharedPods
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}

// base is what every controller of this package carries: its store, logger, options,
// loop (watches and workers, guarded against panics), event recorder and the owners
// starved by quota.
type base struct {
	store   controller.Client
	log     *slog.Logger
	opts    Options
	loop    *controller.Loop
	rec     *record.Recorder
	starved *starved
}

// newBase builds a controller's base: name labels its logs, component its events.
func newBase(store controller.Client, log *slog.Logger, opts Options, name, component string) base {
	opts = opts.withDefaults()
	loop := controller.NewLoop(name, store, orDefault(log), opts.Panics, opts.Clock)
	log = orDefault(log).With("controller", name)
	return base{store: store, log: log, opts: opts, loop: loop, rec: record.NewRecorder(store, component, opts.Clock, log), starved: newStarved()}
}

func orDefault(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}

// starved remembers the controllers whose last sync was refused by quota, per namespace,
// so that a change of any quota in that namespace (raised hard, or usage credited by a
// delete elsewhere) retries them at once instead of after their backoff.
type starved struct {
	mu   sync.Mutex
	keys map[string]map[string]bool
}

func newStarved() *starved { return &starved{keys: map[string]map[string]bool{}} }

// retryOnQuotaChange requeues, at once, every owner starved by quota in a namespace whose
// ResourceQuotas change (a raised hard, or usage credited by a delete), until ctx ends.
func (s *starved) retryOnQuotaChange(ctx context.Context, loop *controller.Loop, store controller.Client, q workqueue.TypedRateLimitingInterface[string]) {
	loop.Watch(ctx, store.Catalogue().Get(quotaGVR), controller.On(func(rq *corev1.ResourceQuota, deleted bool) {
		for _, key := range s.in(rq.Namespace) {
			q.Forget(key)
			q.Add(key)
		}
	}))
}

func (s *starved) set(key string, on bool) {
	ns, _, _ := strings.Cut(key, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		if s.keys[ns] == nil {
			s.keys[ns] = map[string]bool{}
		}
		s.keys[ns][key] = true
		return
	}
	delete(s.keys[ns], key)
	if len(s.keys[ns]) == 0 {
		delete(s.keys, ns)
	}
}

func (s *starved) in(ns string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys[ns]))
	for k := range s.keys[ns] {
		out = append(out, k)
	}
	return out
}

// isQuotaRefusal reports a create refused by admission (quota or limit ranges).
func isQuotaRefusal(err error) bool {
	var se apierrors.APIStatus
	return errors.As(err, &se) && apierrors.IsForbidden(err)
}

// retryErr is the error a sync returns for err: a quota refusal, already reported as a
// FailedCreate Event (and a condition), is expected, so it is retried but logged at Debug.
func retryErr(err error) error {
	// A quota refusal, and a write that raced another writer or a delete (retried on the
	// next sync, as upstream's controllers do, logging at -v=2): no warning.
	if isQuotaRefusal(err) || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return controller.Expected(err)
	}
	return err
}

// isNamespaceTerminating reports upstream's NamespaceTerminatingCause.
func isNamespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

func splitKey(key string) (string, string) {
	ns, name, _ := strings.Cut(key, "/")
	return ns, name
}

func keyOf(ns, name string) string { return ns + "/" + name }

// enqueueOwners returns the watch handlers a controller of kind uses: every owner event
// enqueues the owner (forgetting quota starvation on delete), and every dependent event
// enqueues the dependent's controller when it is of kind.
func (s *starved) enqueueOwners(q workqueue.TypedRateLimitingInterface[string], kind schema.GroupVersionKind) (owners, dependents controller.Handler) {
	owners = func(obj runtime.Object, deleted bool) {
		m, err := controller.Meta(obj)
		if err != nil {
			return
		}
		if deleted {
			s.set(keyOf(m.GetNamespace(), m.GetName()), false)
		}
		q.Add(keyOf(m.GetNamespace(), m.GetName()))
	}
	dependents = func(obj runtime.Object, deleted bool) {
		m, err := controller.Meta(obj)
		if err != nil {
			return
		}
		if ref := metav1.GetControllerOf(m); ref != nil && ref.Kind == kind.Kind && ref.APIVersion == kind.GroupVersion().String() {
			q.Add(keyOf(m.GetNamespace(), ref.Name))
		}
	}
	return owners, dependents
}

// owned runs a controller of kind (its objects at gvr) whose objects own children: the
// owners are watched (ownerHook, when set, sees each owner event first) and feed starts
// the children's cache with the handler of their events (indexFeed, subFeed), owners held
// at a quota are retried when quotas change, and q's keys are synced until ctx ends.
func (b *base) owned(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], kind schema.GroupVersionKind, gvr schema.GroupVersionResource, feed func(context.Context, controller.Handler), ownerHook controller.Handler, sync controller.SyncFunc) {
	cat := b.store.Catalogue()
	owners, children := b.starved.enqueueOwners(q, kind)
	if ownerHook != nil {
		enqueue := owners
		owners = func(obj runtime.Object, deleted bool) {
			ownerHook(obj, deleted)
			enqueue(obj, deleted)
		}
	}
	go b.loop.Watch(ctx, cat.Get(gvr), owners)
	feed(ctx, children)
	go b.starved.retryOnQuotaChange(ctx, b.loop, b.store, q)
	b.loop.Process(ctx, q, b.opts.Workers, sync)
}

// indexFeed is the feed of an index of the base's own by a watch of gvr (owned).
func (b *base) indexFeed(gvr schema.GroupVersionResource, x *controller.Index) func(context.Context, controller.Handler) {
	return func(ctx context.Context, next controller.Handler) {
		go b.loop.WatchIndex(ctx, b.store.Catalogue().Get(gvr), x, next)
	}
}

// subFeed is the feed of a subscription to the shared pods (owned).
func (b *base) subFeed(p *controller.PodSub) func(context.Context, controller.Handler) {
	return func(ctx context.Context, next controller.Handler) { p.Start(ctx, b.loop, next) }
}

// ownerOf reads the object a sync's key names, at the latest revision, as T; found is
// false (and the key no longer held at a quota) when it is gone.
func ownerOf[T runtime.Object](ctx context.Context, b *base, gvr schema.GroupVersionResource, key string) (obj T, found bool, err error) {
	ns, name := splitKey(key)
	o, err := b.store.Get(ctx, b.store.Catalogue().Get(gvr), ns, name)
	if apierrors.IsNotFound(err) {
		b.starved.set(key, false)
		return obj, false, nil
	}
	if err != nil {
		return obj, false, err
	}
	obj, err = controller.As[T](o)
	return obj, err == nil, err
}
