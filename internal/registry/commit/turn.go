package commit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/quotad/quotad/internal/storage"
)

// Turns: replicas taking turns at a contended namespace (docs/ha.md).
//
// Every transaction of a namespace is guarded on its quotas, so when several replicas
// group-commit writes to one namespace, only one of them can commit on a given quota state.
// Left to their guards, the replica whose batches keep committing (its next batch is planned
// and sent while the previous one commits) starves the others: a replica whose guard
// failed reads, plans and sends again, one round trip during which the winner has
// committed again; random waits do not help, as the winner never pauses. So a replica whose
// writes failed their guards turnAfter times claims the namespace's turn, and the others
// stand aside until it has committed:
//
//  1. The claim is a key, TurnKey(ns), created if absent (a transaction comparing its mod
//     revision with 0) and holding the replica's identity. It lies under the quota-set
//     key's prefix, which every read of the namespace's state lists at the state's read
//     revision (readStateOnce), so knowing it costs no read.
//  2. Every transaction planned for the namespace (planBatch: pipelined, solo and joined
//     batches) guards the turn key as its state read it: absent for every replica but the
//     claimant, the claim for the claimant, whose transaction deletes the key with the
//     writes it commits. Pipelined batches compare the key's mod revision; solo and joined
//     ones the quota-set prefix, which holds it, not modified since their read (a claim or
//     a takeover puts the key). A claim thus fails every other replica's next transaction
//     of the namespace, and nothing else: the guards on the quotas still decide what is
//     admitted (I1 and I2 never depend on turns).
//  3. A replica whose read finds another's turn does not plan: it watches the key until it
//     is deleted or replaced, its first write's request ends or the turn expires, and reads
//     again (awaitTurn). Its writes pile up meanwhile into the next batch.
//  4. The claimant commits its batch solo, holding the namespace's lead, and retries on the
//     same claim. A batch whose writes are all refused still sends its guards, with the
//     deletion; every other way its writes settle without a commit (errors, cancellation,
//     objects changed underneath) releases the turn with a transaction of its own
//     (releaseTurn). A crashed or hung claimant is
//     covered by expiry: a turn stored unchanged for turnDuration is replaced by a claim
//     comparing its mod revision. Expiry is measured on the waiter's own clock from the
//     moment it first read that claim (as a Lease's candidate measures a lease), not from
//     a time written by the claimant, so clocks need not agree: a waiter can only be late.
//     A turn holding this replica's own identity that it does not hold (a release that
//     failed, or a predecessor on the same data dir that crashed) is replaced at once.

const (
	// turnAfter is how many times a write fails its guards before its replica claims the
	// namespace's turn. Once may be bad luck (another replica committed during one round
	// trip); twice in a row is contention the turn resolves. A claim costs a round trip
	// and stops the other replicas' pipelines of the namespace, so it is not spent on
	// a single collision. With three replicas writing one namespace (docs/ha.md), 1 made
	// 2.6 times the claims of 2 and a longer median; 3 made half the claims and a p99
	// half again as long, at no higher rate.
	turnAfter = 2
	// turnDuration is how long another replica's turn is waited for before it is taken
	// over: far beyond the read, plan and transaction a claimant holds it for, short enough
	// that a crashed claimant delays the namespace's writes by a couple of seconds at most.
	turnDuration = 2 * time.Second
)

// TurnKey is the key of a namespace's turn: present while a replica holds it.
func TurnKey(ns string) string { return QuotaSetKey(ns) + "turn" }

// turnValue is what a turn key holds: the claimant's identity (Config.Replica).
type turnValue struct {
	Holder string `json:"holder"`
}

// claimValue is the value of the turns a replica claims.
func claimValue(replica string) []byte {
	b, _ := json.Marshal(turnValue{Holder: replica}) // a struct of one string: cannot fail
	return b
}

// storedTurn is a namespace's turn key as read: its mod revision (0: absent) and holder.
type storedTurn struct {
	rev    int64
	holder string
}

// decodeTurn reads a stored turn key; a value that does not decode has no holder (and is
// waited out like another replica's).
func decodeTurn(kv storage.KV) storedTurn {
	var v turnValue
	_ = json.Unmarshal(kv.Value, &v)
	return storedTurn{rev: kv.ModRevision, holder: v.Holder}
}

// wantsTurn reports whether a write of the batch has failed its guards turnAfter times.
func wantsTurn(live []*pending) bool {
	for _, p := range live {
		if p.attempts >= turnAfter {
			return true
		}
	}
	return false
}

// batchState reads the namespace's state for a batch, taking turns with the other replicas:
// it claims the turn first when the batch wants it, and waits out another replica's turn.
// The state returned stores no turn or this replica's (q.turn). It also returns the writes
// still live (the others are settled: their requests ended while waiting); with none, the
// state is nil. Called by the namespace's leader.
func (e *Engine) batchState(ns string, q *nsQueue, live []*pending) (*nsState, []*pending, error) {
	linearizable := retried(live)
	for {
		ctx, cancel := batchContext(live)
		st, until, err := e.readTurn(ctx, ns, q, live, linearizable)
		cancel()
		if err != nil || until.IsZero() {
			return st, live, err
		}
		e.awaitTurn(live[0].ctx, ns, st.readRev, until)
		// The turn read may have been a stale member's: read at the newest revision.
		linearizable = true
		if live = e.dropCancelled(live); len(live) == 0 {
			return nil, nil, nil
		}
	}
}

// readTurn is one step of batchState: it claims the turn if the batch wants it and reads the
// state. It returns the state to plan on, or, when another replica's turn stands, the
// state read and when that turn expires.
func (e *Engine) readTurn(ctx context.Context, ns string, q *nsQueue, live []*pending, linearizable bool) (*nsState, time.Time, error) {
	if q.turn == 0 && wantsTurn(live) {
		rev, err := e.claimTurn(ctx, ns, 0)
		if err != nil {
			return nil, time.Time{}, err
		}
		q.turn = rev
		linearizable = true
	}
	for {
		st, err := e.readState(ctx, ns, linearizable)
		if err != nil {
			return nil, time.Time{}, err
		}
		t := st.turn
		if t.rev == 0 || t.rev == q.turn {
			// Free, or ours (a claim of ours gone meanwhile is forgotten).
			q.turn = t.rev
			return st, time.Time{}, nil
		}
		q.turn = 0
		now := e.cfg.Clock.Now()
		if q.seenTurn != t.rev {
			q.seenTurn, q.seenAt = t.rev, now
		}
		expires := q.seenAt.Add(turnDuration)
		if t.holder != e.cfg.Replica && now.Before(expires) {
			return st, expires, nil
		}
		// Expired, or left by this replica: replaced by a claim of ours (or, if another
		// replica replaced it first, read again).
		e.cfg.Logger.Info("taking over a namespace's turn", "namespace", ns, "holder", t.holder)
		rev, err := e.claimTurn(ctx, ns, t.rev)
		if err != nil {
			return nil, time.Time{}, err
		}
		q.turn = rev
		linearizable = true
	}
}

// claimTurn claims the namespace's turn if its key is stored at mod revision prev (0:
// absent). It returns the claim's revision, or 0 when the key changed meanwhile.
func (e *Engine) claimTurn(ctx context.Context, ns string, prev int64) (int64, error) {
	key := TurnKey(ns)
	r, err := e.cfg.Storage.Txn(ctx, storage.Txn{
		Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: key, Revision: prev}},
		Ops:      []storage.Op{{Type: storage.OpPut, Key: key, Value: e.turnValue}},
	})
	if errors.Is(err, storage.ErrConflict) {
		return 0, nil
	}
	if err != nil {
		return 0, InternalError(err)
	}
	return r.Revision, nil
}

// releaseTurn deletes the turn this replica holds on the namespace, if any, unless it
// changed since the claim. A release that fails leaves the turn to expire (another replica)
// or to be taken over at once (this one).
func (e *Engine) releaseTurn(ns string, q *nsQueue) {
	if q.turn == 0 {
		return
	}
	key, rev := TurnKey(ns), q.turn
	q.turn = 0
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	_, err := e.cfg.Storage.Txn(ctx, storage.Txn{
		Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: key, Revision: rev}},
		Ops:      []storage.Op{{Type: storage.OpDelete, Key: key}},
	})
	if err != nil && !errors.Is(err, storage.ErrConflict) {
		e.cfg.Logger.Warn("namespace turn not released", "namespace", ns, "err", err)
	}
}

// awaitTurn waits until the namespace's turn key changes after revision from, ctx ends or
// the clock reaches until.
func (e *Engine) awaitTurn(ctx context.Context, ns string, from int64, until time.Time) {
	t := e.cfg.Clock.NewTimer(until.Sub(e.cfg.Clock.Now()))
	defer t.Stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := e.cfg.Storage.WatchWithoutPrev(ctx, TurnKey(ns), from)
	for {
		select {
		case r, ok := <-w:
			if !ok || r.Err != nil || len(r.Events) > 0 {
				return
			}
		case <-t.C():
			return
		}
	}
}
