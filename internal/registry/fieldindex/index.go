package fieldindex

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// Index is the keys of a resource's objects by the value of one field, at a revision.
// Its methods are safe for concurrent use.
type Index struct {
	mu     sync.Mutex
	synced bool
	rev    int64
	// byKey is each key's group, byValue each value's group; unknown holds the keys whose
	// value could not be read.
	byKey   map[string]*group
	byValue map[string]*group
	unknown *group
	// changed is closed (and replaced) whenever rev grows or the index resets.
	changed chan struct{}
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
	x.byKey, x.byValue = map[string]*group{}, map[string]*group{}
	x.unknown = &group{keys: map[string]struct{}{}}
}

// signal wakes every waiter (under mu).
func (x *Index) signal() {
	close(x.changed)
	x.changed = make(chan struct{})
}

// Put records key's value (known false: its value could not be read).
func (x *Index) Put(key, value string, known bool) {
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
	old := x.byKey[key]
	if old == g {
		return
	}
	if old != nil {
		x.drop(old, key)
	}
	g.keys[key] = struct{}{}
	x.byKey[key] = g
}

// Delete forgets key.
func (x *Index) Delete(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if g := x.byKey[key]; g != nil {
		x.drop(g, key)
		delete(x.byKey, key)
	}
}

// drop removes key from g, and g from byValue once empty (under mu).
func (x *Index) drop(g *group, key string) {
	delete(g.keys, key)
	if len(g.keys) == 0 && g != x.unknown {
		delete(x.byValue, g.value)
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
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.rev, x.synced
}

// Len is the number of keys held.
func (x *Index) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.byKey)
}

// Wait waits until the index is synced at rev or later, and reports whether it is; it
// returns false when ctx ends first, or when the index is or becomes unsynced (its feed
// loading, or ended: it does not sync again without a new feed).
func (x *Index) Wait(ctx context.Context, rev int64) bool {
	x.mu.Lock()
	for {
		if !x.synced {
			x.mu.Unlock()
			return false
		}
		if x.rev >= rev {
			x.mu.Unlock()
			return true
		}
		ch := x.changed
		x.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
		x.mu.Lock()
	}
}

// Keys returns, in order, the keys under prefix whose value is value or could not be read,
// and the revision they are the keys of; ok is false when the index is not synced.
func (x *Index) Keys(prefix, value string) (keys []string, rev int64, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.synced {
		return nil, 0, false
	}
	add := func(g *group) {
		for k := range g.keys {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
	}
	if g := x.byValue[value]; g != nil {
		add(g)
	}
	add(x.unknown)
	slices.Sort(keys)
	return keys, x.rev, true
}
