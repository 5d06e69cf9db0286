package controller

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"

	"github.com/quotad/quotad/internal/registry"
)

// Handler receives every object seen by a watch, with deleted true for deletions. The
// object is shared with every other in-process watcher: a handler must not modify it
// (deep-copy first).
type Handler func(obj runtime.Object, deleted bool)

// Watch delivers the current objects of res and then every change to h until ctx ends,
// re-listing after any watch error (such as compaction).
func Watch(ctx context.Context, store *registry.Store, res *registry.Resource, log *slog.Logger, h Handler) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		events, err := store.Watch(ctx, res, "", registry.WatchOptions{Shared: true})
		if err != nil {
			log.Warn("watch failed, retrying", "resource", res.GVR.String(), "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			if backoff < 5*time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 100 * time.Millisecond
		for ev := range events {
			switch ev.Type {
			case watch.Added, watch.Modified:
				h(ev.Object, false)
			case watch.Deleted:
				h(ev.Object, true)
			}
		}
	}
}

// NewQueue returns a rate-limited work queue of string keys.
func NewQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name},
	)
}

// Process runs sync for each key of q with workers goroutines until ctx ends; failed keys
// are retried with backoff, requeue > 0 asks for a later retry.
func Process(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], workers int, log *slog.Logger, sync func(ctx context.Context, key string) (requeue time.Duration, err error)) {
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
				requeue, err := sync(ctx, key)
				switch {
				case err != nil:
					if ctx.Err() == nil {
						log.Warn("sync failed, retrying", "queue", key, "err", err)
					}
					q.AddRateLimited(key)
				case requeue > 0:
					q.Forget(key)
					q.AddAfter(key, requeue)
				default:
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
