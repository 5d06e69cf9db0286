package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/uuid"

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
	identity, err := leaderIdentity(cfg.DataDir)
	if err != nil {
		return err
	}
	el, err := election.New(election.Config{
		Identity: identity,
		Store:    store, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
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

// identityFile keeps, in the data dir, the second half of this replica's holder identity.
const identityFile = "leader-identity"

// leaderIdentity is kube-controller-manager's "<hostname>_<uuid>", with the uuid made once
// per data dir and kept in it (0600). A replica restarted after a crash finds itself the
// holder of the Lease and renews it at once, instead of waiting a lease duration for its
// dead predecessor (which ran on the same data dir, so no other process can be running it:
// the data dir is locked while quotad runs).
func leaderIdentity(dataDir string) (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	p := filepath.Join(dataDir, identityFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		b = []byte(uuid.NewUUID())
		err = writeFileAtomic(p, b, 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("leader election identity: %s is empty", p)
	}
	return host + "_" + id, nil
}
