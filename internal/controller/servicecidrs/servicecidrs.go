package servicecidrs

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's names and texts.
const (
	Name                = "service-cidr-controller"
	Finalizer           = "networking.k8s.io/service-cidr-finalizer"
	ReadyMessage        = "Kubernetes Service CIDR is ready"
	TerminatingMessage  = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
	ManagedBy           = "ipallocator.k8s.io"
	DeletionGracePeriod = 10 * time.Second
)

// Controller keeps ServiceCIDRs' finalizers and Ready conditions.
type Controller struct {
	store controller.Client
	loop  *controller.Loop
	cidrs *controller.Index
	ips   *controller.Index
	clock clock.PassiveClock
}

// New returns the controller; panics may be nil.
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{
		store: store, loop: controller.NewLoop(Name, store, log, panics, nil), clock: clock.RealClock{},
		cidrs: controller.NewIndex(nil),
		// Only the allocator's addresses can block a deletion: the index keeps no other.
		ips: controller.NewIndex(func(obj runtime.Object) runtime.Object {
			if ip, ok := obj.(*networkingv1.IPAddress); ok && ip.Labels[networkingv1.LabelManagedBy] == ManagedBy {
				return ip
			}
			return nil
		}),
	}
}

func (c *Controller) res(plural string) *registry.Resource {
	return c.store.Catalogue().Get(networkingv1.SchemeGroupVersion.WithResource(plural))
}

// Start runs the controller until ctx ends. A ServiceCIDR's event syncs it and those
// overlapping it (a range added or gone can unblock a deletion); an allocator's
// IPAddress's event syncs the ServiceCIDRs being deleted that hold it (the others'
// decisions do not read addresses: a Service created costs no pass over every address).
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue(Name)
	go c.loop.WatchIndex(ctx, c.res("servicecidrs"), c.cidrs, controller.On(func(sc *networkingv1.ServiceCIDR, _ bool) {
		q.Add(sc.Name)
		for _, other := range c.all() {
			if overlaps(other, sc) {
				q.Add(other.Name)
			}
		}
	}))
	go c.loop.WatchIndex(ctx, c.res("ipaddresses"), c.ips, controller.On(func(ip *networkingv1.IPAddress, _ bool) {
		addr, err := netip.ParseAddr(ip.Name)
		if err != nil || ip.Labels[networkingv1.LabelManagedBy] != ManagedBy {
			return
		}
		for _, sc := range c.all() {
			// Only a deletion's decision reads the addresses.
			if sc.DeletionTimestamp != nil && contains(sc, addr) {
				q.Add(sc.Name)
			}
		}
	}))
	c.loop.Process(ctx, q, 1, c.sync)
	return nil
}

// all returns the ServiceCIDRs the index holds.
func (c *Controller) all() []*networkingv1.ServiceCIDR {
	var out []*networkingv1.ServiceCIDR
	c.cidrs.Range("", func(o runtime.Object) {
		if sc, ok := o.(*networkingv1.ServiceCIDR); ok {
			out = append(out, sc)
		}
	})
	return out
}

// sync applies Decide's decision for one ServiceCIDR.
func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	if err := c.cidrs.WaitFor(ctx, 0); err != nil {
		return 0, err
	}
	if err := c.ips.WaitFor(ctx, 0); err != nil {
		return 0, err
	}
	sc, _ := c.cidrs.Get("", name).(*networkingv1.ServiceCIDR)
	if sc == nil {
		return 0, nil
	}
	var ips []*networkingv1.IPAddress
	if sc.DeletionTimestamp != nil {
		c.ips.Range("", func(o runtime.Object) { ips = append(ips, o.(*networkingv1.IPAddress)) })
	}
	now := c.clock.Now()
	d := Decide(sc, c.all(), ips, now)
	if d.SetFinalizer != nil {
		if err := c.write(ctx, name, sc.UID, "", func(cur *networkingv1.ServiceCIDR) {
			fin := slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == Finalizer })
			if *d.SetFinalizer {
				fin = append(fin, Finalizer)
			}
			cur.Finalizers = fin
		}); err != nil {
			return 0, err
		}
	}
	if d.Ready != nil {
		d.Ready.LastTransitionTime = metav1.NewTime(now)
		if err := c.write(ctx, name, sc.UID, "status", func(cur *networkingv1.ServiceCIDR) {
			meta.RemoveStatusCondition(&cur.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			cur.Status.Conditions = append(cur.Status.Conditions, *d.Ready)
		}); err != nil {
			return 0, err
		}
	}
	return d.RecheckAfter, nil
}

// write changes the ServiceCIDR named name, if it is still the one with uid.
func (c *Controller) write(ctx context.Context, name string, uid types.UID, subresource string, change func(*networkingv1.ServiceCIDR)) error {
	_, err := c.store.Update(ctx, c.res("servicecidrs"), "", name, subresource, func(cur runtime.Object) (runtime.Object, error) {
		sc, err := controller.As[*networkingv1.ServiceCIDR](cur)
		if err != nil {
			return nil, err
		}
		if sc.UID != uid {
			return cur, nil
		}
		change(sc)
		return sc, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil // gone: its deletion's event ends it
	}
	return err
}

// Decision is what a sync does to one ServiceCIDR.
type Decision struct {
	// SetFinalizer, when set, adds (true) or removes (false) the protection finalizer.
	SetFinalizer *bool
	// Ready, when set, replaces the Ready condition (its LastTransitionTime is the write's).
	Ready *metav1.Condition
	// RecheckAfter is when to decide again (0: at the next event).
	RecheckAfter time.Duration
}

// Decide returns what upstream's controller does to sc, given every ServiceCIDR and the
// allocator's IPAddresses at now.
func Decide(sc *networkingv1.ServiceCIDR, all []*networkingv1.ServiceCIDR, ips []*networkingv1.IPAddress, now time.Time) Decision {
	has := slices.Contains(sc.Finalizers, Finalizer)
	if sc.DeletionTimestamp == nil {
		var d Decision
		if !has {
			d.SetFinalizer = ptr(true)
		}
		d.Ready = readyIfChanged(sc, metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue, Message: ReadyMessage})
		return d
	}
	if blocked(sc, all, ips) {
		return Decision{Ready: readyIfChanged(sc, metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionFalse,
			Reason: networkingv1.ServiceCIDRReasonTerminating, Message: TerminatingMessage})}
	}
	if wait := sc.DeletionTimestamp.Add(DeletionGracePeriod).Sub(now); wait > 0 {
		return Decision{RecheckAfter: wait}
	}
	if has {
		return Decision{SetFinalizer: ptr(false)}
	}
	return Decision{}
}

func ptr[T any](v T) *T { return &v }

// readyIfChanged returns want when sc's Ready condition differs from it in status, reason
// or message.
func readyIfChanged(sc *networkingv1.ServiceCIDR, want metav1.Condition) *metav1.Condition {
	cur := meta.FindStatusCondition(sc.Status.Conditions, want.Type)
	if cur != nil && cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
		return nil
	}
	return &want
}

// blocked reports whether deleting sc would leave an allocator's address in no
// ServiceCIDR: not when each of its ranges lies inside another ServiceCIDR; otherwise when
// an address of one of its ranges' families lies in sc and in no other ServiceCIDR.
func blocked(sc *networkingv1.ServiceCIDR, all []*networkingv1.ServiceCIDR, ips []*networkingv1.IPAddress) bool {
	covered := true
	for _, cidr := range sc.Spec.CIDRs {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(all, func(o *networkingv1.ServiceCIDR) bool { return o.Name != sc.Name && containsPrefix(o, p) }) {
			covered = false
		}
	}
	if covered {
		return false
	}
	for _, ip := range ips {
		addr, err := netip.ParseAddr(ip.Name)
		if err != nil || !contains(sc, addr) {
			continue
		}
		if !slices.ContainsFunc(all, func(o *networkingv1.ServiceCIDR) bool { return o.Name != sc.Name && contains(o, addr) }) {
			return true
		}
	}
	return false
}

// contains reports whether one of sc's ranges holds addr as an address it gives out: not
// its network address, nor (IPv4) its broadcast address.
func contains(sc *networkingv1.ServiceCIDR, addr netip.Addr) bool {
	return slices.ContainsFunc(sc.Spec.CIDRs, func(cidr string) bool {
		p, err := netip.ParsePrefix(cidr)
		return err == nil && registry.RangeGives(p, addr)
	})
}

// containsPrefix reports whether one of sc's ranges holds all of p.
func containsPrefix(sc *networkingv1.ServiceCIDR, p netip.Prefix) bool {
	return slices.ContainsFunc(sc.Spec.CIDRs, func(cidr string) bool {
		o, err := netip.ParsePrefix(cidr)
		return err == nil && o.Bits() <= p.Bits() && o.Overlaps(p)
	})
}

// overlaps reports whether a range of a overlaps a range of b.
func overlaps(a, b *networkingv1.ServiceCIDR) bool {
	return slices.ContainsFunc(a.Spec.CIDRs, func(x string) bool {
		px, err := netip.ParsePrefix(x)
		return err == nil && slices.ContainsFunc(b.Spec.CIDRs, func(y string) bool {
			py, err := netip.ParsePrefix(y)
			return err == nil && px.Overlaps(py)
		})
	})
}
