package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// leadership records every replica's leading intervals (from OnLeading) and fails the test
// when two replicas lead at once.
type leadership struct {
	t       *testing.T
	mu      sync.Mutex
	leading map[int]time.Time // replica → start of its open interval
	done    []interval
	changed chan struct{}
}

type interval struct {
	replica    int
	start, end time.Time
}

func newLeadership(t *testing.T) *leadership {
	return &leadership{t: t, leading: map[int]time.Time{}, changed: make(chan struct{}, 64)}
}

// option is the configuration of replica i: leader election with durations lease, renew
// and retry (zero: the defaults) and the observer.
func (l *leadership) option(i int, lease, renew, retry time.Duration, release bool) servertest.Option {
	return func(c *server.Config) {
		c.LeaderElect = true
		c.LeaderElectLeaseDuration, c.LeaderElectRenewDeadline, c.LeaderElectRetryPeriod = lease, renew, retry
		c.LeaderElectNoRelease = !release
		c.OnLeading = func(started bool) { l.observe(i, started) }
	}
}

func (l *leadership) observe(i int, started bool) {
	now := time.Now()
	l.mu.Lock()
	if started {
		for j := range l.leading {
			l.t.Errorf("replica %d starts leading while replica %d leads", i, j)
		}
		l.leading[i] = now
	} else {
		l.done = append(l.done, interval{i, l.leading[i], now})
		delete(l.leading, i)
	}
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// waitLeader waits until some replica other than not leads and returns it with the time.
func (l *leadership) waitLeader(not int) (int, time.Time) {
	l.t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		l.mu.Lock()
		for i, at := range l.leading {
			if i != not {
				l.mu.Unlock()
				return i, at
			}
		}
		l.mu.Unlock()
		select {
		case <-l.changed:
		case <-deadline:
			l.t.Fatal("no replica leads within 2 minutes")
		}
	}
}

// checkNoOverlap fails the test when two recorded intervals overlap.
func (l *leadership) checkNoOverlap() {
	l.mu.Lock()
	defer l.mu.Unlock()
	all := append([]interval(nil), l.done...)
	for i, at := range l.leading {
		all = append(all, interval{i, at, time.Now()})
	}
	for a := range all {
		for b := a + 1; b < len(all); b++ {
			x, y := all[a], all[b]
			if x.start.Before(y.end) && y.start.Before(x.end) {
				l.t.Errorf("leading intervals overlap: replica %d %s–%s and replica %d %s–%s",
					x.replica, x.start.Format(time.StampMicro), x.end.Format(time.StampMicro),
					y.replica, y.start.Format(time.StampMicro), y.end.Format(time.StampMicro))
			}
		}
	}
	l.t.Logf("leading intervals: %d", len(all))
}

// TestLeaderElectionFailover runs three replicas on one etcd with short leases: exactly one
// runs kube-controller-manager's controllers, the Lease and the metric name it, and when
// it stops (releasing the Lease) another takes over and its controllers really run.
func TestLeaderElectionFailover(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	l := newLeadership(t)
	t.Cleanup(l.checkNoOverlap)
	var replicas []*servertest.Server
	for i := range 3 {
		replicas = append(replicas, servertest.Start(t, servertest.WithEtcd(etcd),
			l.option(i, 2*time.Second, 1500*time.Millisecond, 250*time.Millisecond, true)))
	}
	ctx := ctxT(t)

	// 1. One leader; the Lease names it; the metric says 1 on it and 0 elsewhere.
	first, _ := l.waitLeader(-1)
	lease, err := replicas[0].Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if !strings.Contains(holder, "_") || ptr.Deref(lease.Spec.LeaseDurationSeconds, 0) != 2 {
		t.Fatalf("lease spec: %+v", lease.Spec)
	}
	t.Logf("replica %d leads as %s", first, holder)
	waitForMetrics(t, replicas[first], `leader_election_master_status{name="kube-controller-manager"} 1`)
	waitForMetrics(t, replicas[(first+1)%3], `leader_election_master_status{name="kube-controller-manager"} 0`)

	// 2. Stop the leader (it releases the Lease): another takes over.
	stopped := time.Now()
	replicas[first].Stop()
	second, at := l.waitLeader(first)
	t.Logf("replica %d took over %v after replica %d was stopped (released lease)", second, at.Sub(stopped), first)
	lease, err = replicas[second].Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") == holder || ptr.Deref(lease.Spec.LeaseTransitions, 0) < 1 {
		t.Fatalf("lease after failover: %+v", lease.Spec)
	}

	// 3. The new leader's controllers run: a ReplicaSet created after the failover, through
	// the replica that does not lead, gets its pods.
	other := replicas[3-first-second]
	mkNamespace(t, other, "failover")
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "failover"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: wlTemplate("web"),
		},
	}
	if _, err := other.Client.AppsV1().ReplicaSets("failover").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "3 pods of the ReplicaSet", func(ctx context.Context) (bool, error) {
		n, err := wlCountPods(ctx, other, "failover", "app=web")
		return n == 3, err
	})
}

// TestLeaderTakeoverWithoutRelease measures the takeover with kube-controller-manager's
// default durations (15s lease, 10s renew deadline, 2s retry) when the leader stops without
// releasing the Lease, as a killed process: the candidate waits until it has seen the
// Lease unchanged for its duration. It reports the time; it asserts none.
func TestLeaderTakeoverWithoutRelease(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	l := newLeadership(t)
	t.Cleanup(l.checkNoOverlap)
	var replicas []*servertest.Server
	for i := range 2 {
		replicas = append(replicas, servertest.Start(t, servertest.WithEtcd(etcd), l.option(i, 0, 0, 0, false)))
	}
	first, _ := l.waitLeader(-1)
	stopped := time.Now()
	replicas[first].Stop()
	second, at := l.waitLeader(first)
	msg := fmt.Sprintf("takeover without release (lease 15s, renew 10s, retry 2s): replica %d led %v after replica %d stopped", second, at.Sub(stopped).Round(time.Millisecond), first)
	t.Log(msg)
}

// TestScheduledSnapshotsOnLeaderOnly runs two replicas on one etcd with a snapshot every
// second and retention 2: the leader saves snapshots and keeps two; the other saves none.
func TestScheduledSnapshotsOnLeaderOnly(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	l := newLeadership(t)
	t.Cleanup(l.checkNoOverlap)
	var dirs []string
	for i := range 2 {
		dir := filepath.Join(t.TempDir(), "snapshots")
		dirs = append(dirs, dir)
		servertest.Start(t, servertest.WithEtcd(etcd), l.option(i, 2*time.Second, 1500*time.Millisecond, 250*time.Millisecond, true),
			func(c *server.Config) {
				c.EtcdSnapshotScheduleCron, c.EtcdSnapshotRetention, c.EtcdSnapshotDir = "@every 1s", 2, dir
			})
	}
	leader, _ := l.waitLeader(-1)
	// Three snapshots seen in turn (names carry the second they were taken), two kept.
	seen := map[string]bool{}
	waitFor(t, func() bool {
		entries, _ := os.ReadDir(dirs[leader])
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "etcd-snapshot-") && !strings.HasSuffix(e.Name(), ".part") {
				seen[e.Name()] = true
			}
		}
		return len(seen) >= 3
	})
	waitFor(t, func() bool {
		entries, _ := os.ReadDir(dirs[leader])
		n := 0
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".part") {
				n++
			}
		}
		return n == 2
	})
	if l.leaderNow() != leader {
		t.Skip("leadership moved during the test; the check below needs a stable leader")
	}
	if entries, err := os.ReadDir(dirs[1-leader]); err == nil && len(entries) > 0 {
		t.Errorf("the replica that does not lead saved snapshots: %v", entries)
	}
}

// leaderNow is the replica leading now (-1: none).
func (l *leadership) leaderNow() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.leading {
		return i
	}
	return -1
}

// TestLeaderRestartReclaimsOwnLease: a replica that stopped without releasing the Lease (as
// after a crash) and restarts on the same data dir holds the same identity, finds itself
// the holder and renews its own Lease (same identity, no transition) instead of taking it
// over after waiting a lease duration for its own dead predecessor.
func TestLeaderRestartReclaimsOwnLease(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	l := newLeadership(t)
	t.Cleanup(l.checkNoOverlap)
	dir := t.TempDir()
	first := servertest.Start(t, servertest.WithEtcd(etcd), servertest.WithDataDir(dir), l.option(0, 0, 0, 0, false))
	l.waitLeader(-1)
	ctx := context.Background()
	before, err := first.Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first.Stop()
	left, err := first.Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err == nil && ptr.Deref(left.Spec.HolderIdentity, "") != ptr.Deref(before.Spec.HolderIdentity, "") {
		t.Fatalf("the stopped replica released or lost its Lease: holder %q", ptr.Deref(left.Spec.HolderIdentity, ""))
	}
	second := servertest.Start(t, servertest.WithEtcd(etcd), servertest.WithDataDir(dir), l.option(1, 0, 0, 0, false))
	_, at := l.waitLeader(0)
	after, err := second.Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ptr.Deref(after.Spec.HolderIdentity, ""), ptr.Deref(before.Spec.HolderIdentity, ""); got != want {
		t.Fatalf("restarted replica's identity %q, want the data dir's %q", got, want)
	}
	if ptr.Deref(after.Spec.LeaseTransitions, 0) != ptr.Deref(before.Spec.LeaseTransitions, 0) {
		t.Errorf("leaseTransitions %d → %d: the restarted replica took the Lease over instead of renewing its own",
			ptr.Deref(before.Spec.LeaseTransitions, 0), ptr.Deref(after.Spec.LeaseTransitions, 0))
	}
	t.Logf("restarted replica led %v after its old Lease's last renewal seen here (lease 15s)", at.Sub(before.Spec.RenewTime.Time).Round(time.Millisecond))
}

// TestLeaderRestartsControllersAfterLosingTheLease: a replica whose Lease is taken by
// another holder stops its controllers, keeps serving, takes the Lease back once that
// holder lets it expire, and runs freshly constructed controllers that work.
func TestLeaderRestartsControllersAfterLosingTheLease(t *testing.T) {
	t.Parallel()
	l := newLeadership(t)
	s := servertest.Start(t, l.option(0, 2*time.Second, 1500*time.Millisecond, 250*time.Millisecond, true))
	ctx := ctxT(t)
	l.waitLeader(-1)
	// 1. Another holder takes the Lease (and never renews it).
	leases := s.Client.CoordinationV1().Leases("kube-system")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease := getLeaseT(ctx, t, s)
		lease.Spec.HolderIdentity = ptr.To("intruder")
		_, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return l.leaderNow() == -1 })
	// 2. The API keeps serving meanwhile; the replica leads again once the Lease expired.
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "again"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.waitLeader(-1)
	l.mu.Lock()
	intervals := len(l.done)
	l.mu.Unlock()
	if intervals != 1 {
		t.Fatalf("closed leading intervals: %d, want 1", intervals)
	}
	// 3. The new controllers run: the namespace controller publishes kube-root-ca.crt, the
	// ReplicaSet controller creates pods.
	wlEventually(t, "kube-root-ca.crt in the namespace created while no controller ran", func(ctx context.Context) (bool, error) {
		_, err := s.Client.CoreV1().ConfigMaps("again").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "again"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: wlTemplate("web"),
		},
	}
	if _, err := s.Client.AppsV1().ReplicaSets("again").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "2 pods of the ReplicaSet", func(ctx context.Context) (bool, error) {
		n, err := wlCountPods(ctx, s, "again", "app=web")
		return n == 2, err
	})
	if tr := ptr.Deref(getLeaseT(ctx, t, s).Spec.LeaseTransitions, 0); tr != 1 {
		t.Errorf("leaseTransitions %d, want 1 (the replica took the Lease back from the intruder)", tr)
	}
}

func getLeaseT(ctx context.Context, t *testing.T, s *servertest.Server) *coordinationv1.Lease {
	t.Helper()
	l, err := s.Client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
