package controller

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// Cache is a watch-fed view of one resource's objects, an informer's store: Feed wraps the
// handler of a Loop.Watch so that each event updates the cache before the handler sees it.
// It lags storage (never leads it), so it answers the questions of watch handlers (which
// owner to enqueue) where a list from storage per event cost a read of the namespace; a
// sync that must see its own writes reads storage. Objects are shared: read-only.
type Cache struct {
	mu   sync.RWMutex
	objs map[string]map[string]runtime.Object // namespace → name → object
}

// named is what a cache keys objects by (metav1.Object has it, and so has a PodView).
type named interface {
	GetNamespace() string
	GetName() string
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{objs: map[string]map[string]runtime.Object{}}
}

// Feed returns a handler that records each event in the cache, then calls next (when set).
func (c *Cache) Feed(next Handler) Handler {
	return func(obj runtime.Object, deleted bool) {
		m, ok := obj.(named)
		if !ok {
			var err error
			if m, err = Meta(obj); err != nil {
				m = nil
			}
		}
		if m != nil {
			c.mu.Lock()
			ns, name := m.GetNamespace(), m.GetName()
			if deleted {
				delete(c.objs[ns], name)
				if len(c.objs[ns]) == 0 {
					delete(c.objs, ns)
				}
			} else {
				if c.objs[ns] == nil {
					c.objs[ns] = map[string]runtime.Object{}
				}
				c.objs[ns][name] = obj
			}
			c.mu.Unlock()
		}
		if next != nil {
			next(obj, deleted)
		}
	}
}

// Get returns the cached object of ns and name, or nil.
func (c *Cache) Get(ns, name string) runtime.Object {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.objs[ns][name]
}

// All returns every cached object, sorted by namespace and name.
func (c *Cache) All() []runtime.Object {
	c.mu.RLock()
	namespaces := make([]string, 0, len(c.objs))
	for ns := range c.objs {
		namespaces = append(namespaces, ns)
	}
	c.mu.RUnlock()
	sort.Strings(namespaces)
	var out []runtime.Object
	for _, ns := range namespaces {
		out = append(out, c.List(ns)...)
	}
	return out
}

// List returns the cached objects of ns, sorted by name.
func (c *Cache) List(ns string) []runtime.Object {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return byName(c.objs[ns], c.objs[ns])
}

// Range calls f with each cached object of ns, in no order, holding the cache's read lock
// (f must not call the cache).
func (c *Cache) Range(ns string, f func(runtime.Object)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, o := range c.objs[ns] {
		f(o)
	}
}

// byName returns the objects of objs named in names, sorted by name.
func byName[V any](names map[string]V, objs map[string]runtime.Object) []runtime.Object {
	sorted := slices.Sorted(maps.Keys(names))
	out := make([]runtime.Object, 0, len(sorted))
	for _, n := range sorted {
		out = append(out, objs[n])
	}
	return out
}
