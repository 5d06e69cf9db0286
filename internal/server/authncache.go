package server

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/quotad/quotad/internal/registry"
)

// uidIndex is authn.Objects: the UIDs of every ServiceAccount, Pod and Secret, kept by a
// list and a watch per resource and by this replica's own commits at once (a token
// requested for a ServiceAccount just created works at once). ServiceAccount token
// verification reads it on every request instead of storage. A resource whose objects
// another watch-fed cache already holds with their UIDs (the pods the Node authorizer's
// graph follows) is read from that cache, so the server keeps one entry per pod, not two.
type uidIndex struct {
	byRes map[string]uidSource
}

// uidSource is what uidIndex reads one resource from: its own revSet (uidSet), or a cache
// kept for another purpose (objectCache).
type uidSource interface {
	uid(ns, name string) (types.UID, bool)
	waitSynced(ctx context.Context) error
}

// uidSet is a revSet of UIDs as a uidSource.
type uidSet struct{ *revSet[types.UID] }

func (s uidSet) uid(ns, name string) (types.UID, bool) { return s.get(ns, name) }

// uidIndexed are the resources ServiceAccount tokens name.
var uidIndexed = []string{"serviceaccounts", "pods", "secrets"}

// newUIDIndex starts the index, reading the resources in shared from the caches given and
// keeping the others itself.
func newUIDIndex(ctx context.Context, store *registry.Store, log *slog.Logger, shared map[string]uidSource) *uidIndex {
	x := &uidIndex{byRes: map[string]uidSource{}}
	for _, r := range uidIndexed {
		if src := shared[r]; src != nil {
			x.byRes[r] = src
			continue
		}
		s := newRevSet(func(m metav1.Object, _ runtime.Object) (types.UID, bool) { return m.GetUID(), true })
		x.byRes[r] = uidSet{s}
		go s.run(ctx, store, store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource(r)), "", log, "token index")
	}
	return x
}

// waitSynced waits until every resource was listed once, or ctx ends.
func (x *uidIndex) waitSynced(ctx context.Context) error {
	for _, s := range x.byRes {
		if err := s.waitSynced(ctx); err != nil {
			return err
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
	return s.uid(ns, name)
}

// observe applies a committed change of one of the indexed resources it keeps itself (a
// cache it reads from observes its own).
func (x *uidIndex) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	if res.GVR.Group != "" {
		return
	}
	if s, ok := x.byRes[res.GVR.Resource].(uidSet); ok {
		s.observe(obj, deleted, false)
	}
}

// bootstrapIndex is authn.BootstrapSecrets: the Secrets of bootstrap tokens in
// kube-system, kept as uidIndex keeps its UIDs (a token just created authenticates at
// once).
type bootstrapIndex struct{ set *revSet[*corev1.Secret] }

func newBootstrapIndex(ctx context.Context, store *registry.Store, log *slog.Logger) *bootstrapIndex {
	set := newRevSet(func(m metav1.Object, obj runtime.Object) (*corev1.Secret, bool) {
		s, ok := obj.(*corev1.Secret)
		return s, ok && m.GetNamespace() == metav1.NamespaceSystem && strings.HasPrefix(m.GetName(), bootstrapapi.BootstrapTokenSecretPrefix)
	})
	go set.run(ctx, store, store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("secrets")), metav1.NamespaceSystem, log, "bootstrap token index")
	return &bootstrapIndex{set: set}
}

// BootstrapSecret implements authn.BootstrapSecrets (the Secret is shared: read-only).
func (x *bootstrapIndex) BootstrapSecret(name string) (*corev1.Secret, bool) {
	return x.set.get(metav1.NamespaceSystem, name)
}

// observe applies a committed change of a Secret.
func (x *bootstrapIndex) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	if res.GVR.Group == "" && res.GVR.Resource == "secrets" {
		x.set.observe(obj, deleted, false)
	}
}

// revSet keeps a value of each object a filter keeps, by namespace and name, from a list,
// a watch and this replica's commits. Entries only move forward in revision; a deletion
// leaves a tombstone until the watch delivers it. The names are the objects' own strings
// (shared with the watch hub's objects and the other indexes), not a key made per object.
type revSet[T any] struct {
	keep    func(m metav1.Object, obj runtime.Object) (T, bool)
	mu      sync.RWMutex
	entries map[string]map[string]revEntry[T]
	synced  chan struct{}
	once    sync.Once
}

type revEntry[T any] struct {
	val     T
	rev     int64
	deleted bool
}

func newRevSet[T any](keep func(m metav1.Object, obj runtime.Object) (T, bool)) *revSet[T] {
	return &revSet[T]{keep: keep, entries: map[string]map[string]revEntry[T]{}, synced: make(chan struct{})}
}

// waitSynced waits until the set was listed once, or ctx ends.
func (s *revSet[T]) waitSynced(ctx context.Context) error {
	select {
	case <-s.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// get returns the value kept for ns/name, if any.
func (s *revSet[T]) get(ns, name string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.entries[ns][name]
	if !ok || e.deleted {
		var zero T
		return zero, false
	}
	return e.val, true
}

// observe records one change; a deletion the watch delivers drops the entry (the
// tombstone a commit left is no longer needed: the watch delivers in order). An object
// the filter does not keep is dropped as if deleted.
func (s *revSet[T]) observe(obj runtime.Object, deleted, fromWatch bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	val, kept := s.keep(m, obj)
	deleted = deleted || !kept
	rev, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	ns, name := m.GetNamespace(), m.GetName()
	s.mu.Lock()
	defer s.mu.Unlock()
	names := s.entries[ns]
	cur, ok := names[name]
	// Older events change nothing, nor do events of the revision held, but the watch's
	// deletion of a commit's tombstone (the same revision: a deleted object carries its
	// deletion's), which it ends.
	if ok && rev > 0 && (cur.rev > rev || cur.rev == rev && !(cur.deleted && deleted && fromWatch)) {
		return
	}
	if deleted && (fromWatch || (!ok && !kept)) {
		delete(names, name)
		if len(names) == 0 {
			delete(s.entries, ns)
		}
		return
	}
	if names == nil {
		names = map[string]revEntry[T]{}
		s.entries[ns] = names
	}
	names[name] = revEntry[T]{val: val, rev: rev, deleted: deleted}
}

// install applies a list of every object at revision rev: what the list lacks is gone,
// unless a later revision of it was observed.
func (s *revSet[T]) install(objs []runtime.Object, rev int64) {
	s.mu.Lock()
	listed := make(map[[2]string]bool, len(objs))
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			listed[[2]string{m.GetNamespace(), m.GetName()}] = true
		}
	}
	for ns, names := range s.entries {
		for name, e := range names {
			if !listed[[2]string{ns, name}] && e.rev <= rev {
				delete(names, name)
			}
		}
		if len(names) == 0 {
			delete(s.entries, ns)
		}
	}
	s.mu.Unlock()
	for _, o := range objs {
		s.observe(o, false, true)
	}
	s.once.Do(func() { close(s.synced) })
}

// run keeps the set current with a list and watch of res in namespace ns ("": all). The
// watch hands over the watch hub's objects themselves, not copies: keep only reads them,
// and what it keeps is never modified.
func (s *revSet[T]) run(ctx context.Context, store *registry.Store, res *registry.Resource, ns string, log *slog.Logger, what string) {
	listWatchIn(ctx, store, res, ns, log, what, true, nil, s.install,
		func(obj runtime.Object, deleted bool) { s.observe(obj, deleted, true) }, nil)
}
