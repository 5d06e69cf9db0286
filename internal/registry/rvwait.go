package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/storage"
)

// A read at a resourceVersion the store has not reached yet (a list with resourceVersion N,
// whatever its resourceVersionMatch, a get with resourceVersion N, a watch with
// sendInitialEvents from N) waits for the store to reach N, as upstream's watch cache
// waits for its own revision (waitUntilFreshLocked), for at most TooLargeWait. If the store
// gets there, the read is served as usual; if not, the answer is upstream's 504:
//
//	Timeout: Too large resource version: N, current: M
//
// with reason Timeout, details.retryAfterSeconds 1 and one cause of type
// ResourceVersionTooLarge ("Too large resource version"), M being the store's revision
// when the wait ended. A list or get answers it as its status (with upstream's Retry-After
// header); a watch as its first and only event, of type ERROR, as upstream's cacher
// answers a watch it could not start.
//
// The wait is a storage watch of every key from N on, so it ends at the first change at
// or after N, whoever writes it (another replica included), not at a poll; it also ends
// when the request's context ends (its deadline, or its client gone). It holds the
// request's in-flight seat, as upstream's wait holds its priority level's seat, for at
// most TooLargeWait. A plain watch from a future N does not wait, as upstream: it is
// established at once and sends the changes after N as they come.

// TooLargeWait is how long a read waits for a resourceVersion the store has not reached:
// upstream's watch cache blockTimeout.
const TooLargeWait = 3 * time.Second

// tooLargeRetrySeconds is the retryAfterSeconds of the answer: upstream's
// resourceVersionTooHighRetrySeconds.
const tooLargeRetrySeconds = 1

// tooLargeCauseMessage is the message of the answer's ResourceVersionTooLarge cause.
const tooLargeCauseMessage = "Too large resource version"

// TooLargeResourceVersion is upstream's answer to a read at requested when the store is
// at current (storage.NewTooLargeResourceVersionError with retrySeconds 1).
func TooLargeResourceVersion(requested uint64, current int64) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), tooLargeRetrySeconds)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: tooLargeCauseMessage}}
	return err
}

// awaitRevision returns nil once the store's revision is at least rev, waiting for it at
// most TooLargeWait (see above); past that, TooLargeResourceVersion with the store's
// revision then. When ctx ends first, it returns ctx's error as internalError words it.
// rv is the resourceVersion parameter rev was parsed from, if any: the answer names it as
// upstream does, as an unsigned 64-bit number (ParseResourceVersion reads one beyond
// etcd's int64 revisions as the largest of them).
func (s *Store) awaitRevision(ctx context.Context, rev int64, rv string) error {
	cur, err := s.cfg.Storage.Revision(ctx)
	if err != nil {
		return internalError(err)
	}
	if cur >= rev {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, TooLargeWait)
	defer cancel()
	// The watch delivers only changes at rev or later (a progress notification may carry
	// an earlier revision): the first one means the store has reached rev. A compacted
	// start means rev was reached and compacted since.
	for r := range s.cfg.Storage.WatchWithoutPrev(wctx, "", rev-1) {
		switch {
		case errors.Is(r.Err, storage.ErrCompacted):
			return nil
		case r.Err != nil:
			// The watch broke (a lost leader, say): its end is the wait's.
			cancel()
		case len(r.Events) > 0 || r.Revision >= rev:
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return internalError(err)
	}
	if cur, err = s.cfg.Storage.Revision(ctx); err != nil {
		return internalError(err)
	}
	if cur >= rev {
		return nil
	}
	requested := uint64(rev)
	if n, err := strconv.ParseUint(rv, 10, 64); err == nil && int64(min(n, math.MaxInt64)) == rev {
		requested = n
	}
	return TooLargeResourceVersion(requested, cur)
}

// AwaitResourceVersion is awaitRevision for a get's resourceVersion parameter: "" and "0"
// (any revision) never wait; one that is not a number is ParseResourceVersion's 400.
func (s *Store) AwaitResourceVersion(ctx context.Context, rv string) error {
	n, err := ParseResourceVersion(rv)
	if err != nil || n == 0 {
		return err
	}
	return s.awaitRevision(ctx, n, rv)
}
