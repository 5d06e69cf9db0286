package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/quotad/quotad/internal/memlimit"
)

// MaxTxnOps is the largest number of operations, and separately of compares, one Txn may
// carry: etcd's default --max-txn-ops, which the embedded etcd keeps. A larger Txn fails
// with ErrTooLarge. etcd also caps a request at 1.5 MiB (--max-request-bytes); a Txn over
// that fails with ErrTooLarge too.
const MaxTxnOps = 128

// revisionProbeKey is the key read (count only) to learn the current revision. It lies under
// kube-apiserver's /registry/ prefix so that an external etcd whose role only grants that
// prefix still answers.
const revisionProbeKey = "/registry/"

// errWatchEnded is delivered when etcd closes a watch the caller did not cancel (the client
// was closed underneath the store, or the store was closed).
var errWatchEnded = errors.New("storage: watch ended by the server or client")

// Etcd is the Store over an etcd v3 client (embedded or external).
//
// Etcd does not own the client: Close ends the store's watches and leaves the client open;
// whoever created the client closes it after the store.
//
// Txn semantics, on top of Store's:
//   - Ops must name distinct keys: etcd rejects a txn that writes one key twice
//     ("duplicate key given in txn request"); deduplicating is the caller's job.
//   - At most MaxTxnOps ops and MaxTxnOps compares; beyond that, ErrTooLarge.
//   - ModRevisionEquals with Revision 0 compares the key's create revision with 0, which
//     holds exactly when the key does not exist.
//   - RangeNotModifiedAfter compares every key under the prefix (mod revision < Revision+1);
//     the cost grows with the number of keys under it.
type Etcd struct {
	client *clientv3.Client
	// kv carries transactions, built as etcd's protobuf requests directly: the client's
	// own builders copy every key and value twice and clone every compare. callOpts are
	// the options the client would pass.
	kv       pb.KVClient
	callOpts []grpc.CallOption

	// listed counts the bytes of the values lists returned (ListedBytes), shared by the
	// stores of one embedded member; afterList, when set (an embedded member), is told the
	// new count after each list.
	listed    *atomic.Int64
	afterList func(listed int64)

	// ctx ends every watch of the store on Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// watches numbers the watches, each of which gets its own etcd watch stream (see watch).
	watches atomic.Uint64
	// local, when set (an embedded member), reads a range of the member's own copy without
	// counting the keys past the page (ListOptions.NoCount).
	local func(ctx context.Context, r *pb.RangeRequest) (*pb.RangeResponse, error)
}

var _ Store = (*Etcd)(nil)

// watchStreamKey is the gRPC metadata key that gives each watch its own watch stream.
const watchStreamKey = "quotad-watch"

// externalCallOpts are the etcd client's default call options (the client keeps its own
// unexported): wait for a connection rather than fail at once, and its message size limits.
var externalCallOpts = []grpc.CallOption{
	grpc.WaitForReady(true),
	grpc.MaxCallSendMsgSize(2 * 1024 * 1024),
	grpc.MaxCallRecvMsgSize(math.MaxInt32),
}

// NewEtcd returns a Store over a client connected to etcd over the network
// (ConnectExternal). The embedded etcd's store is Embedded.Store. See Etcd for ownership of
// the client.
func NewEtcd(client *clientv3.Client) *Etcd {
	if client.ActiveConnection() == nil {
		panic("storage.NewEtcd: the client has no connection; use Embedded.Store for the embedded etcd")
	}
	return newEtcd(client, clientv3.RetryKVClient(client), externalCallOpts)
}

func newEtcd(client *clientv3.Client, kv pb.KVClient, callOpts []grpc.CallOption) *Etcd {
	ctx, cancel := context.WithCancel(context.Background())
	return &Etcd{client: client, kv: kv, callOpts: callOpts, listed: new(atomic.Int64), ctx: ctx, cancel: cancel}
}

// Get returns the key at the latest revision (a linearizable read), or ErrNotFound.
func (s *Etcd) Get(ctx context.Context, key string) (KV, error) {
	resp, err := retryRead(func() (*clientv3.GetResponse, error) { return s.client.Get(ctx, key) })
	if err != nil {
		return KV{}, fmt.Errorf("get %q: %w", key, mapError(err))
	}
	if len(resp.Kvs) == 0 {
		return KV{}, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return toKV(resp.Kvs[0]), nil
}

// List returns keys under prefix in key order. With opts.Revision > 0 the result's Revision
// is opts.Revision (etcd's header carries the current revision instead); a compacted
// revision gives ErrCompacted, a future one ErrFutureRevision (a serializable read at a
// revision its member has not applied yet is read again linearizably, so that only a
// revision beyond the cluster's gives it). Remaining counts the keys of the range after
// this page.
func (s *Etcd) List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error) {
	if opts.Revision < 0 || opts.Limit < 0 {
		return ListResult{}, fmt.Errorf("list %q: negative revision %d or limit %d", prefix, opts.Revision, opts.Limit)
	}
	key, end := rangeOf(prefix)
	if opts.StartKey != "" {
		if !strings.HasPrefix(opts.StartKey, prefix) {
			return ListResult{}, fmt.Errorf("list %q: start key %q is not under the prefix", prefix, opts.StartKey)
		}
		key = opts.StartKey
	}
	if opts.NoCount && opts.Revision > 0 && s.local != nil {
		res, err := s.listLocal(ctx, key, end, opts)
		if !errors.Is(err, ErrFutureRevision) {
			return s.count(res), err
		}
		// The member has not applied the revision yet (another member served the list's
		// first page): read it as below.
	}
	ops := []clientv3.OpOption{clientv3.WithRange(end)}
	if opts.Revision > 0 {
		ops = append(ops, clientv3.WithRev(opts.Revision))
	}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(opts.Limit))
	}
	if opts.KeysOnly {
		ops = append(ops, clientv3.WithKeysOnly())
	}
	linearizable := ops
	if opts.Serializable {
		ops = append(ops[:len(ops):len(ops)], clientv3.WithSerializable())
	}
	resp, err := retryRead(func() (*clientv3.GetResponse, error) { return s.client.Get(ctx, key, ops...) })
	if err != nil && opts.Serializable && opts.Revision > 0 && errors.Is(err, rpctypes.ErrFutureRev) {
		// The member that served the serializable read has not applied opts.Revision yet:
		// the client spreads requests over the cluster's members and the revision was read
		// from another one. A linearizable read waits until the member has applied
		// everything committed, so it fails only if opts.Revision is really in the future.
		resp, err = retryRead(func() (*clientv3.GetResponse, error) { return s.client.Get(ctx, key, linearizable...) })
	}
	if err != nil {
		return ListResult{}, fmt.Errorf("list %q at revision %d: %w", prefix, opts.Revision, mapError(err))
	}
	res := toListResult((*pb.RangeResponse)(resp), resp.Header.Revision)
	if opts.Revision > 0 {
		res.Revision = opts.Revision
	}
	if resp.More {
		res.Remaining = resp.Count - int64(len(resp.Kvs))
	}
	return s.count(res), nil
}

// count adds the bytes of a list's values to ListedBytes, and reports them to the memory
// policy as garbage a bulk read makes (memlimit.Bulk: the values are copied on their way
// to the client and dropped).
func (s *Etcd) count(res ListResult) ListResult {
	n := 0
	for _, kv := range res.KVs {
		n += len(kv.Value)
	}
	memlimit.Bulk(int64(n))
	total := s.listed.Add(int64(n))
	if s.afterList != nil && n > 0 {
		s.afterList(total)
	}
	return res
}

// ListedBytes is how many bytes of values the store's lists have returned (with an
// embedded member, the lists of all its stores): about what the member's reads mapped in
// (Embedded.PageOutIfListed).
func (s *Etcd) ListedBytes() int64 { return s.listed.Load() }

// ReadsUncountedPages reports whether the store reads NoCount pages without counting: an
// embedded member's store does (see UncountedPages).
func (s *Etcd) ReadsUncountedPages() bool { return s.local != nil }

// listLocal is List of [key, end) at opts.Revision from the embedded member's own copy,
// without counting the keys past the page (Remaining stays 0). The member serves the
// revision's values as a linearizable read would once it has applied the revision, which
// a list reads only after its first page was read at it.
func (s *Etcd) listLocal(ctx context.Context, key, end string, opts ListOptions) (ListResult, error) {
	resp, err := s.local(ctx, &pb.RangeRequest{Key: []byte(key), RangeEnd: []byte(end), Revision: opts.Revision, Limit: opts.Limit, KeysOnly: opts.KeysOnly})
	switch {
	case errors.Is(err, mvcc.ErrCompacted):
		return ListResult{}, fmt.Errorf("list %q at revision %d: %w: %w", key, opts.Revision, ErrCompacted, err)
	case errors.Is(err, mvcc.ErrFutureRev):
		return ListResult{}, fmt.Errorf("list %q at revision %d: %w: %w", key, opts.Revision, ErrFutureRevision, err)
	case err != nil:
		return ListResult{}, fmt.Errorf("list %q at revision %d: %w", key, opts.Revision, err)
	}
	return toListResult(resp, opts.Revision), nil
}

// toListResult is a range's keys as a ListResult at revision rev (Remaining not set).
func toListResult(resp *pb.RangeResponse, rev int64) ListResult {
	res := ListResult{KVs: make([]KV, len(resp.Kvs)), Revision: rev, More: resp.More}
	for i, kv := range resp.Kvs {
		res.KVs[i] = toKV(kv)
	}
	return res
}

// Watch streams changes under prefix strictly after fromRev (0: from now), with previous
// values. Events are delivered one WatchResult per revision, in revision order, each with
// Revision set to that revision; a progress notification (no events) carries the store
// revision up to which every change under the prefix has been delivered. If fromRev has
// been compacted the channel delivers ErrCompacted and closes. The channel closes when ctx
// ends or the store is closed.
func (s *Etcd) Watch(ctx context.Context, prefix string, fromRev int64) <-chan WatchResult {
	ch, _ := s.watch(ctx, prefix, fromRev, true)
	return ch
}

// WatchWithoutPrev is Watch without previous values: etcd then does not read back the
// old value of every update and deletion it sends.
func (s *Etcd) WatchWithoutPrev(ctx context.Context, prefix string, fromRev int64) <-chan WatchResult {
	ch, _ := s.watch(ctx, prefix, fromRev, false)
	return ch
}

// WatchProgressing is Watch (prevKV) or WatchWithoutPrev, and a function asking the watch
// for a progress notification (ProgressWatcher).
func (s *Etcd) WatchProgressing(ctx context.Context, prefix string, fromRev int64, prevKV bool) (<-chan WatchResult, func() error) {
	return s.watch(ctx, prefix, fromRev, prevKV)
}

func (s *Etcd) watch(ctx context.Context, prefix string, fromRev int64, prevKV bool) (<-chan WatchResult, func() error) {
	out := make(chan WatchResult)
	// Require a leader so that a watch on a partitioned member of an external cluster
	// fails instead of going silent (no effect on the in-process client).
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	// Each watch on its own watch stream (the client shares one stream between watches
	// whose contexts carry the same metadata). On a shared stream, cancelling a watch sends
	// the server a cancel request, and with the in-process client a burst of cancellations
	// (a replica losing leadership stops every controller's watches at once) deadlocks the
	// stream: the client's loop blocks sending a cancel while the server blocks sending it
	// events (etcd issues 18879 and 20716, not fixed in v3.7.3). The last watch of a stream
	// closes the stream instead of sending a cancel request.
	wctx = metadata.AppendToOutgoingContext(wctx, watchStreamKey, strconv.FormatUint(s.watches.Add(1), 10))
	stop := context.AfterFunc(s.ctx, cancel)
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithProgressNotify()}
	if prevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev+1))
	}
	// clientv3.WithPrefix turns the empty prefix into "every key".
	wch := s.client.Watch(wctx, prefix, opts...)

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)
		defer stop()
		defer cancel()
		send := func(r WatchResult) bool {
			select {
			case out <- r:
				return true
			case <-wctx.Done():
				return false
			}
		}
		for {
			var resp clientv3.WatchResponse
			var ok bool
			select {
			case <-wctx.Done():
				return
			case resp, ok = <-wch:
			}
			if !ok {
				if wctx.Err() == nil {
					send(WatchResult{Err: fmt.Errorf("watch %q: %w", prefix, errWatchEnded)})
				}
				return
			}
			if err := resp.Err(); err != nil {
				if resp.CompactRevision != 0 {
					err = fmt.Errorf("watch %q from revision %d (compacted at %d): %w", prefix, fromRev, resp.CompactRevision, mapError(err))
				} else {
					err = fmt.Errorf("watch %q from revision %d: %w", prefix, fromRev, mapError(err))
				}
				send(WatchResult{Err: err})
				return
			}
			if len(resp.Events) == 0 {
				if resp.IsProgressNotify() && !send(WatchResult{Revision: resp.Header.Revision}) {
					return
				}
				continue
			}
			// One result per revision: a response may carry several revisions when the
			// watch catches up on history; events of one txn share its revision.
			for start := 0; start < len(resp.Events); {
				rev := resp.Events[start].Kv.ModRevision
				end := start + 1
				for end < len(resp.Events) && resp.Events[end].Kv.ModRevision == rev {
					end++
				}
				batch := make([]Event, 0, end-start)
				for _, ev := range resp.Events[start:end] {
					batch = append(batch, toEvent(ev))
				}
				if !send(WatchResult{Events: batch, Revision: rev}) {
					return
				}
				start = end
			}
		}
	}()
	// The request goes to the watch's own stream (its context's metadata names it). etcd
	// answers once the watch has sent every change up to its member's current revision.
	// The client would open a new stream for a request on one that has ended, so none is
	// sent once the watch's context has.
	progress := func() error {
		if wctx.Err() != nil {
			return nil
		}
		return s.client.RequestProgress(wctx)
	}
	return out, progress
}

// Txn commits txn atomically iff every compare holds; otherwise it returns ErrConflict
// (wrapped with the store revision it failed at) and writes nothing.
func (s *Etcd) Txn(ctx context.Context, txn Txn) (TxnResult, error) {
	req, err := etcdTxn(txn)
	if err != nil {
		return TxnResult{}, err
	}
	resp, err := s.kv.Txn(ctx, req, s.callOpts...)
	if err != nil {
		return TxnResult{}, fmt.Errorf("txn (%d compares, %d ops): %w", len(req.Compare), len(req.Success), mapError(clientv3.ContextError(ctx, err)))
	}
	if !resp.Succeeded {
		return TxnResult{}, fmt.Errorf("%w (at store revision %d)", ErrConflict, resp.Header.Revision)
	}
	return TxnResult{Revision: resp.Header.Revision}, nil
}

// Txns commits independent transactions in one etcd request, each as a nested transaction:
// every one commits iff its own compares hold, and all that commit share one revision.
// Compares are evaluated before any write, so each transaction must compare no key another
// one writes, and no two may write one key. Nested transactions count against etcd's
// operation limit together: len(txns) plus any one transaction's compares or ops must stay
// within MaxTxnOps.
func (s *Etcd) Txns(ctx context.Context, txns []Txn) ([]TxnOutcome, error) {
	ops := make([]pb.RequestOp, len(txns))
	nested := make([]pb.RequestOp_RequestTxn, len(txns))
	req := &pb.TxnRequest{Success: make([]*pb.RequestOp, len(txns))}
	for i, txn := range txns {
		r, err := etcdTxn(txn)
		if err != nil {
			return nil, err
		}
		nested[i].RequestTxn = r
		ops[i].Request = &nested[i]
		req.Success[i] = &ops[i]
	}
	resp, err := s.kv.Txn(ctx, req, s.callOpts...)
	if err != nil {
		return nil, fmt.Errorf("txns (%d): %w", len(txns), mapError(clientv3.ContextError(ctx, err)))
	}
	if len(resp.Responses) != len(txns) {
		return nil, fmt.Errorf("txns: %d responses to %d transactions", len(resp.Responses), len(txns))
	}
	out := make([]TxnOutcome, len(txns))
	for i, r := range resp.Responses {
		if tr := r.GetResponseTxn(); tr == nil || !tr.Succeeded {
			out[i].Err = fmt.Errorf("%w (at store revision %d)", ErrConflict, resp.Header.Revision)
			continue
		}
		out[i].Revision = resp.Header.Revision
	}
	return out, nil
}

// etcdTxn builds etcd's request for txn, allocating its parts together. Values are shared
// with txn, not copied: etcd copies them into its log before the call returns.
func etcdTxn(txn Txn) (*pb.TxnRequest, error) {
	req := &pb.TxnRequest{
		Compare: make([]*pb.Compare, len(txn.Compares)),
		Success: make([]*pb.RequestOp, len(txn.Ops)),
	}
	cmps := make([]pb.Compare, len(txn.Compares))
	var parts txnParts
	for i, c := range txn.Compares {
		if c.Revision < 0 {
			return nil, fmt.Errorf("txn: compare on %q with negative revision %d", c.Key, c.Revision)
		}
		cmp := &cmps[i]
		cmp.Key = []byte(c.Key)
		switch c.Target {
		case ModRevisionEquals:
			if c.Revision == 0 {
				// The create revision is 0 exactly when the key does not exist.
				cmp.Target, cmp.TargetUnion = pb.Compare_CREATE, parts.create(len(txn.Compares))
			} else {
				cmp.Target, cmp.TargetUnion = pb.Compare_MOD, parts.modRevision(len(txn.Compares), c.Revision)
			}
		case RangeNotModifiedAfter:
			key, end := rangeOf(c.Key)
			cmp.Key, cmp.RangeEnd = []byte(key), []byte(end)
			cmp.Result, cmp.Target, cmp.TargetUnion = pb.Compare_LESS, pb.Compare_MOD, parts.modRevision(len(txn.Compares), c.Revision+1)
		case ValueEquals:
			cmp.Target, cmp.TargetUnion = pb.Compare_VALUE, parts.value(len(txn.Compares), c.Value)
		default:
			return nil, fmt.Errorf("txn: unknown compare target %d on %q", c.Target, c.Key)
		}
		req.Compare[i] = cmp
	}
	for i, op := range txn.Ops {
		switch op.Type {
		case OpPut:
			req.Success[i] = parts.put(len(txn.Ops), op.Key, op.Value)
		case OpDelete:
			req.Success[i] = parts.delete(len(txn.Ops), op.Key)
		default:
			return nil, fmt.Errorf("txn: unknown op type %d on %q", op.Type, op.Key)
		}
	}
	return req, nil
}

// txnParts allocates the parts of one etcd request of each kind together: each kind's
// slice is made, with room for n (the request's compares or ops), on its first use.
type txnParts struct {
	creates []pb.Compare_CreateRevision
	revs    []pb.Compare_ModRevision
	values  []pb.Compare_Value
	ops     []pb.RequestOp
	puts    []pb.PutRequest
	putOps  []pb.RequestOp_RequestPut
	dels    []pb.DeleteRangeRequest
	delOps  []pb.RequestOp_RequestDeleteRange
}

// next grows *s by one element (allocating room for n on first use) and returns it.
func next[T any](s *[]T, n int) *T {
	if *s == nil {
		*s = make([]T, 0, n)
	}
	*s = (*s)[:len(*s)+1]
	return &(*s)[len(*s)-1]
}

func (p *txnParts) create(n int) *pb.Compare_CreateRevision { return next(&p.creates, n) }

func (p *txnParts) modRevision(n int, rev int64) *pb.Compare_ModRevision {
	r := next(&p.revs, n)
	r.ModRevision = rev
	return r
}

func (p *txnParts) value(n int, v []byte) *pb.Compare_Value {
	r := next(&p.values, n)
	r.Value = v
	return r
}

func (p *txnParts) put(n int, key string, value []byte) *pb.RequestOp {
	put := next(&p.puts, n)
	put.Key, put.Value = []byte(key), value
	wrap := next(&p.putOps, n)
	wrap.RequestPut = put
	op := next(&p.ops, n)
	op.Request = wrap
	return op
}

func (p *txnParts) delete(n int, key string) *pb.RequestOp {
	del := next(&p.dels, n)
	del.Key = []byte(key)
	wrap := next(&p.delOps, n)
	wrap.RequestDeleteRange = del
	op := next(&p.ops, n)
	op.Request = wrap
	return op
}

// readRetries bounds how often a read is sent again after etcd answered that its leader
// changed while serving it.
const readRetries = 3

// retryRead sends a read again when etcd answered that its leader changed meanwhile (a
// linearizable read's read index was lost with the old leader): a read changes nothing, so
// sending it again is safe. The network client's retry policy does this on its own; the
// embedded etcd's in-process client has none, and a member of an embedded cluster
// answered writes with 500 "leader changed" at every election.
func retryRead[T any](read func() (T, error)) (T, error) {
	for i := 0; ; i++ {
		v, err := read()
		if err != nil && i < readRetries && (errors.Is(err, rpctypes.ErrLeaderChanged) || errors.Is(err, rpctypes.ErrGRPCLeaderChanged)) {
			continue
		}
		return v, err
	}
}

// Revision returns the current store revision (a linearizable read).
func (s *Etcd) Revision(ctx context.Context) (int64, error) {
	resp, err := retryRead(func() (*clientv3.GetResponse, error) {
		return s.client.Get(ctx, revisionProbeKey, clientv3.WithCountOnly())
	})
	if err != nil {
		return 0, fmt.Errorf("revision: %w", mapError(err))
	}
	return resp.Header.Revision, nil
}

// Compact discards the history before rev: reads and watches at older revisions then fail
// with ErrCompacted. It returns once the compaction is applied to the backend. Compacting
// at or below the current compaction revision gives ErrCompacted, above the current
// revision ErrFutureRevision. The embedded etcd also compacts on its own (see StartEmbedded).
func (s *Etcd) Compact(ctx context.Context, rev int64) error {
	if _, err := s.client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact at revision %d: %w", rev, mapError(err))
	}
	return nil
}

// Close ends every watch of the store and waits for their goroutines. It does not close
// the client. It is safe to call more than once.
func (s *Etcd) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// rangeOf returns the [key, end) etcd range of every key under prefix; the empty prefix
// means every key.
func rangeOf(prefix string) (key, end string) {
	if prefix == "" {
		return "\x00", "\x00"
	}
	return prefix, clientv3.GetPrefixRangeEnd(prefix)
}

// mapError wraps an etcd client error so that errors.Is finds both the matching typed
// storage error and the original etcd error. Errors without a storage counterpart (and
// context errors) are returned unchanged.
func mapError(err error) error {
	var typed error
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		typed = ErrCompacted
	case errors.Is(err, rpctypes.ErrFutureRev):
		typed = ErrFutureRevision
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		typed = ErrTooLarge
	case errors.Is(err, rpctypes.ErrNoSpace):
		// The backend quota is exhausted: not a property of this request.
		return err
	case status.Code(err) == codes.ResourceExhausted:
		// gRPC's message size limits ("message larger than max"), client or server side.
		typed = ErrTooLarge
	default:
		return err
	}
	return fmt.Errorf("%w: %w", typed, err)
}

func toKV(kv *mvccpb.KeyValue) KV {
	return KV{
		Key:            string(kv.Key),
		Value:          kv.Value,
		ModRevision:    kv.ModRevision,
		CreateRevision: kv.CreateRevision,
	}
}

func toEvent(ev *clientv3.Event) Event {
	e := Event{KV: toKV(ev.Kv)}
	if ev.Type == clientv3.EventTypeDelete {
		e.Type = EventDelete
	} else {
		e.Type = EventPut
	}
	if ev.PrevKv != nil {
		prev := toKV(ev.PrevKv)
		e.PrevKV = &prev
	}
	return e
}
