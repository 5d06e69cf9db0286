package record

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's event correlator limits (client-go tools/record): a token bucket per source and
// involved object, 25 events of burst refilled at one per five minutes, and a cache of the
// events already written so that repeats bump count instead of creating new events.
const (
	spamBurst    = 25
	spamInterval = 5 * time.Minute
	maxCached    = 4096
	// Upstream's aggregator: once an object has had aggregateMax events of one type and
	// reason with distinct messages within aggregateInterval, further ones are folded into
	// one event whose message is combinedPrefix and the latest message.
	aggregateMax      = 10
	aggregateInterval = 10 * time.Minute
	combinedPrefix    = "(combined from similar events): "
)

// Recorder writes core/v1 Events through the registry store, as upstream's event recorder
// does: one Event per distinct (source, object, type, reason, message), repeats bump count
// and lastTimestamp, and a per-object token bucket drops floods. Writes are synchronous and
// failures (for example a count/events quota) are logged, never returned.
type Recorder struct {
	store     controller.Client
	component string
	clock     clock.PassiveClock
	log       *slog.Logger

	mu        sync.Mutex
	lastNano  int64
	seen      map[string]seenEvent
	order     []string
	bucket    map[string]*tokenBucket
	similar   map[string]*similarEvents
	simiOrder []string
}

// similarEvents are the distinct messages of one object's events of one type and reason.
type similarEvents struct {
	messages []string // oldest first
	last     time.Time
}

type seenEvent struct {
	name  string
	count int32
	first metav1.Time
}

type tokenBucket struct {
	tokens float64
	last   time.Time
}

// NewRecorder returns a recorder whose events carry source.component and
// reportingComponent component.
func NewRecorder(store controller.Client, component string, clk clock.PassiveClock, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.Default()
	}
	return &Recorder{store: store, component: component, clock: clk, log: log, seen: map[string]seenEvent{}, bucket: map[string]*tokenBucket{},
		similar: map[string]*similarEvents{}}
}

// Eventf records an event about obj (which must have kind metadata set or be a known kind).
func (r *Recorder) Eventf(ctx context.Context, obj runtime.Object, eventType, reason, format string, args ...interface{}) {
	r.Event(ctx, obj, eventType, reason, fmt.Sprintf(format, args...))
}

// Event records an event about obj.
func (r *Recorder) Event(ctx context.Context, obj runtime.Object, eventType, reason, message string) {
	ref, err := objectReference(obj)
	if err != nil {
		r.log.Warn("cannot record event", "reason", reason, "err", err)
		return
	}
	r.EventRef(ctx, ref, eventType, reason, message)
}

// EventRef records an event about the object ref names. The event lives in the object's
// namespace, or in "default" for a cluster-scoped object, as upstream's recorder.
func (r *Recorder) EventRef(ctx context.Context, ref corev1.ObjectReference, eventType, reason, message string) {
	evNS := ref.Namespace
	if evNS == "" {
		evNS = metav1.NamespaceDefault
	}
	now := r.clock.Now()
	aggKey := strings.Join([]string{r.component, ref.Kind, ref.Namespace, ref.Name, string(ref.UID), ref.APIVersion, eventType, reason}, "\x00")
	key := aggKey + "\x00" + message
	objKey := strings.Join([]string{r.component, ref.Kind, ref.Namespace, ref.Name, string(ref.UID)}, "\x00")
	r.mu.Lock()
	// As upstream's correlator: aggregated first, then the spam filter.
	if r.aggregate(aggKey, message, now) {
		// Folded into the object's combined event of this type and reason.
		key, message = aggKey, combinedPrefix+message
	}
	if !r.take(objKey, now) {
		r.mu.Unlock()
		return
	}
	prev, repeat := r.seen[key]
	r.mu.Unlock()
	res := r.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("events"))
	ts := metav1.NewTime(now)
	if repeat {
		var count int32
		_, err := r.store.Update(ctx, res, evNS, prev.name, "", func(cur runtime.Object) (runtime.Object, error) {
			ev, err := controller.As[*corev1.Event](cur)
			if err != nil {
				return nil, err
			}
			ev.Count++
			ev.LastTimestamp = ts
			ev.Message = message
			count = ev.Count
			return ev, nil
		}, registry.WriteOptions{})
		if err == nil {
			r.remember(key, seenEvent{name: prev.name, count: count, first: prev.first})
			return
		}
		if !apierrors.IsNotFound(err) {
			r.log.Warn("cannot update event", "event", prev.name, "namespace", evNS, "err", err)
			return
		}
	}
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: evNS},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		Type:                eventType,
		Source:              corev1.EventSource{Component: r.component},
		ReportingController: r.component,
	}
	// Upstream names events <object>.<timestamp in hex nanoseconds>; names stay unique
	// when the clock does not move between two events.
	for attempt := 0; ; attempt++ {
		ev.Name = fmt.Sprintf("%v.%x", ref.Name, r.nextNano(now))
		_, err := r.store.Create(ctx, res, evNS, ev.DeepCopy(), registry.WriteOptions{})
		if err == nil {
			break
		}
		if apierrors.IsAlreadyExists(err) && attempt < 3 {
			continue
		}
		r.log.Warn("cannot create event", "reason", reason, "namespace", evNS, "err", err)
		return
	}
	r.remember(key, seenEvent{name: ev.Name, count: 1, first: ts})
}

func (r *Recorder) nextNano(now time.Time) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := now.UnixNano()
	if n <= r.lastNano {
		n = r.lastNano + 1
	}
	r.lastNano = n
	return n
}

// aggregate records message among the distinct messages of aggKey and reports whether
// the event is to be folded into the combined one, as upstream's EventAggregator: once
// aggregateMax distinct messages were seen within aggregateInterval of each other (the
// oldest then forgotten). Caller holds mu.
func (r *Recorder) aggregate(aggKey, message string, now time.Time) bool {
	se := r.similar[aggKey]
	if se == nil || now.Sub(se.last) > aggregateInterval {
		if se == nil {
			r.simiOrder = append(r.simiOrder, aggKey)
			if len(r.simiOrder) > maxCached {
				delete(r.similar, r.simiOrder[0])
				r.simiOrder = r.simiOrder[1:]
			}
		}
		se = &similarEvents{}
		r.similar[aggKey] = se
	}
	se.last = now
	if !slices.Contains(se.messages, message) {
		se.messages = append(se.messages, message)
	}
	if len(se.messages) < aggregateMax {
		return false
	}
	se.messages = se.messages[1:]
	return true
}

// take spends one token of the object's bucket (caller holds mu).
func (r *Recorder) take(objKey string, now time.Time) bool {
	b := r.bucket[objKey]
	if b == nil {
		b = &tokenBucket{tokens: spamBurst, last: now}
		r.bucket[objKey] = b
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens += float64(el) / float64(spamInterval)
		if b.tokens > spamBurst {
			b.tokens = spamBurst
		}
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (r *Recorder) remember(key string, s seenEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[key]; !ok {
		r.order = append(r.order, key)
		if len(r.order) > maxCached {
			delete(r.seen, r.order[0])
			r.order = r.order[1:]
		}
	}
	r.seen[key] = s
}

// objectReference builds the involvedObject of an event.
func objectReference(obj runtime.Object) (corev1.ObjectReference, error) {
	m, err := controller.Meta(obj)
	if err != nil {
		return corev1.ObjectReference{}, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		k, ok := kindOf(obj)
		if !ok {
			return corev1.ObjectReference{}, fmt.Errorf("unknown kind of %T", obj)
		}
		gvk = k
	}
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return corev1.ObjectReference{
		Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(),
		APIVersion: apiVersion, ResourceVersion: m.GetResourceVersion(),
	}, nil
}

// kindOf returns the kind of the typed objects events are recorded about.
func kindOf(obj runtime.Object) (schema.GroupVersionKind, bool) {
	switch obj.(type) {
	case *appsv1.ReplicaSet:
		return appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), true
	case *corev1.ReplicationController:
		return corev1.SchemeGroupVersion.WithKind("ReplicationController"), true
	case *appsv1.Deployment:
		return appsv1.SchemeGroupVersion.WithKind("Deployment"), true
	case *batchv1.Job:
		return batchv1.SchemeGroupVersion.WithKind("Job"), true
	case *batchv1.CronJob:
		return batchv1.SchemeGroupVersion.WithKind("CronJob"), true
	case *appsv1.StatefulSet:
		return appsv1.SchemeGroupVersion.WithKind("StatefulSet"), true
	case *appsv1.DaemonSet:
		return appsv1.SchemeGroupVersion.WithKind("DaemonSet"), true
	case *corev1.Pod:
		return corev1.SchemeGroupVersion.WithKind("Pod"), true
	case *corev1.ResourceQuota:
		return corev1.SchemeGroupVersion.WithKind("ResourceQuota"), true
	case *clusterquota.ClusterResourceQuota:
		return clusterquota.SchemeGroupVersion.WithKind("ClusterResourceQuota"), true
	}
	return schema.GroupVersionKind{}, false
}
