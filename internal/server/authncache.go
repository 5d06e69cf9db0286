package server

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/registry"
)

// uidIndex is authn.Objects: the UIDs of every ServiceAccount, Pod and Secret, kept by a
// list and a watch per resource and by this replica's own commits at once (a token
// requested for a ServiceAccount just created works at once). ServiceAccount token
// verification reads it on every request instead of storage. Entries only move forward
// in revision; a deletion leaves a tombstone until the watch delivers it.
type uidIndex struct {
	byRes map[string]*uidSet
}

type uidEntry struct {
	uid     types.UID
	rev     int64
	deleted bool
}

type uidSet struct {
	mu      sync.RWMutex
	entries map[string]uidEntry
	synced  chan struct{}
	once    sync.Once
}

// uidIndexed are the resources ServiceAccount tokens name.
var uidIndexed = []string{"serviceaccounts", "pods", "secrets"}

func newUIDIndex(ctx context.Context, store *registry.Store, log *slog.Logger) *uidIndex {
	x := &uidIndex{byRes: map[string]*uidSet{}}
	for _, r := range uidIndexed {
		s := &uidSet{entries: map[string]uidEntry{}, synced: make(chan struct{})}
		x.byRes[r] = s
		go s.run(ctx, store, store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource(r)), log)
	}
	return x
}

// waitSynced waits until every resource was listed once, or ctx ends.
func (x *uidIndex) waitSynced(ctx context.Context) error {
	for _, s := range x.byRes {
		select {
		case <-s.synced:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// UID implements authn.Objects.
func (x *uidIndex) UID(resource, ns, name string) (types.UID, bool) {
	s := x.byRes[resource]
	if s == nil {
		return "", false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.entries[ns+"/"+name]
	if !ok || e.deleted {
		return "", false
	}
	return e.uid, true
}

// observe applies a committed change of one of the indexed resources.
func (x *uidIndex) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	if res.GVR.Group != "" {
		return
	}
	if s := x.byRes[res.GVR.Resource]; s != nil {
		s.observe(obj, deleted, false)
	}
}

// observe records one change; a deletion the watch delivers drops the entry (the
// tombstone a commit left is no longer needed: the watch delivers in order).
func (s *uidSet) observe(obj runtime.Object, deleted, fromWatch bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rev, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	key := m.GetNamespace() + "/" + m.GetName()
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.entries[key]; ok && cur.rev >= rev && rev > 0 {
		return
	}
	if deleted && fromWatch {
		delete(s.entries, key)
		return
	}
	s.entries[key] = uidEntry{uid: m.GetUID(), rev: rev, deleted: deleted}
}

// install applies a list of every object at revision rev: what the list lacks is gone,
// unless a later revision of it was observed.
func (s *uidSet) install(objs []runtime.Object, rev int64) {
	s.mu.Lock()
	listed := make(map[string]bool, len(objs))
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			listed[m.GetNamespace()+"/"+m.GetName()] = true
		}
	}
	for k, e := range s.entries {
		if !listed[k] && e.rev <= rev {
			delete(s.entries, k)
		}
	}
	s.mu.Unlock()
	for _, o := range objs {
		s.observe(o, false, true)
	}
	s.once.Do(func() { close(s.synced) })
}

// run keeps the set current with listWatch.
func (s *uidSet) run(ctx context.Context, store *registry.Store, res *registry.Resource, log *slog.Logger) {
	listWatch(ctx, store, res, log, "token index", s.install,
		func(obj runtime.Object, deleted bool) { s.observe(obj, deleted, true) }, nil)
}
