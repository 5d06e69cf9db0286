package fieldindex

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Index is the keys of a resource's objects by the value of one field, at a revision.
// Its methods are safe for concurrent use.
type Index struct {
	// mu: the feed writes under it, lists read under its read lock (a list of every key
	// does not hold up the others).
	mu     sync.RWMutex
	synced bool
	rev    int64
	// byKey is each key's group and labels, byValue each value's group; unknown holds the
	// keys whose value could not be read.
	byKey   map[string]entry
	byValue map[string]*group
	unknown *group
	// sets interns the label sets of the keys (a Deployment's pods share one), by their
	// canonical text.
	sets map[string]*labelSet
	// changed is closed (and replaced) whenever rev grows or the index resets.
	changed chan struct{}
}

// entry is one key's group and label set (nil: its labels could not be read).
type entry struct {
	g      *group
	labels *labelSet
}

// labelSet is one set of labels, shared by the keys that have it.
type labelSet struct {
	text   string
	labels map[string]string
	refs   int
}

// group is the keys with one value (or with none readable).
type group struct {
	value string
	keys  map[string]struct{}
}

// New returns an empty, unsynced index.
func New() *Index {
	x := &Index{changed: make(chan struct{})}
	x.clear()
	return x
}

func (x *Index) clear() {
	x.byKey, x.byValue, x.sets = map[string]entry{}, map[string]*group{}, map[string]*labelSet{}
	x.unknown = &group{keys: map[string]struct{}{}}
}

// signal wakes every waiter (under mu).
func (x *Index) signal() {
	close(x.changed)
	x.changed = make(chan struct{})
}

// Put records key's value and labels (known false: they could not be read). The labels
// are kept as given: the caller never modifies them afterwards.
func (x *Index) Put(key, value string, labels map[string]string, known bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	g := x.unknown
	if known {
		g = x.byValue[value]
		if g == nil {
			g = &group{value: value, keys: map[string]struct{}{}}
			x.byValue[value] = g
		}
	}
	old, had := x.byKey[key]
	e := entry{g: g}
	if known {
		if had && old.labels != nil && sameLabels(old.labels.labels, labels) {
			e.labels = old.labels
			old.labels.refs++
		} else {
			e.labels = x.intern(labels)
		}
	}
	if had {
		x.drop(old, key)
	}
	g.keys[key] = struct{}{}
	x.byKey[key] = e
}

// Delete forgets key.
func (x *Index) Delete(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, ok := x.byKey[key]; ok {
		x.drop(e, key)
		delete(x.byKey, key)
	}
}

// intern returns the shared set equal to labels, counting one more key (under mu).
func (x *Index) intern(labels map[string]string) *labelSet {
	text := canonical(labels)
	ls := x.sets[text]
	if ls == nil {
		ls = &labelSet{text: text, labels: labels}
		x.sets[text] = ls
	}
	ls.refs++
	return ls
}

// canonical is a text that two label sets share exactly when they are equal.
func canonical(labels map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// drop removes key from its group and its label set, forgetting either once empty (under
// mu).
func (x *Index) drop(e entry, key string) {
	g := e.g
	delete(g.keys, key)
	if len(g.keys) == 0 && g != x.unknown {
		delete(x.byValue, g.value)
	}
	if ls := e.labels; ls != nil {
		if ls.refs--; ls.refs == 0 {
			delete(x.sets, ls.text)
		}
	}
}

// Synced marks the index as holding every key up to rev: after the load, and after each
// batch of events or progress notification at rev. An older rev changes nothing.
func (x *Index) Synced(rev int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.synced && rev <= x.rev {
		return
	}
	x.synced, x.rev = true, rev
	x.signal()
}

// Reset forgets every key and unsyncs the index (its feed ended).
func (x *Index) Reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.clear()
	x.synced, x.rev = false, 0
	x.signal()
}

// Revision is the revision the index holds every key up to, and whether it is synced.
func (x *Index) Revision() (int64, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rev, x.synced
}

// Len is the number of keys held.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.byKey)
}

// Wait waits until the index is synced at rev or later, and reports whether it is; it
// returns false when ctx ends first, or when the index is or becomes unsynced (its feed
// loading, or ended: it does not sync again without a new feed).
func (x *Index) Wait(ctx context.Context, rev int64) bool {
	x.mu.RLock()
	for {
		if !x.synced {
			x.mu.RUnlock()
			return false
		}
		if x.rev >= rev {
			x.mu.RUnlock()
			return true
		}
		ch := x.changed
		x.mu.RUnlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
		x.mu.RLock()
	}
}

// Select returns, in order, the keys under prefix whose value is *value (any value when
// value is nil) and whose labels satisfy match (any labels when match is nil), with the
// keys that could not be read; considered is how many keys under prefix had the value
// (all of them when value is nil). rev is the revision they are the keys of; ok is false
// when the index is not synced. match is asked once per distinct label set.
func (x *Index) Select(prefix string, value *string, match func(labels map[string]string) bool) (keys []string, considered int, rev int64, ok bool) {
	keys, considered, rev, ok = x.selectUnsorted(prefix, value, match)
	slices.Sort(keys)
	return keys, considered, rev, ok
}

// selectUnsorted is Select without the order (under the read lock).
func (x *Index) selectUnsorted(prefix string, value *string, match func(labels map[string]string) bool) (keys []string, considered int, rev int64, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.synced {
		return nil, 0, 0, false
	}
	var memo map[*labelSet]bool
	take := func(k string, e entry) {
		if !strings.HasPrefix(k, prefix) {
			return
		}
		considered++
		if match != nil && e.labels != nil {
			ok, seen := memo[e.labels]
			if !seen {
				if memo == nil {
					memo = map[*labelSet]bool{}
				}
				ok = match(e.labels.labels)
				memo[e.labels] = ok
			}
			if !ok {
				return
			}
		}
		keys = append(keys, k)
	}
	if value == nil {
		for k, e := range x.byKey {
			take(k, e)
		}
	} else {
		for _, g := range []*group{x.byValue[*value], x.unknown} {
			if g == nil {
				continue
			}
			for k := range g.keys {
				take(k, x.byKey[k])
			}
		}
	}
	return keys, considered, x.rev, true
}
