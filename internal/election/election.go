package election

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/registry"
)

// kube-controller-manager's defaults (--leader-elect-lease-duration, --leader-elect-renew-deadline,
// --leader-elect-retry-period) and its lock.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// DefaultNamespace and DefaultName name the Lease kube-controller-manager elects on.
	DefaultNamespace = "kube-system"
	DefaultName      = "kube-controller-manager"
	// JitterFactor is client-go's: a candidate waits between RetryPeriod and
	// RetryPeriod*(1+JitterFactor) between attempts, and RenewDeadline must exceed
	// RetryPeriod*JitterFactor.
	JitterFactor = 1.2
)

// ErrInvalidConfig is wrapped by Validate's errors.
var ErrInvalidConfig = errors.New("invalid leader election configuration")

// leasesGVR is the resource of the lock.
var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// Config configures an Elector.
type Config struct {
	// Store is where the Lease is read and written.
	Store *registry.Store
	// Namespace and Name name the Lease (empty: DefaultNamespace, DefaultName).
	Namespace, Name string
	// Identity is this candidate's holderIdentity (empty: Identity()).
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are kube-controller-manager's flags of
	// the same names (zero: the defaults).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReleaseOnCancel releases the Lease when Run's context ends while leading.
	ReleaseOnCancel bool
	// Lead runs the leader's work until ctx ends. It must return only once all its work
	// has stopped. It is called anew on each acquisition.
	Lead func(ctx context.Context)
	// OnLeading, when set, is told true just before Lead starts and false once Lead has
	// returned.
	OnLeading func(leading bool)
	// Clock is the elector's clock (nil: the real clock).
	Clock clock.Clock
	// Logger (nil: slog.Default()).
	Logger *slog.Logger
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate checks the durations as kube-controller-manager (its leaderElection
// configuration validation) and client-go's NewLeaderElector do. The error wraps
// ErrInvalidConfig.
func Validate(leaseDuration, renewDeadline, retryPeriod time.Duration) error {
	p := field.NewPath("leaderElection")
	var errs field.ErrorList
	if leaseDuration <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDuration"), leaseDuration.String(), "must be greater than zero"))
	}
	if renewDeadline <= 0 {
		errs = append(errs, field.Invalid(p.Child("renewDeadline"), renewDeadline.String(), "must be greater than zero"))
	}
	if retryPeriod <= 0 {
		errs = append(errs, field.Invalid(p.Child("retryPeriod"), retryPeriod.String(), "must be greater than zero"))
	}
	if leaseDuration <= renewDeadline {
		errs = append(errs, field.Invalid(p.Child("leaseDuration"), renewDeadline.String(), "LeaseDuration must be greater than RenewDeadline"))
	}
	if renewDeadline <= time.Duration(JitterFactor*float64(retryPeriod)) {
		errs = append(errs, field.Invalid(p.Child("renewDeadline"), renewDeadline.String(), "renewDeadline must be greater than retryPeriod*JitterFactor"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, errs.ToAggregate())
	}
	return nil
}

// Identity is kube-controller-manager's holder identity: "<hostname>_<uuid>".
func Identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// Elector campaigns for a Lease and runs Lead while it holds it.
type Elector struct {
	cfg Config
	res *registry.Resource
	log *slog.Logger

	// observed is the Lease spec last read or written, observedRV its resourceVersion and
	// observedAt when (on Clock) it was first seen with that spec.
	observed   coordinationv1.LeaseSpec
	observedRV string
	observedAt time.Time
}

// New returns an Elector; the configuration must pass Validate.
func New(cfg Config) (*Elector, error) {
	cfg = cfg.withDefaults()
	if cfg.Store == nil || cfg.Lead == nil {
		return nil, fmt.Errorf("%w: Store and Lead are required", ErrInvalidConfig)
	}
	if err := Validate(cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod); err != nil {
		return nil, err
	}
	if cfg.Identity == "" {
		id, err := Identity()
		if err != nil {
			return nil, err
		}
		cfg.Identity = id
	}
	res := cfg.Store.Catalogue().Get(leasesGVR)
	if res == nil {
		return nil, fmt.Errorf("%w: the store does not serve %s", ErrInvalidConfig, leasesGVR)
	}
	return &Elector{cfg: cfg, res: res, log: cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)}, nil
}

// Identity returns the elector's holder identity.
func (e *Elector) Identity() string { return e.cfg.Identity }

// Run campaigns until ctx ends:
//  1. Acquire: try every RetryPeriod (jittered) until the Lease is taken.
//  2. Lead: start Lead and renew every RetryPeriod until ctx ends, a renewal fails past
//     the renew deadline, or another holder is found.
//  3. Stop: cancel Lead's context and wait for Lead to return; then, when ctx ended and
//     ReleaseOnCancel is set, release the Lease.
//  4. Unless ctx ended, campaign again (step 1).
func (e *Elector) Run(ctx context.Context) {
	for {
		acquiredAt, ok := e.acquire(ctx)
		if !ok {
			return
		}
		e.lead(ctx, acquiredAt)
		if ctx.Err() != nil {
			if e.cfg.ReleaseOnCancel {
				e.release()
			}
			return
		}
	}
}

// acquire tries to take the Lease until it succeeds (returning the start of the
// successful attempt) or ctx ends. It tries every jittered RetryPeriod as client-go does,
// and also at once when a watch of the Lease reports a change (so a renewal is observed,
// on this candidate's clock, when it happens rather than up to a retry period later) and
// exactly when the observed record would expire. The Lease is still taken only after it
// was seen unchanged for its lease duration; a dead leader is replaced within the lease
// duration of its last renewal.
func (e *Elector) acquire(ctx context.Context) (time.Time, bool) {
	e.log.Info("attempting to acquire leader lease")
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var changed <-chan registry.Event
	for {
		if changed == nil {
			changed = e.watchLease(watchCtx)
		}
		start := e.cfg.Clock.Now()
		if e.tryAcquireOrRenew(ctx) {
			e.log.Info("successfully acquired lease")
			return start, true
		}
		d := wait.Jitter(e.cfg.RetryPeriod, JitterFactor)
		if holder := deref(e.observed.HolderIdentity); holder != "" && holder != e.cfg.Identity {
			expiry := e.observedAt.Add(time.Duration(deref(e.observed.LeaseDurationSeconds)) * time.Second)
			if until := expiry.Sub(e.cfg.Clock.Now()); until >= 0 && until < d {
				d = until
			}
		}
		var ok bool
		if ok, changed = e.waitOrChange(ctx, d, changed); !ok {
			return time.Time{}, false
		}
	}
}

// watchLease watches the Leases of the elector's namespace; nil when the watch cannot
// start (the elector then polls alone).
func (e *Elector) watchLease(ctx context.Context) <-chan registry.Event {
	ch, err := e.cfg.Store.Watch(ctx, e.res, e.cfg.Namespace, registry.WatchOptions{Shared: true})
	if err != nil {
		e.log.Debug("watching the lease", "err", err)
		return nil
	}
	return ch
}

// waitOrChange waits d on the clock or until changed delivers a change of the Lease. It
// returns false when ctx ended first, and the channel to wait on next (nil once changed
// has closed, so that the caller watches again).
func (e *Elector) waitOrChange(ctx context.Context, d time.Duration, changed <-chan registry.Event) (bool, <-chan registry.Event) {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, changed
		case <-t.C():
			return true, changed
		case ev, open := <-changed:
			if !open {
				// Wait out the timer (no busy loop when watches end at once); the caller
				// watches again.
				changed = nil
				continue
			}
			if ev.Initial {
				continue
			}
			if m, err := meta.Accessor(ev.Object); err == nil && m.GetName() == e.cfg.Name {
				return true, changed
			}
		}
	}
}

// lead runs Lead while renewing; it returns once Lead has returned.
func (e *Elector) lead(ctx context.Context, lastRenew time.Time) {
	leadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	if e.cfg.OnLeading != nil {
		e.cfg.OnLeading(true)
	}
	go func() {
		defer close(done)
		e.cfg.Lead(leadCtx)
	}()
	e.renew(ctx, lastRenew)
	cancel()
	<-done
	if e.cfg.OnLeading != nil {
		e.cfg.OnLeading(false)
	}
	if ctx.Err() == nil {
		e.log.Info("stopped leading; campaigning again")
	}
}

// renew renews every RetryPeriod and returns when ctx ends or leadership is lost: no
// successful renewal within RenewDeadline of the start of the last successful one, or
// another holder in the Lease.
func (e *Elector) renew(ctx context.Context, lastRenew time.Time) {
	for {
		if !e.wait(ctx, e.cfg.RetryPeriod) {
			return
		}
		start := e.cfg.Clock.Now()
		deadline := lastRenew.Add(e.cfg.RenewDeadline)
		// The attempt's bound runs on real time: contexts do not know the injected clock.
		attemptCtx, cancel := context.WithTimeout(ctx, deadline.Sub(start))
		ok := e.tryAcquireOrRenew(attemptCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if ok {
			lastRenew = start
			continue
		}
		if deref(e.observed.HolderIdentity) != e.cfg.Identity {
			e.log.Info("leader lease taken by another holder", "holder", deref(e.observed.HolderIdentity))
			return
		}
		if !e.cfg.Clock.Now().Before(deadline) {
			e.log.Info("failed to renew lease within the renew deadline", "renewDeadline", e.cfg.RenewDeadline)
			return
		}
	}
}

// wait waits d on the clock; false when ctx ended first.
func (e *Elector) wait(ctx context.Context, d time.Duration) bool {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// tryAcquireOrRenew is client-go's step:
//  1. Read the Lease; create it held by this elector when there is none.
//  2. Record its spec with the time now when it differs from the one observed.
//  3. Stop when another holds it and it has not stayed unchanged for its lease duration.
//  4. Write it held by this elector (renewTime now; acquireTime and leaseTransitions kept
//     when renewing, set and incremented when taking over), guarded by the read
//     resourceVersion.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	now := e.cfg.Clock.Now()
	mnow := metav1.NewMicroTime(now)
	want := coordinationv1.LeaseSpec{
		HolderIdentity:       &e.cfg.Identity,
		LeaseDurationSeconds: ptr(int32(e.cfg.LeaseDuration / time.Second)),
		AcquireTime:          &mnow,
		RenewTime:            &mnow,
		LeaseTransitions:     ptr(int32(0)),
	}
	// 1. Read, or create.
	obj, err := e.cfg.Store.Get(ctx, e.res, e.cfg.Namespace, e.cfg.Name)
	if apierrors.IsNotFound(err) {
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name},
			Spec:       want,
		}
		r, err := e.cfg.Store.Create(ctx, e.res, e.cfg.Namespace, lease, registry.WriteOptions{})
		if err != nil {
			e.log.Debug("error initially creating leader election record", "err", err)
			return false
		}
		e.observe(r.Object, now)
		return true
	}
	if err != nil {
		e.log.Debug("error retrieving resource lock", "err", err)
		return false
	}
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		e.log.Error("leader election lock is not a Lease", "type", fmt.Sprintf("%T", obj))
		return false
	}
	old := lease.Spec
	// 2. Observe.
	if !apiequality.Semantic.DeepEqual(old, e.observed) {
		e.observed = *old.DeepCopy()
		e.observedAt = now
	}
	e.observedRV = lease.ResourceVersion
	// 3. Held by another and not expired on our clock.
	holder := deref(old.HolderIdentity)
	leading := holder == e.cfg.Identity
	if holder != "" && !leading {
		expiry := e.observedAt.Add(time.Duration(deref(old.LeaseDurationSeconds)) * time.Second)
		if now.Before(expiry) {
			return false
		}
	}
	// 4. Take or renew.
	if leading {
		want.AcquireTime = old.AcquireTime
		want.LeaseTransitions = ptr(deref(old.LeaseTransitions))
	} else {
		want.LeaseTransitions = ptr(deref(old.LeaseTransitions) + 1)
	}
	return e.write(ctx, lease.ResourceVersion, want, now)
}

// write puts spec into the Lease, guarded by resourceVersion rv, and observes the result.
func (e *Elector) write(ctx context.Context, rv string, spec coordinationv1.LeaseSpec, now time.Time) bool {
	r, err := e.cfg.Store.Update(ctx, e.res, e.cfg.Namespace, e.cfg.Name, "", func(cur runtime.Object) (runtime.Object, error) {
		l, ok := cur.(*coordinationv1.Lease)
		if !ok {
			return nil, fmt.Errorf("leader election lock is %T, not a Lease", cur)
		}
		l.ResourceVersion = rv
		l.Spec = *spec.DeepCopy()
		return l, nil
	}, registry.WriteOptions{})
	if err != nil {
		e.log.Debug("failed to update lease", "err", err)
		return false
	}
	e.observe(r.Object, now)
	return true
}

// observe records a Lease this elector wrote.
func (e *Elector) observe(obj runtime.Object, now time.Time) {
	if l, ok := obj.(*coordinationv1.Lease); ok {
		e.observed = *l.Spec.DeepCopy()
		e.observedRV = l.ResourceVersion
		e.observedAt = now
	}
}

// release writes the Lease with no holder and leaseDurationSeconds 1 (client-go's
// release), so that a candidate takes it at once. Only a leader releases, and only the
// Lease it observed holding.
func (e *Elector) release() {
	if deref(e.observed.HolderIdentity) != e.cfg.Identity {
		return
	}
	// Bounded by the renew deadline: after it, candidates may already be waiting out the lease.
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	now := e.cfg.Clock.Now()
	mnow := metav1.NewMicroTime(now)
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr(""),
		LeaseDurationSeconds: ptr(int32(1)),
		AcquireTime:          &mnow,
		RenewTime:            &mnow,
		LeaseTransitions:     ptr(deref(e.observed.LeaseTransitions)),
	}
	if !e.write(ctx, e.observedRV, spec, now) {
		e.log.Warn("failed to release the leader lease; another candidate takes it once it expires")
		return
	}
	e.log.Info("released the leader lease")
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
