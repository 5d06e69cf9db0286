package flowcontrol

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/validation"
)

// allKey is the queue's only key: check every object.
const allKey = "all"

// Controller keeps the mandatory objects and the FlowSchemas' Dangling conditions.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	clock clock.PassiveClock
}

// New returns the controller; panics counts recovered panics (may be nil).
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("flowcontrol", store, log, panics, nil), clock: clock.RealClock{}}
}

func (c *Controller) schemas() *registry.Resource {
	return c.store.Catalogue().Get(flowcontrolv1.SchemeGroupVersion.WithResource("flowschemas"))
}

func (c *Controller) levels() *registry.Resource {
	return c.store.Catalogue().Get(flowcontrolv1.SchemeGroupVersion.WithResource("prioritylevelconfigurations"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("flowcontrol")
	add := func(runtime.Object, bool) { q.Add(allKey) }
	go c.loop.Watch(ctx, c.schemas(), add)
	go c.loop.Watch(ctx, c.levels(), add)
	c.loop.Process(ctx, q, 1, func(ctx context.Context, _ string) (time.Duration, error) { return 0, c.Sync(ctx) })
	return nil
}

// Sync makes one pass: 1. ensure the priority levels (mandatory, then suggested), 2. the
// flow schemas, 3. set each schema's Dangling condition.
func (c *Controller) Sync(ctx context.Context) error {
	var levels []runtime.Object
	for _, pl := range append(validation.MandatoryPriorityLevelConfigurations(), SuggestedPriorityLevelConfigurations()...) {
		levels = append(levels, pl.DeepCopy())
	}
	if err := c.ensure(ctx, c.levels(), levels); err != nil {
		return err
	}
	var schemas []runtime.Object
	for _, fs := range append(validation.MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		schemas = append(schemas, fs.DeepCopy())
	}
	if err := c.ensure(ctx, c.schemas(), schemas); err != nil {
		return err
	}
	stored, _, err := c.store.ListObjects(ctx, c.levels(), "")
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, o := range stored {
		if m, err := controller.Meta(o); err == nil {
			have[m.GetName()] = true
		}
	}
	all, _, err := c.store.ListObjects(ctx, c.schemas(), "")
	if err != nil {
		return err
	}
	for _, o := range all {
		fs, ok := o.(*flowcontrolv1.FlowSchema)
		if !ok {
			continue
		}
		want := Dangling(fs.Spec.PriorityLevelConfiguration.Name, have[fs.Spec.PriorityLevelConfiguration.Name])
		if cur := condition(fs); cur != nil && cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
			continue
		}
		_, err := c.store.Update(ctx, c.schemas(), "", fs.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
			fs, err := controller.As[*flowcontrolv1.FlowSchema](cur)
			if err != nil {
				return nil, err
			}
			setCondition(fs, want, metav1.NewTime(c.clock.Now().Truncate(time.Second)))
			return fs, nil
		}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// ensure creates each wanted object that is missing and puts back the spec of one that
// differs while its autoupdate-spec annotation is "true" (wanted objects are compared with
// defaults applied, as stored).
func (c *Controller) ensure(ctx context.Context, res *registry.Resource, want []runtime.Object) error {
	stored, _, err := c.store.ListObjects(ctx, res, "")
	if err != nil {
		return err
	}
	byName := map[string]runtime.Object{}
	for _, o := range stored {
		if m, err := controller.Meta(o); err == nil {
			byName[m.GetName()] = o
		}
	}
	for _, w := range want {
		defaults.Apply(w)
		wm, err := controller.Meta(w)
		if err != nil {
			return err
		}
		cur := byName[wm.GetName()]
		if cur == nil {
			if err := c.create(ctx, res, w.DeepCopyObject()); err != nil {
				return err
			}
			continue
		}
		if cm, err := controller.Meta(cur); err != nil || cm.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey] != "true" || sameSpec(cur, w) {
			continue
		}
		_, err = c.store.Update(ctx, res, "", wm.GetName(), "", func(o runtime.Object) (runtime.Object, error) {
			if m, err := controller.Meta(o); err != nil || m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
				return o, err
			}
			setSpec(o, w)
			return o, nil
		}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func sameSpec(cur, want runtime.Object) bool {
	switch c := cur.(type) {
	case *flowcontrolv1.FlowSchema:
		w, ok := want.(*flowcontrolv1.FlowSchema)
		return ok && equality.Semantic.DeepEqual(c.Spec, w.Spec)
	case *flowcontrolv1.PriorityLevelConfiguration:
		w, ok := want.(*flowcontrolv1.PriorityLevelConfiguration)
		return ok && equality.Semantic.DeepEqual(c.Spec, w.Spec)
	}
	return true
}

func setSpec(cur, want runtime.Object) {
	switch c := cur.(type) {
	case *flowcontrolv1.FlowSchema:
		if w, ok := want.(*flowcontrolv1.FlowSchema); ok {
			c.Spec = *w.Spec.DeepCopy()
		}
	case *flowcontrolv1.PriorityLevelConfiguration:
		if w, ok := want.(*flowcontrolv1.PriorityLevelConfiguration); ok {
			c.Spec = *w.Spec.DeepCopy()
		}
	}
}

func (c *Controller) create(ctx context.Context, res *registry.Resource, obj runtime.Object) error {
	_, err := c.store.Create(ctx, res, "", obj, registry.WriteOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s: %w", res.GVR.Resource, err)
	}
	return nil
}

// Dangling is the condition upstream's APF controller sets on a FlowSchema referencing
// the priority level pl.
func Dangling(pl string, exists bool) flowcontrolv1.FlowSchemaCondition {
	if exists {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
			Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", pl)}
	}
	return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue, Reason: "NotFound",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", pl)}
}

func condition(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}

func setCondition(fs *flowcontrolv1.FlowSchema, want flowcontrolv1.FlowSchemaCondition, now metav1.Time) {
	want.LastTransitionTime = now
	if cur := condition(fs); cur != nil {
		if cur.Status == want.Status {
			want.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = want
		return
	}
	fs.Status.Conditions = append(fs.Status.Conditions, want)
}
