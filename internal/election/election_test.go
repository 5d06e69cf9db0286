package election_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/election"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// Short durations for tests on the real clock.
const (
	lease = 2 * time.Second
	renew = 1500 * time.Millisecond
	retry = 250 * time.Millisecond
)

var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// cutStore fails every read of the lock's key while cut is set (a leader cut off from etcd).
type cutStore struct {
	storage.Store
	cut atomic.Bool
}

var errCut = errors.New("cut off")

func (c *cutStore) Get(ctx context.Context, key string) (storage.KV, error) {
	if c.cut.Load() && strings.HasSuffix(key, "/leases/kube-system/kube-controller-manager") {
		return storage.KV{}, errCut
	}
	return c.Store.Get(ctx, key)
}

// startStore starts a real quotad (without its own leader election) and returns its
// registry and the storage cutter in front of it.
func startStore(t *testing.T) (*registry.Store, *cutStore) {
	cs := &cutStore{}
	s := servertest.Start(t, func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store { cs.Store = st; return cs }
	})
	return s.Store, cs
}

// candidate is one elector under test and what it reported.
type candidate struct {
	el      *election.Elector
	leading chan bool // OnLeading's calls
	cancel  context.CancelFunc
	done    chan struct{}
}

// overlap counts candidates leading at once across a test; more than one fails it.
type overlap struct {
	t      *testing.T
	active atomic.Int32
}

func (o *overlap) onLeading(leading bool) {
	if leading {
		if n := o.active.Add(1); n > 1 {
			o.t.Errorf("%d candidates lead at once", n)
		}
	} else {
		o.active.Add(-1)
	}
}

func run(t *testing.T, store *registry.Store, id string, o *overlap, mutate func(*election.Config)) *candidate {
	t.Helper()
	c := &candidate{leading: make(chan bool, 16), done: make(chan struct{})}
	var leadRunning atomic.Bool
	cfg := election.Config{
		Store: store, Identity: id, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
		ReleaseOnCancel: true,
		Lead: func(ctx context.Context) {
			leadRunning.Store(true)
			<-ctx.Done()
			leadRunning.Store(false)
		},
		OnLeading: func(leading bool) {
			if !leading && leadRunning.Load() {
				t.Errorf("%s: OnLeading(false) while Lead still runs", id)
			}
			if o != nil {
				o.onLeading(leading)
			}
			c.leading <- leading
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	el, err := election.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.el = el
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { defer close(c.done); el.Run(ctx) }()
	t.Cleanup(c.stop)
	return c
}

// stop cancels the candidate and waits for Run to return.
func (c *candidate) stop() {
	c.cancel()
	<-c.done
}

// next waits for the candidate's next OnLeading call.
func (c *candidate) next(t *testing.T) bool {
	t.Helper()
	select {
	case l := <-c.leading:
		return l
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no leadership change within 60s", c.el.Identity())
		return false
	}
}

func getLease(t *testing.T, store *registry.Store) *coordinationv1.Lease {
	t.Helper()
	obj, err := store.Get(context.Background(), store.Catalogue().Get(leasesGVR), "kube-system", "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*coordinationv1.Lease)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 60s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}

func TestElectorAcquiresRenewsAndReleases(t *testing.T) {
	store, _ := startStore(t)
	c := run(t, store, "a", nil, nil)
	if !c.next(t) {
		t.Fatal("first call is not OnLeading(true)")
	}
	l := getLease(t, store)
	if deref(l.Spec.HolderIdentity) != "a" || deref(l.Spec.LeaseDurationSeconds) != 2 || deref(l.Spec.LeaseTransitions) != 0 {
		t.Fatalf("acquired lease: %+v", l.Spec)
	}
	acquired := l.Spec.AcquireTime.Time
	// The leader renews: renewTime moves, acquireTime and leaseTransitions stay.
	eventually(t, "a renewal", func() bool { return getLease(t, store).Spec.RenewTime.After(acquired) })
	l = getLease(t, store)
	if !l.Spec.AcquireTime.Time.Equal(acquired) || deref(l.Spec.LeaseTransitions) != 0 {
		t.Fatalf("renewed lease: %+v", l.Spec)
	}
	// A clean stop: Lead stopped, then the lease released.
	c.stop()
	if c.next(t) {
		t.Fatal("stop did not call OnLeading(false)")
	}
	l = getLease(t, store)
	if deref(l.Spec.HolderIdentity) != "" || deref(l.Spec.LeaseDurationSeconds) != 1 || deref(l.Spec.LeaseTransitions) != 0 {
		t.Fatalf("released lease: %+v", l.Spec)
	}
	// A new candidate takes the released lease at once.
	b := run(t, store, "b", nil, nil)
	if !b.next(t) {
		t.Fatal("b did not lead")
	}
	if l := getLease(t, store); deref(l.Spec.HolderIdentity) != "b" || deref(l.Spec.LeaseTransitions) != 1 {
		t.Fatalf("taken lease: %+v", l.Spec)
	}
}

// TestCandidateWaitsOnItsOwnClock drives a candidate with a fake clock: it takes a held
// lease only once it has seen the lease unchanged for leaseDurationSeconds on its clock.
func TestCandidateWaitsOnItsOwnClock(t *testing.T) {
	store, _ := startStore(t)
	ctx := context.Background()
	res := store.Catalogue().Get(leasesGVR)
	now := metav1.NewMicroTime(time.Now())
	other, d := "other", int32(15)
	_, err := store.Create(ctx, res, "kube-system", &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager", Namespace: "kube-system"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &other, LeaseDurationSeconds: &d, AcquireTime: &now, RenewTime: &now},
	}, registry.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := run(t, store, "a", nil, func(cfg *election.Config) {
		cfg.Clock = clk
		cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod = 0, 0, 0 // 15s, 10s, 2s
	})
	// step advances the fake clock and waits for the candidate's next attempt to finish.
	step := func(d time.Duration) {
		t.Helper()
		clk.Step(d)
		eventually(t, "the candidate waits again", func() bool { return clk.HasWaiters() || len(c.leading) > 0 })
	}
	notLeading := func(when string) {
		t.Helper()
		if len(c.leading) > 0 {
			t.Fatalf("%s: the candidate leads", when)
		}
		if h := deref(getLease(t, store).Spec.HolderIdentity); h != other {
			t.Fatalf("%s: holder %q", when, h)
		}
	}
	eventually(t, "the first attempt", clk.HasWaiters) // observed at T0
	notLeading("at T0")
	step(10 * time.Second)
	notLeading("at T0+10s")
	// The holder renews (on its own clock). The candidate observes it at T0+10 (its watch)
	// or at its next attempt after the next step, whichever comes first: either way it
	// restarts its wait then, so the record it saw at T0 expiring at T0+15 does not count.
	if _, err := store.Update(ctx, res, "kube-system", "kube-controller-manager", "", func(o runtime.Object) (runtime.Object, error) {
		l := o.(*coordinationv1.Lease)
		r := metav1.NewMicroTime(time.Now())
		l.Spec.RenewTime = &r
		return l, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	step(6 * time.Second) // T0+16: past T0+15, but the renewal was seen at T0+10 or T0+16
	notLeading("at T0+16s")
	step(16 * time.Second) // T0+32: unchanged for at least 16s
	if !c.next(t) {
		t.Fatal("no OnLeading(true)")
	}
	l := getLease(t, store)
	if deref(l.Spec.HolderIdentity) != "a" || deref(l.Spec.LeaseTransitions) != 1 || deref(l.Spec.LeaseDurationSeconds) != 15 ||
		!l.Spec.AcquireTime.Time.Equal(clk.Now()) {
		t.Fatalf("taken lease: %+v (clock %s)", l.Spec, clk.Now())
	}
}

func TestLeaderStopsWhenItCannotRenew(t *testing.T) {
	store, cut := startStore(t)
	c := run(t, store, "a", nil, nil)
	if !c.next(t) {
		t.Fatal("a did not lead")
	}
	cut.cut.Store(true)
	if c.next(t) {
		t.Fatal("a cut off from etcd kept leading")
	}
	// Still a candidate: once etcd answers again it leads again (its own lease: a renewal).
	cut.cut.Store(false)
	if !c.next(t) {
		t.Fatal("a did not lead again")
	}
	if l := getLease(t, store); deref(l.Spec.HolderIdentity) != "a" || deref(l.Spec.LeaseTransitions) != 0 {
		t.Fatalf("lease: %+v", l.Spec)
	}
}

func TestLeaderStopsWhenAnotherHoldsTheLease(t *testing.T) {
	store, _ := startStore(t)
	c := run(t, store, "a", nil, nil)
	if !c.next(t) {
		t.Fatal("a did not lead")
	}
	res := store.Catalogue().Get(leasesGVR)
	if _, err := store.Update(context.Background(), res, "kube-system", "kube-controller-manager", "", func(o runtime.Object) (runtime.Object, error) {
		l := o.(*coordinationv1.Lease)
		intruder := "intruder"
		l.Spec.HolderIdentity = &intruder
		return l, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if c.next(t) {
		t.Fatal("a kept leading")
	}
	// The intruder never renews: a takes the lease back once it expired.
	if !c.next(t) {
		t.Fatal("a did not lead again")
	}
	if l := getLease(t, store); deref(l.Spec.HolderIdentity) != "a" || deref(l.Spec.LeaseTransitions) != 1 {
		t.Fatalf("lease: %+v", l.Spec)
	}
}

// TestOneLeaderAmongCandidates runs three candidates; stopping each leader in turn hands
// the lease to another, and no two ever lead at once.
func TestOneLeaderAmongCandidates(t *testing.T) {
	store, _ := startStore(t)
	o := &overlap{t: t}
	cs := map[string]*candidate{}
	leader := make(chan string, 8)
	for _, id := range []string{"a", "b", "c"} {
		c := run(t, store, id, o, nil)
		cs[id] = c
		go func() {
			for l := range c.leading {
				if l {
					leader <- id
				}
			}
		}()
	}
	seen := map[string]bool{}
	for round := 0; round < 3; round++ {
		var id string
		select {
		case id = <-leader:
		case <-time.After(60 * time.Second):
			t.Fatalf("round %d: no leader within 60s", round)
		}
		if seen[id] {
			t.Fatalf("%s leads again after being stopped", id)
		}
		seen[id] = true
		if h := deref(getLease(t, store).Spec.HolderIdentity); h != id {
			t.Fatalf("round %d: %s leads, lease holder %q", round, id, h)
		}
		if tr := deref(getLease(t, store).Spec.LeaseTransitions); tr != int32(round) {
			t.Fatalf("round %d: leaseTransitions %d", round, tr)
		}
		cs[id].stop()
	}
}

func TestValidate(t *testing.T) {
	s := time.Second
	cases := []struct {
		lease, renew, retry time.Duration
		want                string
	}{
		{15 * s, 10 * s, 2 * s, ""},
		{2 * s, 1500 * time.Millisecond, 250 * time.Millisecond, ""},
		{10 * s, 10 * s, 2 * s, "LeaseDuration must be greater than RenewDeadline"},
		{15 * s, 2 * s, 2 * s, "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{0, 10 * s, 2 * s, "leaderElection.leaseDuration: Invalid value: \"0s\": must be greater than zero"},
		{15 * s, 10 * s, 0, "leaderElection.retryPeriod: Invalid value: \"0s\": must be greater than zero"},
		{15 * s, -1, 2 * s, "leaderElection.renewDeadline: Invalid value: \"-1ns\": must be greater than zero"},
	}
	for _, c := range cases {
		err := election.Validate(c.lease, c.renew, c.retry)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v/%v/%v: %v", c.lease, c.renew, c.retry, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, election.ErrInvalidConfig)):
			t.Errorf("%v/%v/%v: got %v, want %q", c.lease, c.renew, c.retry, err, c.want)
		}
	}
}
