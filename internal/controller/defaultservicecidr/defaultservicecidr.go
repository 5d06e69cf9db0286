package defaultservicecidr

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/registry"
)

// Name is the default ServiceCIDR's name; ReadyMessage the message of its Ready condition;
// Component the source of its events (upstream's controller name).
const (
	Name         = "kubernetes"
	ReadyMessage = "Kubernetes default Service CIDR is ready"
	Component    = "kubernetes-service-cidr-controller"
	// ReasonInconsistent is upstream's reason for a default ServiceCIDR that holds another
	// range than the flags give.
	ReasonInconsistent = "KubernetesDefaultServiceCIDRInconsistent"
)

// Controller keeps the default ServiceCIDR.
type Controller struct {
	store controller.Client
	loop  *controller.Loop
	log   *slog.Logger
	rec   *record.Recorder
	cidrs []string
	clock clock.PassiveClock
	// reported holds the reasons already reported: each once per process, as upstream.
	mu       sync.Mutex
	reported map[string]bool
}

// New returns the controller of the service ranges cidrs; panics may be nil.
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver, cidrs []string) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, loop: controller.NewLoop("default-servicecidr", store, log, panics, nil), log: log,
		rec: record.NewRecorder(store, Component, clock.RealClock{}, log), cidrs: cidrs, clock: clock.RealClock{}, reported: map[string]bool{}}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(networkingv1.SchemeGroupVersion.WithResource("servicecidrs"))
}

// Start runs the controller until ctx ends: every event of the default ServiceCIDR
// (its deletion included) syncs it.
func (c *Controller) Start(ctx context.Context) error {
	c.rec.Start(ctx)
	q := controller.NewQueue("default-servicecidr")
	go c.loop.Watch(ctx, c.res(), func(obj runtime.Object, _ bool) {
		if m, err := meta.Accessor(obj); err == nil && m.GetName() == Name {
			q.Add(Name)
		}
	})
	q.Add(Name)
	c.loop.Process(ctx, q, 1, func(ctx context.Context, _ string) (time.Duration, error) { return 0, c.sync(ctx, true) })
	return nil
}

// Sync creates the default ServiceCIDR when it is missing and marks it Ready when it
// holds the service range and is not yet Ready or not Ready. It reports nothing (the
// running controller reports what it finds: Start).
func (c *Controller) Sync(ctx context.Context) error { return c.sync(ctx, false) }

func (c *Controller) sync(ctx context.Context, report bool) error {
	res := c.res()
	obj := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: Name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: slices.Clone(c.cidrs)}}
	if _, err := c.store.Create(ctx, res, "", obj, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	var seen *networkingv1.ServiceCIDR
	_, err := c.store.Update(ctx, res, "", Name, "status", func(cur runtime.Object) (runtime.Object, error) {
		sc, ok := cur.(*networkingv1.ServiceCIDR)
		seen = sc
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
	if err == nil && report && seen != nil {
		if reason, msg := Report(seen, c.cidrs); reason != "" && c.firstReport(reason) {
			c.log.Warn("the default ServiceCIDR", "reason", reason, "message", msg)
			c.rec.Event(ctx, seen, corev1.EventTypeWarning, reason, msg)
		}
	}
	return err
}

// firstReport reports whether reason was not reported before, and marks it reported.
func (c *Controller) firstReport(reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reported[reason] {
		return false
	}
	c.reported[reason] = true
	return true
}

// Report is what upstream's controller reports of the default ServiceCIDR sc, kept by
// flags giving cidrs: a range other than cidrs (an admin changed
// --service-cluster-ip-range on an existing cluster: the stored range stays, and addresses
// keep coming from it), or a Ready=False condition on the range the flags give; ""
// when nothing is wrong or sc is being deleted.
func Report(sc *networkingv1.ServiceCIDR, cidrs []string) (reason, message string) {
	if sc.DeletionTimestamp != nil {
		return "", ""
	}
	if !slices.Equal(sc.Spec.CIDRs, cidrs) {
		return ReasonInconsistent, fmt.Sprintf("The default ServiceCIDR %v does not match the controller flag configurations %s", sc.Spec.CIDRs, cidrs)
	}
	if ready := meta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady); ready != nil && ready.Status == metav1.ConditionFalse {
		return ready.Reason, "Configuration matches, but " + ready.Message
	}
	return "", ""
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
