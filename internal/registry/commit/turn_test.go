package commit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/storage"
)

// Replicas taking turns (turn.go), tested with engines sharing one in-memory store: each
// engine is a replica, and a hook on a replica's transactions lets the others commit
// before them, as a replica whose pipeline keeps committing does.

// replicaStore is one replica's view of the shared store.
type replicaStore struct {
	*memStore
	// beforeTxn, when set, runs before each of the replica's transactions (outside the
	// store's lock): it may commit other replicas' writes, or fail the transaction.
	beforeTxn func(storage.Txn) error
	// conflicts counts the replica's transactions that failed their guards.
	conflicts atomic.Int32
}

func (r *replicaStore) Txn(ctx context.Context, txn storage.Txn) (storage.TxnResult, error) {
	if r.beforeTxn != nil {
		if err := r.beforeTxn(txn); err != nil {
			return storage.TxnResult{}, err
		}
	}
	res, err := r.memStore.Txn(ctx, txn)
	if errors.Is(err, storage.ErrConflict) {
		r.conflicts.Add(1)
	}
	return res, err
}

func (r *replicaStore) Txns(ctx context.Context, txns []storage.Txn) ([]storage.TxnOutcome, error) {
	out := make([]storage.TxnOutcome, len(txns))
	for i, txn := range txns {
		out[i].TxnResult, out[i].Err = r.Txn(ctx, txn)
	}
	return out, nil
}

// turnHarness is a namespace with a quota in a store shared by replicas.
type turnHarness struct {
	*planEnv
	store *memStore
	names atomic.Int32
}

func newTurnHarness(t *testing.T, hard ...string) *turnHarness {
	e := newPlanEnv(t)
	e.commitSolo(e.createQuota(newQuota("q", hardOf(hard...))))
	return &turnHarness{planEnv: e, store: newMemStore(e.kv)}
}

// replica starts an engine named name on the store (clk nil: the real clock).
func (h *turnHarness) replica(name string, clk clock.Clock) (*Engine, *replicaStore) {
	rs := &replicaStore{memStore: h.store}
	e := New(Config{Storage: rs, Env: testEnv{}, Quota: h.acct, Replica: name, Clock: clk, MaxRetries: 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return e, rs
}

// create commits a new pod through a replica and returns its key.
func (h *turnHarness) create(ctx context.Context, r *Engine) (string, error) {
	w := h.createPod(newPod(fmt.Sprint("p", h.names.Add(1)), "10m", ""))
	_, err := r.Commit(ctx, w)
	return w.Key, err
}

// interfering makes a hook that commits a pod through other before each of a replica's
// transactions storing pods without a turn: that replica fails its guards until it holds
// the namespace's turn. It counts the writes it committed.
func (h *turnHarness) interfering(other *Engine, n *atomic.Int32) func(storage.Txn) error {
	return func(txn storage.Txn) error {
		if !turnGuarded(txn) || turnHeld(txn) || !h.storesPod(txn) {
			return nil
		}
		if _, err := h.create(context.Background(), other); err != nil {
			h.t.Errorf("interfering write: %v", err)
		}
		n.Add(1)
		return nil
	}
}

// turnGuard returns the revision a pipelined transaction requires of the namespace's turn
// key, and whether it guards it so.
func turnGuard(txn storage.Txn) (int64, bool) {
	for _, c := range txn.Compares {
		if c.Key == TurnKey(planNS) {
			return c.Revision, c.Target == storage.ModRevisionEquals
		}
	}
	return 0, false
}

// turnGuarded reports whether a transaction guards the namespace's turn: by its key's
// revision (pipelined), or under the quota-set prefix at the read revision (solo).
func turnGuarded(txn storage.Txn) bool {
	if _, ok := turnGuard(txn); ok {
		return true
	}
	return slices.ContainsFunc(txn.Compares, func(c storage.Compare) bool {
		return c.Key == QuotaSetKey(planNS) && c.Target == storage.RangeNotModifiedAfter
	})
}

// turnHeld reports whether a transaction commits holding the namespace's turn: it deletes
// the turn key.
func turnHeld(txn storage.Txn) bool {
	return slices.ContainsFunc(txn.Ops, func(op storage.Op) bool { return op.Type == storage.OpDelete && op.Key == TurnKey(planNS) })
}

// turnClaim reports whether a transaction is a claim of the namespace's turn.
func turnClaim(txn storage.Txn) bool {
	return len(txn.Ops) == 1 && txn.Ops[0].Type == storage.OpPut && txn.Ops[0].Key == TurnKey(planNS)
}

func (h *turnHarness) storesPod(txn storage.Txn) bool {
	for _, op := range txn.Ops {
		if op.Type == storage.OpPut && strings.HasPrefix(op.Key, h.pods().KeyPrefix(planNS)) {
			return true
		}
	}
	return false
}

// claims returns the holders of the turns claimed, in order. Call it, and committedWith,
// once the replicas are idle.
func (h *turnHarness) claims() []string {
	var out []string
	for _, r := range h.kv.log {
		for _, op := range r.ops {
			if op.Key == TurnKey(planNS) && op.Type == storage.OpPut {
				var v turnValue
				if err := json.Unmarshal(op.Value, &v); err != nil {
					h.t.Fatal(err)
				}
				out = append(out, v.Holder)
			}
		}
	}
	return out
}

// committedWith reports whether key was stored, and whether the turn was deleted in the
// same revision.
func (h *turnHarness) committedWith(key string) (stored, released bool) {
	for _, r := range h.kv.log {
		has := func(typ storage.OpType, k string) bool {
			for _, op := range r.ops {
				if op.Type == typ && op.Key == k {
					return true
				}
			}
			return false
		}
		if has(storage.OpPut, key) {
			return true, has(storage.OpDelete, TurnKey(planNS))
		}
	}
	return false, false
}

// checkTurnFree fails unless the namespace's turn key is absent and I1 holds.
func (h *turnHarness) checkTurnFree(context string) {
	h.t.Helper()
	if kv, ok := h.kv.keys[TurnKey(planNS)]; ok {
		h.t.Errorf("%s: turn left behind: %s", context, kv.Value)
	}
	h.checkI1(context)
}

// TestTurnStarvedReplicaClaims: a replica whose transactions keep losing to another
// replica's commits claims the namespace's turn after turnAfter failures and commits
// with it, releasing it in the same transaction; the other replica commits afterwards.
func TestTurnStarvedReplicaClaims(t *testing.T) {
	h := newTurnHarness(t, "pods", "100")
	a, _ := h.replica("a", nil)
	b, bs := h.replica("b", nil)
	var interfered atomic.Int32
	bs.beforeTxn = h.interfering(a, &interfered)

	key, err := h.create(context.Background(), b)
	if err != nil {
		t.Fatalf("starved replica's write: %v", err)
	}
	if n := interfered.Load(); n != turnAfter {
		t.Errorf("other replica committed first %d times, want turnAfter (%d)", n, turnAfter)
	}
	if got := h.claims(); fmt.Sprint(got) != "[b]" {
		t.Errorf("turns claimed by %v, want [b]", got)
	}
	if stored, released := h.committedWith(key); !stored || !released {
		t.Errorf("claimant's write stored %v, turn released with it %v", stored, released)
	}
	bs.beforeTxn = nil
	if _, err := h.create(context.Background(), a); err != nil {
		t.Fatalf("other replica after the turn: %v", err)
	}
	h.checkTurnFree("after the turn")
}

// TestTurnOthersWait: a replica that finds another's turn waits for its release instead of
// failing its guards, then commits on the state the claimant left.
func TestTurnOthersWait(t *testing.T) {
	h := newTurnHarness(t, "pods", "100")
	a, as := h.replica("a", nil)
	b, bs := h.replica("b", nil)
	c, _ := h.replica("c", nil)
	watching := make(chan struct{}, 1)
	h.store.onWatch = func(prefix string) {
		if prefix == TurnKey(planNS) {
			watching <- struct{}{}
		}
	}
	var interfered atomic.Int32
	interfere := h.interfering(c, &interfered)
	type result struct {
		key string
		err error
	}
	waiter := make(chan result, 1)
	var once sync.Once
	bs.beforeTxn = func(txn storage.Txn) error {
		if turnHeld(txn) && h.storesPod(txn) {
			// b holds the turn: a writes now, and must wait for b's commit.
			once.Do(func() {
				go func() {
					key, err := h.create(context.Background(), a)
					waiter <- result{key, err}
				}()
				<-watching
			})
			return nil
		}
		return interfere(txn)
	}
	bKey, err := h.create(context.Background(), b)
	if err != nil {
		t.Fatalf("claimant's write: %v", err)
	}
	r := <-waiter
	if r.err != nil {
		t.Fatalf("waiting replica's write: %v", r.err)
	}
	if n := as.conflicts.Load(); n != 0 {
		t.Errorf("waiting replica failed its guards %d times, want 0", n)
	}
	if h.kv.keys[r.key].ModRevision <= h.kv.keys[bKey].ModRevision {
		t.Errorf("waiting replica committed at %d, before the claimant's %d", h.kv.keys[r.key].ModRevision, h.kv.keys[bKey].ModRevision)
	}
	h.checkTurnFree("after the wait")
}

// TestTurnTakenOver: a turn its claimant left (a crash) is taken over once it has stood
// unchanged for turnDuration on the waiter's clock; one holding the replica's own identity
// (its predecessor's, on the same data dir) at once.
func TestTurnTakenOver(t *testing.T) {
	for _, c := range []struct {
		name   string
		holder string
		waits  bool
	}{
		{"another replica's expires", "crashed", true},
		{"its own predecessor's at once", "b", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTurnHarness(t, "pods", "100")
			clk := clocktesting.NewFakeClock(time.Unix(1_000_000_000, 0))
			b, _ := h.replica("b", clk)
			if _, err := h.store.Txn(context.Background(), storageTxnPut(TurnKey(planNS), claimValue(c.holder))); err != nil {
				t.Fatal(err)
			}
			watching := make(chan struct{}, 1)
			h.store.onWatch = func(string) {
				select {
				case watching <- struct{}{}:
				default:
				}
			}
			done := make(chan error, 1)
			var key string
			go func() {
				var err error
				key, err = h.create(context.Background(), b)
				done <- err
			}()
			if c.waits {
				<-watching // and its timer is set
				select {
				case err := <-done:
					t.Fatalf("write done (%v) before the turn expired", err)
				default:
				}
				clk.Step(turnDuration)
			}
			if err := <-done; err != nil {
				t.Fatalf("write: %v", err)
			}
			if got := h.claims(); fmt.Sprint(got) != fmt.Sprintf("[%s b]", c.holder) {
				t.Errorf("turns claimed by %v, want the left one, then b's", got)
			}
			if stored, released := h.committedWith(key); !stored || !released {
				t.Errorf("write stored %v, turn released with it %v", stored, released)
			}
			if !c.waits && len(watching) > 0 {
				t.Error("waited for its own predecessor's turn")
			}
			h.checkTurnFree(c.name)
		})
	}
}

// TestTurnReleased: a claimant whose writes settle without committing them releases the
// turn: refused by quota (in the transaction confirming the refusal), its request
// cancelled, or its transaction failing.
func TestTurnReleased(t *testing.T) {
	for _, c := range []struct {
		name string
		// hard is the quota's pods; holding, when set, runs instead of the claimant's
		// transaction holding the turn; onClaim cancels the claimant's request as it
		// claims; check accepts the claimant's error.
		hard    string
		holding func(storage.Txn) error
		onClaim bool
		check   func(err error) bool
	}{
		{name: "refused", hard: "2", check: apierrors.IsForbidden},
		{name: "cancelled", hard: "100", onClaim: true, check: apierrors.IsTimeout},
		{name: "failed", hard: "100", holding: func(storage.Txn) error { return errors.New("etcd unavailable") }, check: apierrors.IsInternalError},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTurnHarness(t, "pods", c.hard)
			a, _ := h.replica("a", nil)
			b, bs := h.replica("b", nil)
			var interfered atomic.Int32
			interfere := h.interfering(a, &interfered)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			bs.beforeTxn = func(txn storage.Txn) error {
				switch {
				case c.onClaim && turnClaim(txn):
					cancel()
				case turnHeld(txn) && h.storesPod(txn) && c.holding != nil:
					return c.holding(txn)
				}
				return interfere(txn)
			}
			key, err := h.create(ctx, b)
			if !c.check(err) {
				t.Fatalf("claimant's write: %v", err)
			}
			if got := h.claims(); fmt.Sprint(got) != "[b]" {
				t.Errorf("turns claimed by %v, want [b]", got)
			}
			if _, ok := h.kv.keys[key]; ok {
				t.Error("the claimant's write was stored")
			}
			h.checkTurnFree(c.name)
		})
	}
}

// TestTurnContention: replicas writing to one namespace concurrently, without help: every
// write commits (none refused for contention), usage is exact, and no turn is left.
func TestTurnContention(t *testing.T) {
	h := newTurnHarness(t, "pods", "1000")
	const replicas, writers, each = 3, 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, replicas*writers*each)
	for i := 0; i < replicas; i++ {
		r, _ := h.replica(fmt.Sprint("r", i), nil)
		for j := 0; j < writers; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < each; k++ {
					if _, err := h.create(context.Background(), r); err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write: %v", err)
	}
	if got, want := len(h.kv.list(h.pods().KeyPrefix(planNS))), replicas*writers*each; got != want {
		t.Errorf("%d pods stored, want %d", got, want)
	}
	h.checkTurnFree("after contention")
	t.Logf("turns claimed: %d", len(h.claims()))
}

// TestPlanBatchTurn: every plan guards the namespace's turn as its state read it; a plan on
// a state holding this replica's turn releases it, and confirms refusals with the release.
func TestPlanBatchTurn(t *testing.T) {
	e := newPlanEnv(t)
	e.commitSolo(e.createQuota(newQuota("q", hardOf("pods", "1"))))
	e.commitSolo(e.createPod(newPod("a", "1m", "")))
	for _, held := range []int64{0, 42} {
		st := e.read()
		st.turn = storedTurn{rev: held, holder: "me"}
		plan, err := e.plan(st, []*Write{e.createPod(newPod("b", "1m", ""))}, &batchDone{})
		if err != nil {
			t.Fatal(err)
		}
		if rev, ok := turnGuard(plan.txn); !ok || rev != held {
			t.Errorf("turn %d: guarded %v at %d", held, ok, rev)
		}
		// Solo, the quota-set prefix at the read revision guards the turn.
		solo, err := e.plan(st, []*Write{e.createPod(newPod("b", "1m", ""))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := turnGuard(solo.txn); ok || !turnGuarded(solo.txn) || turnHeld(solo.txn) != (held != 0) {
			t.Errorf("turn %d: solo plan's compares %+v, ops %+v", held, solo.txn.Compares, solo.txn.Ops)
		}
		ops := plan.txn.Ops
		last := ops[len(ops)-1]
		released := last.Type == storage.OpDelete && last.Key == TurnKey(planNS)
		if released != (held != 0) || plan.releases() != released {
			t.Errorf("turn %d: last op %+v, releases %v", held, last, plan.releases())
		}
		// Nothing stored: what is sent is the compares and, when held, the release alone.
		sent := plan.toSend()
		if sendsRelease := len(sent.Ops) == 1 && sent.Ops[0].Type == storage.OpDelete && sent.Ops[0].Key == TurnKey(planNS); sendsRelease != (held != 0) || (held == 0 && len(sent.Ops) != 0) || len(sent.Compares) != len(plan.txn.Compares) {
			t.Errorf("turn %d: sends ops %+v with %d of %d compares", held, sent.Ops, len(sent.Compares), len(plan.txn.Compares))
		}
		if plan.results[0] == nil || plan.included != 0 {
			t.Errorf("turn %d: results %v, included %d: want the create refused", held, plan.results, plan.included)
		}
		if plan.next.turn.rev != 0 {
			t.Errorf("turn %d: next state's turn %d, want none", held, plan.next.turn.rev)
		}
	}
}
