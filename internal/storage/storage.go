package storage

import (
	"context"
	"errors"
)

// Typed errors returned by every Store implementation. Check with errors.Is.
var (
	// ErrNotFound: the key does not exist (at the requested revision).
	ErrNotFound = errors.New("storage: key not found")
	// ErrConflict: a Txn compare failed; nothing was written.
	ErrConflict = errors.New("storage: transaction compare failed")
	// ErrCompacted: the requested revision has been compacted away.
	ErrCompacted = errors.New("storage: revision compacted")
	// ErrFutureRevision: the requested revision is newer than the store's current revision.
	ErrFutureRevision = errors.New("storage: revision not yet reached")
	// ErrTooLarge: a transaction exceeded the backend's limits (operations or bytes).
	ErrTooLarge = errors.New("storage: transaction too large")
)

// KV is one stored key with its value and revisions.
type KV struct {
	Key            string
	Value          []byte
	ModRevision    int64
	CreateRevision int64
}

// ListOptions narrows a List.
type ListOptions struct {
	// Revision reads at this revision; 0 means the latest.
	Revision int64
	// Limit caps the number of returned keys; 0 means no limit.
	Limit int64
	// StartKey (inclusive) resumes a paginated list; it must lie under the prefix.
	StartKey string
	// KeysOnly omits values.
	KeysOnly bool
	// Serializable allows a read served by the local member without a quorum round trip:
	// it may be stale, so use it only where a transaction guard catches staleness.
	Serializable bool
	// NoCount: the caller does not need Remaining. With a Revision, a store that can read
	// a page without counting the rest of the range (an embedded member reading its own
	// copy at that revision) does, so that the pages of a long list each cost a page
	// instead of the range after it (etcd's Range counts every key of its range).
	NoCount bool
}

// UncountedPages is implemented by a store that can read a page of a range at a revision
// without counting the rest of the range (ListOptions.NoCount): the pages of a long list
// then each cost a page, so that they can be small.
type UncountedPages interface {
	ReadsUncountedPages() bool
}

// ProgressWatcher is a Store whose watches can be asked for a progress notification, as
// kube-apiserver asks its watch cache's watches before a consistent read from the cache.
type ProgressWatcher interface {
	// WatchProgressing is Watch (prevKV) or WatchWithoutPrev, and a function that asks the
	// watch for a progress notification: a WatchResult without events whose Revision is
	// at least the store's revision when it was asked (every change up to it delivered).
	// Asking a watch that has ended does nothing.
	WatchProgressing(ctx context.Context, prefix string, fromRev int64, prevKV bool) (<-chan WatchResult, func() error)
}

// ReadsUncountedPages reports whether st implements UncountedPages and can.
func ReadsUncountedPages(st Store) bool {
	u, ok := st.(UncountedPages)
	return ok && u.ReadsUncountedPages()
}

// ListResult is one page of a List.
type ListResult struct {
	KVs []KV
	// Revision is the store revision the list was served at.
	Revision int64
	// More reports that keys remain after the last returned one.
	More bool
	// Remaining is how many keys remain after this page (when known).
	Remaining int64
}

// EventType is the kind of a watch event.
type EventType int

const (
	// EventPut is a create or update; PrevKV is nil on create.
	EventPut EventType = iota
	// EventDelete is a deletion; KV.Value is empty, PrevKV holds the deleted value.
	EventDelete
)

// Event is one change seen by a Watch.
type Event struct {
	Type   EventType
	KV     KV
	PrevKV *KV
}

// WatchResult is what a watch channel delivers: a batch of events, or a terminal error
// (ErrCompacted when the start revision is gone). The channel is closed after an error or
// when the context ends.
type WatchResult struct {
	Events []Event
	// Revision is the store revision this batch was delivered at (progress notifications
	// carry no events). A batch with events holds exactly the events of one revision (one
	// Txn), in the Txn's op order, and Revision is that revision; a progress notification's
	// Revision is one up to which every change under the prefix has been delivered. Either
	// way it is safe to resume a watch from Revision.
	Revision int64
	Err      error
}

// CompareTarget says what a Compare checks.
type CompareTarget int

const (
	// ModRevisionEquals: the key's mod revision equals Revision (0: the key must not exist).
	ModRevisionEquals CompareTarget = iota
	// RangeNotModifiedAfter: no key under Prefix (Key used as a prefix) has a mod revision
	// greater than Revision. Deleted keys are not seen by this compare.
	RangeNotModifiedAfter
	// ValueEquals: the key exists and its value equals Value byte for byte (a missing key
	// fails the compare).
	ValueEquals
)

// Compare is one guard of a Txn.
type Compare struct {
	Target   CompareTarget
	Key      string
	Revision int64
	// Value is compared by ValueEquals.
	Value []byte
}

// OpType is the kind of a Txn operation.
type OpType int

const (
	// OpPut writes Value at Key.
	OpPut OpType = iota
	// OpDelete removes Key.
	OpDelete
)

// Op is one write of a Txn.
type Op struct {
	Type  OpType
	Key   string
	Value []byte
}

// Txn is a guarded, atomic multi-key write.
type Txn struct {
	Compares []Compare
	Ops      []Op
}

// TxnResult reports a committed Txn.
type TxnResult struct {
	// Revision is the revision the txn committed at: the mod revision of every put key.
	Revision int64
}

// TxnOutcome is the outcome of one transaction of Store.Txns: its result, or ErrConflict.
type TxnOutcome struct {
	TxnResult
	Err error
}

// Store is the persistence interface of quotad. Implementations must pass the
// conformance suite in storagetest.
type Store interface {
	// Get returns the key at the latest revision, or ErrNotFound.
	Get(ctx context.Context, key string) (KV, error)
	// List returns keys under prefix in key order.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Watch streams changes under prefix strictly after revision fromRev (0: from now).
	Watch(ctx context.Context, prefix string, fromRev int64) <-chan WatchResult
	// WatchWithoutPrev is Watch without previous values (PrevKV is always nil), which
	// spares the store reading back the old value of every update and deletion.
	WatchWithoutPrev(ctx context.Context, prefix string, fromRev int64) <-chan WatchResult
	// Txn commits all ops iff every compare holds; otherwise returns ErrConflict.
	Txn(ctx context.Context, txn Txn) (TxnResult, error)
	// Txns commits independent transactions in one request: each commits iff its own
	// compares hold (its outcome's Err is ErrConflict otherwise), whatever the others do.
	// No transaction may write a key another one writes or compares. An error means none
	// was committed (ErrTooLarge: together they exceed the backend's limits).
	Txns(ctx context.Context, txns []Txn) ([]TxnOutcome, error)
	// Revision returns the current store revision.
	Revision(ctx context.Context) (int64, error)
	// Close releases the store's resources.
	Close() error
}
