package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// writeTimeout bounds one write of the sink (record.EventSink's methods take no context).
const writeTimeout = 10 * time.Second

// Recorder records core/v1 Events with client-go's event recorder (tools/record): its
// broadcaster queues them, its EventCorrelator (aggregator, spam filter and the cache that
// turns repeats into count bumps, with upstream's defaults) runs on clk (nil: the real
// clock), and a sink writes them through the registry store. Recording never blocks on the
// write and never fails: write failures are logged (by the broadcaster, to log), a full
// queue drops the event. client-go's recorder stamps an event, and names it
// <object>.<hex nanoseconds>, with the wall clock (its clock is not settable); clk stamps
// the combined events of the aggregator and their repeats.
//
// The broadcaster starts with the first event and stops when the context given to Start
// ends; events recorded after that are dropped.
type Recorder struct {
	store     controller.Client
	component string
	clock     clock.PassiveClock
	log       logr.Logger

	// ctx ends when the recorder stops: the broadcaster is bound to it, and the sink's
	// writes derive from it.
	ctx  context.Context
	stop context.CancelFunc

	mu  sync.Mutex
	rec record.EventRecorderLogger // nil until the first event
}

// NewRecorder returns a recorder whose events carry source.component and
// reportingController component.
func NewRecorder(store controller.Client, component string, clk clock.PassiveClock, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Recorder{store: store, component: component, clock: clk, log: logr.FromSlogHandler(log.Handler()), ctx: ctx, stop: stop}
}

// Start ties the recorder's life to ctx: when ctx ends, the broadcaster's goroutines end
// and later events are dropped. Its owner calls it when it starts (a controller with its
// Start context, the server with its own). A recorder never started keeps its broadcaster,
// once an event started it, for the life of the process.
func (r *Recorder) Start(ctx context.Context) {
	context.AfterFunc(ctx, r.stop)
}

// Eventf records an event about obj (which must have kind metadata set or be a known kind).
func (r *Recorder) Eventf(ctx context.Context, obj runtime.Object, eventType, reason, format string, args ...interface{}) {
	r.Event(ctx, obj, eventType, reason, fmt.Sprintf(format, args...))
}

// Event records an event about obj.
func (r *Recorder) Event(ctx context.Context, obj runtime.Object, eventType, reason, message string) {
	ref, err := r.objectReference(obj)
	if err != nil {
		r.log.Error(err, "cannot record event", "reason", reason)
		return
	}
	r.EventRef(ctx, ref, eventType, reason, message)
}

// EventRef records an event about the object ref names. client-go's recorder puts it in
// the object's namespace, or in "default" for a cluster-scoped object. The write is
// asynchronous: ctx, the caller's, bounds nothing of it.
func (r *Recorder) EventRef(_ context.Context, ref corev1.ObjectReference, eventType, reason, message string) {
	rec := r.recorder()
	if rec == nil {
		return // stopped
	}
	// GetReference takes an *ObjectReference as it is.
	rec.Event(&ref, eventType, reason, message)
}

// recorder returns client-go's recorder, starting the broadcaster and its sink on first
// use, or nil once the recorder has stopped.
func (r *Recorder) recorder() record.EventRecorderLogger {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return nil
	}
	if r.rec == nil {
		// The broadcaster stops when r.ctx ends, and logs (its write failures) to the
		// logger r.ctx carries.
		b := record.NewBroadcaster(
			record.WithContext(logr.NewContext(r.ctx, r.log)),
			record.WithCorrelatorOptions(record.CorrelatorOptions{Clock: r.clock}),
		)
		b.StartRecordingToSink(&sink{store: r.store, res: r.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("events")), ctx: r.ctx})
		// No scheme: the recorder is only ever given *ObjectReferences.
		r.rec = b.NewRecorder(nil, corev1.EventSource{Component: r.component}).WithLogger(r.log)
	}
	return r.rec
}

// sink is record.EventSink over the registry store: the writes are admitted and
// quota-accounted like any other, and fail with the API status errors client-go's
// broadcaster expects of a REST client (it retries other errors).
type sink struct {
	store controller.Client
	res   *registry.Resource
	ctx   context.Context
}

var _ record.EventSink = (*sink)(nil)

func (s *sink) Create(ev *corev1.Event) (*corev1.Event, error) {
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	r, err := s.store.Create(ctx, s.res, ev.Namespace, ev.DeepCopy(), registry.WriteOptions{})
	return result(r, err)
}

// Update replaces the stored event, at ev's resourceVersion if it has one.
func (s *sink) Update(ev *corev1.Event) (*corev1.Event, error) {
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	r, err := s.store.Update(ctx, s.res, ev.Namespace, ev.Name, "", func(cur runtime.Object) (runtime.Object, error) {
		m, err := controller.Meta(cur)
		if err != nil {
			return nil, err
		}
		n := ev.DeepCopy()
		if n.ResourceVersion == "" {
			n.ResourceVersion = m.GetResourceVersion()
		}
		return n, nil
	}, registry.WriteOptions{})
	return result(r, err)
}

// Patch applies the correlator's strategic merge patch (count, lastTimestamp, message) to
// the stored event.
func (s *sink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	r, err := s.store.Update(ctx, s.res, old.Namespace, old.Name, "", func(cur runtime.Object) (runtime.Object, error) {
		js, err := json.Marshal(cur)
		if err != nil {
			return nil, err
		}
		patched, err := strategicpatch.StrategicMergePatch(js, data, &corev1.Event{})
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("event patch: %v", err))
		}
		ev := &corev1.Event{}
		if err := json.Unmarshal(patched, ev); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("event patch: %v", err))
		}
		return ev, nil
	}, registry.WriteOptions{})
	return result(r, err)
}

// result is the event a write returned, or its error as a *StatusError when it is an API
// status: the broadcaster tells the errors it must not retry (and a missing event, which
// it creates afresh) by that type.
func result(r *registry.Result, err error) (*corev1.Event, error) {
	if err != nil {
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			return nil, se
		}
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			return nil, &apierrors.StatusError{ErrStatus: st.Status()}
		}
		return nil, err
	}
	return controller.As[*corev1.Event](r.Object)
}

// objectReference builds the involvedObject of an event: client-go's GetReference would
// need a scheme for objects without kind metadata (typed k8s.io/api objects as the
// controllers hold them, and quotad's own kinds).
func (r *Recorder) objectReference(obj runtime.Object) (corev1.ObjectReference, error) {
	m, err := controller.Meta(obj)
	if err != nil {
		return corev1.ObjectReference{}, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		k, ok := r.store.Catalogue().KindOf(obj)
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
