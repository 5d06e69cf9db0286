package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/selector"
	"github.com/quotad/quotad/internal/storage"
)

// ListOptions are the list parameters of kube-apiserver.
type ListOptions struct {
	Selector        selector.Selector
	Limit           int64
	Continue        string
	ResourceVersion string
	// ResourceVersionMatch is "", "Exact" or "NotOlderThan".
	ResourceVersionMatch string
	// Pace, when set, is called by ListEach before it reads each page after the first (the
	// HTTP edge queues the pages of long lists there); its error ends the list. Such a
	// page's decoding yields the processor every PacedYieldEvery objects.
	Pace func(ctx context.Context) error
}

// exact reports whether a list reads at exactly its resourceVersion: asked for with
// resourceVersionMatch Exact, or (upstream's legacy semantics, which client-go's pagers
// and reflectors rely on) a resourceVersion other than "0" with a limit and no match.
// Otherwise a resourceVersion is the least revision the list may be read at.
func (o ListOptions) exact() bool {
	if o.ResourceVersion == "" || o.ResourceVersion == "0" {
		return false
	}
	return o.ResourceVersionMatch == "Exact" || (o.ResourceVersionMatch == "" && o.Limit > 0)
}

// PacedYieldEvery is how many objects of a paced page (see ListOptions.Pace) are decoded
// between yields of the processor, so that a long read holds a core for about a
// millisecond at a time, not for the Go scheduler's 10 ms time slice.
const PacedYieldEvery = 32

// ListResult is one page of a list.
type ListResult struct {
	Items           []runtime.Object
	ResourceVersion string
	Continue        string
	Remaining       *int64
}

type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	Start      string `json:"start"`
}

// Upstream's 410 texts for lists at compacted revisions.
const (
	tooOldList     = "The resourceVersion for the provided list is too old."
	tooOldContinue = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
)

// latestRV in a continue token continues the list at the latest revision (the token a 410
// for an expired continue carries), as upstream's -1.
const latestRV = -1

func encodeContinue(rv int64, start string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(tok string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return t, fmt.Errorf("continue key is not valid: %v", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("continue key is not valid: %v", err)
	}
	if t.APIVersion != "meta.k8s.io/v1" {
		return t, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	if (t.RV <= 0 && t.RV != latestRV) || strings.HasPrefix(t.Start, "/") {
		return t, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	return t, nil
}

// ParseResourceVersion parses the resourceVersion parameter of a get, list or watch. One
// that is not an unsigned 64-bit integer is the 400 of kube-apiserver's etcd3 store:
// "invalid resource version: " and its versioner's field error (`resourceVersion: Invalid
// value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`). Versions beyond etcd's
// int64 revisions parse as the largest one (a revision storage has not reached).
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		fe := field.Invalid(field.NewPath("resourceVersion"), rv, err.Error())
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", field.ErrorList{fe}.ToAggregate()))
	}
	return int64(min(n, math.MaxInt64)), nil
}

// checkObjectResourceVersion checks the metadata.resourceVersion a write sent. One that is
// not an unsigned 64-bit integer is the client's mistake, so it is a 400 worded as the
// etcd3 store words a bad resourceVersion parameter (`invalid resource version:
// metadata.resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid
// syntax`); kube-apiserver passes its versioner's error through as a 500 (kubernetes#139485),
// which would count a client error as a server fault. It returns the parsed version (0: none
// sent).
func checkObjectResourceVersion(rv string) (uint64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		fe := field.Invalid(field.NewPath("metadata", "resourceVersion"), rv, err.Error())
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", field.ErrorList{fe}.ToAggregate()))
	}
	return n, nil
}

// listError translates a storage error of a list read from start (under prefix)
// into upstream's answer.
func listError(err error, opts ListOptions, prefix, start string) error {
	if errors.Is(err, storage.ErrCompacted) {
		if opts.Continue != "" {
			se := apierrors.NewResourceExpired(tooOldContinue)
			se.ErrStatus.ListMeta.Continue = encodeContinue(latestRV, strings.TrimPrefix(start, prefix))
			return se
		}
		return apierrors.NewResourceExpired(tooOldList)
	}
	return internalError(err)
}

// listStart is where a list begins: the revision to read at (0: the latest) and the first
// key, from its continue token or resourceVersion, and the revision the latest must have
// reached (a resourceVersion not matched exactly: "not older than").
func listStart(prefix string, opts ListOptions) (rev int64, start string, atLeast int64, err error) {
	requested, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return 0, "", 0, err
	}
	if opts.Continue != "" {
		t, err := decodeContinue(opts.Continue)
		if err != nil {
			return 0, "", 0, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return 0, "", 0, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		rev = t.RV
		if rev == latestRV {
			rev = 0
		}
		return rev, prefix + t.Start, 0, nil
	}
	if requested != 0 && opts.exact() {
		return requested, "", 0, nil
	}
	return 0, "", requested, nil
}

// firstPage reads the first page of a list as lo asks: at lo.Revision, or at the latest
// revision, which must be at least atLeast. A revision the store has not reached is
// waited for (awaitRevision: at most TooLargeWait, then upstream's 504), then read.
func (s *Store) firstPage(ctx context.Context, prefix string, lo storage.ListOptions, atLeast int64, rv string) (storage.ListResult, error) {
	lr, err := s.cfg.Storage.List(ctx, prefix, lo)
	switch {
	case errors.Is(err, storage.ErrFutureRevision):
		atLeast = lo.Revision
	case err != nil || lr.Revision >= atLeast:
		return lr, err
	}
	if err := s.awaitRevision(ctx, atLeast, rv); err != nil {
		return storage.ListResult{}, err
	}
	return s.cfg.Storage.List(ctx, prefix, lo)
}

// ReadsUncountedPages reports whether the storage reads the pages of a long list
// without counting the rest of its range (storage.UncountedPages).
func (s *Store) ReadsUncountedPages() bool { return storage.ReadsUncountedPages(s.cfg.Storage) }

// ListEach is List without a limit, read from storage pageSize keys at a time at one
// revision: each page's matching objects go to page, with the list's resourceVersion
// (the same for every call; page is called at least once, with no items for an empty
// list). Nothing is held beyond one page, so a list of any length costs one page of
// memory. opts.Limit is ignored.
func (s *Store) ListEach(ctx context.Context, res *Resource, ns string, opts ListOptions, pageSize int64, page func(rv string, items []runtime.Object) error) error {
	var items []runtime.Object
	sel := newSelection(res, opts.Selector)
	return s.listPages(ctx, res, ns, opts, pageSize, func(rv int64, kvs []storage.KV, paced bool) error {
		items = items[:0]
		for i, kv := range kvs {
			if paced && i%PacedYieldEvery == PacedYieldEvery-1 {
				// A paced page is background work: let waiting requests run.
				goruntime.Gosched()
			}
			ok, err := sel.matches(kv)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			obj, err := decodeKV(res, kv)
			if err != nil {
				return internalError(err)
			}
			items = append(items, obj)
		}
		err := page(strconv.FormatInt(rv, 10), items)
		clear(items)
		return err
	})
}

// listPages reads the keys of an unlimited list pageSize at a time at one revision and
// gives each page to fn (at least once: an empty list is one empty page), with whether it
// was read paced (opts.Pace: every page after the first).
func (s *Store) listPages(ctx context.Context, res *Resource, ns string, opts ListOptions, pageSize int64, fn func(rev int64, kvs []storage.KV, paced bool) error) error {
	prefix := res.KeyPrefix(ns)
	rev, start, atLeast, err := listStart(prefix, opts)
	if err != nil {
		return err
	}
	if keys, irev, ok := s.indexedKeys(ctx, res, prefix, opts); ok {
		return s.indexedPages(ctx, keys, irev, pageSize, opts, prefix, fn)
	}
	for first := true; ; first = false {
		paced := !first && opts.Pace != nil
		if paced {
			if err := opts.Pace(ctx); err != nil {
				return err
			}
		}
		// Pages after the first are read at the first's revision, not counting the rest.
		lo := storage.ListOptions{Revision: rev, Limit: pageSize, StartKey: start, NoCount: true}
		var lr storage.ListResult
		if first {
			lr, err = s.firstPage(ctx, prefix, lo, atLeast, opts.ResourceVersion)
		} else {
			lr, err = s.cfg.Storage.List(ctx, prefix, lo)
		}
		if err != nil {
			return listError(err, opts, prefix, start)
		}
		rev = lr.Revision
		if err := fn(rev, lr.KVs, paced); err != nil {
			return err
		}
		if !lr.More || len(lr.KVs) == 0 {
			return nil
		}
		start = lr.KVs[len(lr.KVs)-1].Key + "\x00"
	}
}

// List returns one page of the resource's objects in ns ("" for all namespaces).
func (s *Store) List(ctx context.Context, res *Resource, ns string, opts ListOptions) (*ListResult, error) {
	prefix := res.KeyPrefix(ns)
	rev, start, atLeast, err := listStart(prefix, opts)
	if err != nil {
		return nil, err
	}
	if keys, irev, ok := s.indexedKeys(ctx, res, prefix, opts); ok {
		return s.indexedList(ctx, res, prefix, keys, irev, opts)
	}
	out := &ListResult{}
	sel := newSelection(res, opts.Selector)
	want := opts.Limit
	if want > 0 && !opts.Selector.Empty() {
		want = opts.Limit * 2
	}
	for first := true; ; first = false {
		lo := storage.ListOptions{Revision: rev, Limit: want, StartKey: start}
		var lr storage.ListResult
		if first {
			lr, err = s.firstPage(ctx, prefix, lo, atLeast, opts.ResourceVersion)
		} else {
			lr, err = s.cfg.Storage.List(ctx, prefix, lo)
		}
		if err != nil {
			return nil, listError(err, opts, prefix, start)
		}
		rev = lr.Revision
		i, err := appendMatches(res, sel, lr.KVs, out, opts.Limit)
		if err != nil {
			return nil, err
		}
		if i >= 0 && (i < len(lr.KVs)-1 || lr.More) {
			out.Continue = encodeContinue(rev, strings.TrimPrefix(lr.KVs[i].Key, prefix)+"\x00")
			if opts.Selector.Empty() {
				rem := lr.Remaining + int64(len(lr.KVs)-1-i)
				out.Remaining = &rem
			}
			out.ResourceVersion = strconv.FormatInt(rev, 10)
			return out, nil
		}
		if !lr.More || len(lr.KVs) == 0 {
			break
		}
		start = lr.KVs[len(lr.KVs)-1].Key + "\x00"
		// As upstream's store: a selector that matched too few reads pages twice as
		// large, up to maxFilteredPage, so that few matches among many objects cost a
		// few reads, not one per limit objects.
		if want > 0 && want < maxFilteredPage {
			want = min(want*2, maxFilteredPage)
		}
	}
	out.ResourceVersion = strconv.FormatInt(rev, 10)
	return out, nil
}

// appendMatches appends to out.Items the objects of kvs that sel matches, decoded, until
// out holds limit objects (0: no limit); it returns the index in kvs of the object that
// made limit, or -1.
func appendMatches(res *Resource, sel *selection, kvs []storage.KV, out *ListResult, limit int64) (int, error) {
	for i, kv := range kvs {
		ok, err := sel.matches(kv)
		if err != nil {
			return -1, err
		}
		if !ok {
			continue
		}
		obj, err := decodeKV(res, kv)
		if err != nil {
			return -1, internalError(err)
		}
		out.Items = append(out.Items, obj)
		if limit > 0 && int64(len(out.Items)) == limit {
			return i, nil
		}
	}
	return -1, nil
}

// maxFilteredPage bounds the pages a limited, filtered list reads.
const maxFilteredPage = 1000
