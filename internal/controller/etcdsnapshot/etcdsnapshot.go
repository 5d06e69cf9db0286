package etcdsnapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/registry/validation"
)

// DefaultRetention is k3s's --etcd-snapshot-retention default.
const DefaultRetention = 5

// prefix starts every scheduled snapshot's name.
const prefix = "etcd-snapshot-"

// ErrInvalidConfig is wrapped by New's configuration errors.
var ErrInvalidConfig = errors.New("invalid etcd snapshot configuration")

// Config configures a Scheduler.
type Config struct {
	// Schedule is the cron schedule (five fields, @every, @daily…, TZ= prefix).
	Schedule string
	// Dir is where snapshots are saved (created 0700).
	Dir string
	// Node names this replica in snapshot names.
	Node string
	// Retention is how many of this node's scheduled snapshots are kept (at least 1).
	Retention int
	// Save saves a snapshot to path.
	Save func(ctx context.Context, path string) error
	// Clock (nil: the real clock) and Logger (nil: slog.Default()).
	Clock  clock.Clock
	Logger *slog.Logger
}

// Scheduler saves snapshots on a schedule.
type Scheduler struct {
	cfg   Config
	sched *validation.CronSchedule
}

// New checks cfg and returns its Scheduler.
func New(cfg Config) (*Scheduler, error) {
	sched, err := validation.ParseCron(cfg.Schedule)
	if err != nil {
		return nil, fmt.Errorf("%w: schedule %q: %v", ErrInvalidConfig, cfg.Schedule, err)
	}
	if cfg.Retention < 1 {
		return nil, fmt.Errorf("%w: retention %d must be at least 1", ErrInvalidConfig, cfg.Retention)
	}
	if cfg.Dir == "" || cfg.Node == "" || cfg.Save == nil {
		return nil, fmt.Errorf("%w: Dir, Node and Save are required", ErrInvalidConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{cfg: cfg, sched: sched}, nil
}

// Start saves a snapshot at each schedule time until ctx ends. A failed snapshot is
// logged and the next schedule time is waited for.
func (s *Scheduler) Start(ctx context.Context) error {
	for {
		now := s.cfg.Clock.Now()
		next := s.sched.Next(now)
		if next.IsZero() {
			return fmt.Errorf("schedule %q has no next time after %s", s.cfg.Schedule, now)
		}
		t := s.cfg.Clock.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
		if _, err := s.Snapshot(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("scheduled etcd snapshot failed", "err", err)
		}
	}
}

// Snapshot saves one snapshot now and prunes beyond the retention; it returns the
// snapshot's path.
func (s *Scheduler) Snapshot(ctx context.Context) (string, error) {
	if err := os.MkdirAll(s.cfg.Dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(s.cfg.Dir, Name(s.cfg.Node, s.cfg.Clock.Now()))
	if err := s.cfg.Save(ctx, path); err != nil {
		return "", err
	}
	s.cfg.Logger.Info("saved etcd snapshot", "path", path)
	removed, err := Prune(s.cfg.Dir, s.cfg.Node, s.cfg.Retention)
	for _, r := range removed {
		s.cfg.Logger.Info("removed etcd snapshot beyond retention", "path", r, "retention", s.cfg.Retention)
	}
	if err != nil {
		return path, fmt.Errorf("pruning etcd snapshots: %w", err)
	}
	return path, nil
}

// Name is the name of node's scheduled snapshot taken at t: etcd-snapshot-<node>-<unix seconds>.
func Name(node string, t time.Time) string {
	return prefix + node + "-" + strconv.FormatInt(t.Unix(), 10)
}

// Prune deletes node's scheduled snapshots in dir beyond the newest retention (by the time
// in their names) and returns the paths deleted.
func Prune(dir, node string, retention int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type snap struct {
		name string
		at   int64
	}
	var snaps []snap
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if at, ok := parseName(e.Name(), node); ok {
			snaps = append(snaps, snap{e.Name(), at})
		}
	}
	if len(snaps) <= retention {
		return nil, nil
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].at > snaps[j].at })
	var removed []string
	for _, sn := range snaps[retention:] {
		p := filepath.Join(dir, sn.name)
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// parseName returns the time of a scheduled snapshot name of node.
func parseName(name, node string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix+node+"-")
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	at, err := strconv.ParseInt(rest, 10, 64)
	return at, err == nil
}
