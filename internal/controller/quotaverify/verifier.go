package quotaverify

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Observer is told about each repaired drift. An Observer that is also a
// controller.PanicObserver is told about recovered panics too.
type Observer interface {
	Repaired(namespace, name string)
}

// Checker recomputes quotas from storage and repairs drifted ones (*registry.Store).
type Checker interface {
	CheckQuotas(ctx context.Context, ns string) ([]registry.QuotaCheck, error)
	RepairQuota(ctx context.Context, c registry.QuotaCheck) error
	CheckClusterQuotas(ctx context.Context) ([]registry.ClusterQuotaCheck, error)
	RepairClusterQuota(ctx context.Context, c registry.ClusterQuotaCheck) error
}

// Verifier periodically recomputes every quota and repairs drift.
type Verifier struct {
	store    Checker
	period   time.Duration
	log      *slog.Logger
	observer Observer
	loop     *controller.Loop
	clock    clock.WithTicker
}

// New returns a verifier running every period (<= 0 disables the periodic run) on the
// real clock.
func New(store Checker, period time.Duration, log *slog.Logger, observer Observer) *Verifier {
	return NewWithClock(store, period, log, observer, clock.RealClock{})
}

// NewWithClock is New with the clock driving the period injected.
func NewWithClock(store Checker, period time.Duration, log *slog.Logger, observer Observer, clk clock.WithTicker) *Verifier {
	if log == nil {
		log = slog.Default()
	}
	panics, _ := observer.(controller.PanicObserver)
	return &Verifier{store: store, period: period, log: log, observer: observer, clock: clk,
		loop: controller.NewLoop("resourcequota", nil, log, panics, clk)}
}

// Start runs the verifier until ctx ends.
func (v *Verifier) Start(ctx context.Context) error {
	if v.period <= 0 {
		<-ctx.Done()
		return nil
	}
	t := v.clock.NewTicker(v.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			// A panic is recovered (logged and counted); the next period tries again.
			v.loop.Guard("verify", func() {
				if _, err := v.VerifyAll(ctx); err != nil && ctx.Err() == nil {
					v.log.Warn("quota verification failed", "err", err)
				}
			})
		}
	}
}

// VerifyAll checks every quota once and repairs drift; it returns how many were repaired.
func (v *Verifier) VerifyAll(ctx context.Context) (int, error) {
	checks, err := v.store.CheckQuotas(ctx, "")
	if err != nil {
		return 0, err
	}
	repaired := 0
	for i := range checks {
		c := &checks[i]
		if !c.Drifted() {
			continue
		}
		// 1. Re-check the namespace alone: the drift may be a write that raced the first read.
		for attempt := 0; attempt < 5; attempt++ {
			fresh, err := v.store.CheckQuotas(ctx, c.Namespace)
			if err != nil {
				return repaired, err
			}
			var cur *registry.QuotaCheck
			for j := range fresh {
				if fresh[j].Name == c.Name {
					cur = &fresh[j]
				}
			}
			if cur == nil || !cur.Drifted() {
				break
			}
			// 2. Repair with a guarded write; a conflict means something changed: check again.
			if err := v.store.RepairQuota(ctx, *cur); err != nil {
				continue
			}
			v.log.Warn("repaired resource quota drift", "quota", cur.String())
			if v.observer != nil {
				v.observer.Repaired(cur.Namespace, cur.Name)
			}
			repaired++
			break
		}
	}
	n, err := v.verifyClusterQuotas(ctx)
	return repaired + n, err
}

// verifyClusterQuotas checks every cluster quota once and repairs drift (reported to the
// observer with an empty namespace).
func (v *Verifier) verifyClusterQuotas(ctx context.Context) (int, error) {
	checks, err := v.store.CheckClusterQuotas(ctx)
	if err != nil {
		return 0, err
	}
	repaired := 0
	for i := range checks {
		if !checks[i].Drifted() {
			continue
		}
		// 1. Check again: the drift may be a write that raced the first read. 2. Repair
		// with a guarded write; a conflict means something changed: check again.
		for attempt := 0; attempt < 5; attempt++ {
			fresh, err := v.store.CheckClusterQuotas(ctx)
			if err != nil {
				return repaired, err
			}
			var cur *registry.ClusterQuotaCheck
			for j := range fresh {
				if fresh[j].Name == checks[i].Name {
					cur = &fresh[j]
				}
			}
			if cur == nil || !cur.Drifted() {
				break
			}
			if err := v.store.RepairClusterQuota(ctx, *cur); err != nil {
				continue
			}
			v.log.Warn("repaired cluster resource quota drift", "quota", cur.String())
			if v.observer != nil {
				v.observer.Repaired("", cur.Name)
			}
			repaired++
			break
		}
	}
	return repaired, nil
}
