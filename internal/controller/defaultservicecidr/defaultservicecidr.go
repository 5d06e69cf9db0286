package defaultservicecidr

import (
	"context"
	"log/slog"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Name is the default ServiceCIDR's name; ReadyMessage the message of its Ready condition.
const (
	Name         = "kubernetes"
	ReadyMessage = "Kubernetes default Service CIDR is ready"
)

// Controller keeps the default ServiceCIDR.
type Controller struct {
	store controller.Client
	loop  *controller.Loop
	cidrs []string
	clock clock.PassiveClock
}

// New returns the controller of the service ranges cidrs; panics may be nil.
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver, cidrs []string) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, loop: controller.NewLoop("default-servicecidr", store, log, panics, nil), cidrs: cidrs, clock: clock.RealClock{}}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(networkingv1.SchemeGroupVersion.WithResource("servicecidrs"))
}

// Start runs the controller until ctx ends: every event of the default ServiceCIDR
// (its deletion included) syncs it.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("default-servicecidr")
	go c.loop.Watch(ctx, c.res(), func(obj runtime.Object, _ bool) {
		if m, err := meta.Accessor(obj); err == nil && m.GetName() == Name {
			q.Add(Name)
		}
	})
	q.Add(Name)
	c.loop.Process(ctx, q, 1, func(ctx context.Context, _ string) (time.Duration, error) { return 0, c.Sync(ctx) })
	return nil
}

// Sync creates the default ServiceCIDR when it is missing and marks it Ready when it
// holds the service range and is not yet Ready or not Ready.
func (c *Controller) Sync(ctx context.Context) error {
	res := c.res()
	obj := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: Name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: slices.Clone(c.cidrs)}}
	if _, err := c.store.Create(ctx, res, "", obj, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err := c.store.Update(ctx, res, "", Name, "status", func(cur runtime.Object) (runtime.Object, error) {
		sc, ok := cur.(*networkingv1.ServiceCIDR)
		if !ok || !NeedsReady(sc, c.cidrs) {
			return cur, nil
		}
		meta.RemoveStatusCondition(&sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
		sc.Status.Conditions = append(sc.Status.Conditions, metav1.Condition{
			Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
			Message: ReadyMessage, LastTransitionTime: metav1.NewTime(c.clock.Now()),
		})
		return sc, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted in between: the deletion's event syncs again
	}
	return err
}

// NeedsReady reports whether sc holds exactly cidrs and has no Ready condition, or an
// Unknown one.
func NeedsReady(sc *networkingv1.ServiceCIDR, cidrs []string) bool {
	if !slices.Equal(sc.Spec.CIDRs, cidrs) || sc.DeletionTimestamp != nil {
		return false
	}
	ready := meta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	return ready == nil || ready.Status == metav1.ConditionUnknown
}
