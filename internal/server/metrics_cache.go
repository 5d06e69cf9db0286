package server

import (
	"sync"
	"sync/atomic"
)

// childCache maps a metric's label set (a comparable key) to its resolved child. Reads,
// on every request, are an atomic load and a map lookup: no lock, no allocation, no
// shared write. A new label set copies the map under mu; label sets are few and bounded
// (the catalogue's resources, the admission plugins), so copies are rare.
type childCache[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex
}

// get returns the child of k, made by mk the first time.
func (c *childCache[K, V]) get(k K, mk func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
	}
	next := make(map[K]V, 1)
	if old != nil {
		for ok, ov := range *old {
			next[ok] = ov
		}
	}
	v := mk()
	next[k] = v
	c.m.Store(&next)
	return v
}
