package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotad/quotad/internal/election"
	"github.com/quotad/quotad/internal/registry"
)

// leaderElectionName is the name label of leader_election_master_status and the Lease's
// name, as kube-controller-manager's.
const leaderElectionName = election.DefaultName

// validateLeaderElection checks --leader-elect-* as kube-controller-manager does (only
// with --leader-elect).
func validateLeaderElection(cfg Config) error {
	if !cfg.LeaderElect {
		return nil
	}
	lease, renew, retry := leaderElectionDurations(cfg)
	return election.Validate(lease, renew, retry)
}

// leaderElectionDurations are the configured durations, zero ones replaced by
// kube-controller-manager's defaults.
func leaderElectionDurations(cfg Config) (lease, renew, retry time.Duration) {
	lease, renew, retry = cfg.LeaderElectLeaseDuration, cfg.LeaderElectRenewDeadline, cfg.LeaderElectRetryPeriod
	if lease == 0 {
		lease = election.DefaultLeaseDuration
	}
	if renew == 0 {
		renew = election.DefaultRenewDeadline
	}
	if retry == 0 {
		retry = election.DefaultRetryPeriod
	}
	return lease, renew, retry
}

// newLeaderStatus is upstream's leader_election_master_status gauge.
func newLeaderStatus() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})
}

// startLeading runs lead, the leader-only work, in a goroutine counted by wg: at once
// without --leader-elect, otherwise whenever this replica holds the Lease (lead is
// cancelled, and waited for, when the Lease is lost; the replica then campaigns again).
// cfg.OnLeading is told when lead starts and after it returned.
func startLeading(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger, cfg Config, m *metrics, store *registry.Store, lead func(context.Context)) error {
	onLeading := func(leading bool) {
		if cfg.OnLeading != nil {
			cfg.OnLeading(leading)
		}
	}
	if !cfg.LeaderElect {
		wg.Add(1)
		go func() {
			defer wg.Done()
			onLeading(true)
			lead(ctx)
			onLeading(false)
		}()
		return nil
	}
	status := m.leaderStatus.WithLabelValues(leaderElectionName)
	status.Set(0)
	lease, renew, retry := leaderElectionDurations(cfg)
	el, err := election.New(election.Config{
		Store: store, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
		ReleaseOnCancel: !cfg.LeaderElectNoRelease,
		Lead:            lead,
		OnLeading: func(leading bool) {
			if leading {
				status.Set(1)
			} else {
				status.Set(0)
			}
			onLeading(leading)
		},
		Logger: log.With("component", "leader-election"),
	})
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		el.Run(ctx)
	}()
	return nil
}
