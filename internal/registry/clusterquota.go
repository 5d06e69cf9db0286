package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/storage"
)

// Cluster quotas (quota.openshift.io/v1 ClusterResourceQuota, design.md §2).
//
// A cluster quota is charged like a ResourceQuota of every namespace it selects: a write's
// batch checks its namespace's ResourceQuotas and each selecting cluster quota's view
// (clusterquota.View: spec.quota with status.total) together, and its transaction puts the
// cluster quota with status.total and the namespace's entry moved by the same amounts.
//
//   - Which cluster quotas select a namespace is decided at the batch's read revision, from
//     the namespace's labels and annotations and the cluster quotas' selectors, and guarded
//     by the cluster-quota-set key: every cluster quota create, edit or delete and every
//     namespace change that moves a namespace into or out of a cluster quota puts it, so
//     a batch planned on another selection fails its guard and is evaluated again.
//   - A cluster quota is a key written by all the namespaces it selects. Batches touching
//     one take its slot (an in-process lock per cluster quota) from the moment they read it
//     until their transaction returned, so the batches of one replica follow each other
//     without conflicts; the slot keeps the last committed value, so they do not read it
//     back. Each transaction still guards the cluster quota by its mod revision: batches of
//     other replicas are caught and evaluated again.
//   - A cluster quota's status is never written by clients: every write of one computes it
//     complete from the namespaces it selects at a read revision R and commits only if none
//     of them changed after R (each one's usage epoch, which every namespaced transaction
//     puts) and no namespace was created, deleted or relabelled after R.

// crqGVR is the cluster quotas' resource.
var crqGVR = clusterquota.SchemeGroupVersion.WithResource("clusterresourcequotas")

// ClusterQuotaSetKey is put by every transaction that changes which cluster quotas exist,
// their specs, or which namespaces they select; every namespaced batch guards on it.
const ClusterQuotaSetKey = "/registry/quotad.io/cluster-quota-set"

// epochPrefix holds every namespace's usage epoch.
const epochPrefix = "/registry/quotad.io/usage-epoch/"

// maxEpochGuards is how many namespaces a cluster quota's recomputation guards one by one;
// beyond, it guards every namespace's epoch with one compare.
const maxEpochGuards = 100

func isClusterQuotaWrite(w *write) bool { return w.res.GroupResource() == crqGVR.GroupResource() }

// crqSlot serializes this replica's transactions that write one cluster quota and keeps
// its last known stored form (rev 0: unknown, read it).
type crqSlot struct {
	mu    sync.Mutex
	value []byte
	rev   int64
	obj   *clusterquota.ClusterResourceQuota
	// qmu guards the batches waiting to be joined (clusterquotajoin.go) and whether one of
	// them leads.
	qmu     sync.Mutex
	waiting []*crqJoin
	leading bool
}

// crqSlots holds the slots by name.
type crqSlots struct {
	mu    sync.Mutex
	slots map[string]*crqSlot
	// specs caches the cluster quotas (their selectors and specs) as of the set key's
	// revision setRev.
	setRev int64
	specs  []*clusterquota.ClusterResourceQuota
	known  bool
	// fill serializes filling specs.
	fill sync.Mutex
}

func (c *crqSlots) slot(name string) *crqSlot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots == nil {
		c.slots = map[string]*crqSlot{}
	}
	s := c.slots[name]
	if s == nil {
		s = &crqSlot{}
		c.slots[name] = s
	}
	return s
}

// lockSlots locks the slots of names in order (so two batches never wait on each other).
func (s *Store) lockSlots(names []string) []*crqSlot {
	sorted := slices.Clone(names)
	sort.Strings(sorted)
	out := make([]*crqSlot, 0, len(sorted))
	for _, n := range slices.Compact(sorted) {
		sl := s.crq.slot(n)
		sl.mu.Lock()
		out = append(out, sl)
	}
	return out
}

func unlockSlots(slots []*crqSlot) {
	for i := len(slots) - 1; i >= 0; i-- {
		slots[i].mu.Unlock()
	}
}

// heldQuota is a cluster quota a batch holds the slot of, as stored.
type heldQuota struct {
	slot   *crqSlot
	key    string
	obj    *clusterquota.ClusterResourceQuota
	stored storedQuota
}

// read returns the slot's cluster quota, reading it when unknown. Called with the slot held.
func (s *Store) readSlot(ctx context.Context, sl *crqSlot, name string) (*heldQuota, error) {
	res := s.cfg.Catalogue.Get(crqGVR)
	key := res.Key("", name)
	if sl.rev == 0 {
		kv, err := s.cfg.Storage.Get(ctx, key)
		if isNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, internalError(err)
		}
		obj, err := decodeKV(res, kv)
		if err != nil {
			return nil, internalError(err)
		}
		sl.value, sl.rev, sl.obj = kv.Value, kv.ModRevision, obj.(*clusterquota.ClusterResourceQuota)
		clusterquota.CacheCanonical(sl.obj)
	}
	return &heldQuota{slot: sl, key: key, obj: sl.obj, stored: storedQuota{value: sl.value, rev: sl.rev}}, nil
}

// clusterQuotasAt returns the cluster quotas stored at revision rev and the set key's mod
// revision then, from the cache when the set is unchanged (only specs and selectors are
// used: status.total moves without the set key).
func (s *Store) clusterQuotasAt(ctx context.Context, rev int64) ([]*clusterquota.ClusterResourceQuota, int64, error) {
	set, err := s.cfg.Storage.List(ctx, ClusterQuotaSetKey, storage.ListOptions{Revision: rev, Serializable: true})
	if err != nil {
		return nil, 0, err
	}
	var setRev int64
	for _, kv := range set.KVs {
		if kv.Key == ClusterQuotaSetKey {
			setRev = kv.ModRevision
		}
	}
	if setRev == 0 {
		return nil, 0, nil
	}
	if specs, ok := s.crq.cached(setRev); ok {
		return specs, setRev, nil
	}
	// One reader fills the cache; the others wait for it (a cluster quota over many
	// namespaces is big, and every namespace's first batch wants the set at once).
	s.crq.fill.Lock()
	defer s.crq.fill.Unlock()
	if specs, ok := s.crq.cached(setRev); ok {
		return specs, setRev, nil
	}
	res := s.cfg.Catalogue.Get(crqGVR)
	lr, err := s.cfg.Storage.List(ctx, res.KeyPrefix(""), storage.ListOptions{Revision: rev, Serializable: true})
	if err != nil {
		return nil, 0, err
	}
	specs := make([]*clusterquota.ClusterResourceQuota, 0, len(lr.KVs))
	for _, kv := range lr.KVs {
		// Only the name and the spec: the status (an entry per namespace) is skipped.
		var v struct {
			Metadata struct {
				Name string    `json:"name"`
				UID  types.UID `json:"uid"`
			} `json:"metadata"`
			Spec clusterquota.ClusterResourceQuotaSpec `json:"spec"`
		}
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			return nil, 0, err
		}
		specs = append(specs, &clusterquota.ClusterResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: v.Metadata.Name, UID: v.Metadata.UID}, Spec: v.Spec})
	}
	s.crq.mu.Lock()
	if setRev >= s.crq.setRev {
		s.crq.setRev, s.crq.specs, s.crq.known = setRev, specs, true
	}
	s.crq.mu.Unlock()
	return specs, setRev, nil
}

// cached returns the cached specs if they are those of set revision setRev.
func (c *crqSlots) cached(setRev int64) ([]*clusterquota.ClusterResourceQuota, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known && c.setRev == setRev {
		return c.specs, true
	}
	return nil, false
}

// namespaceAt reads a namespace at revision rev (nil when it does not exist). Its errors
// are storage's, unwrapped.
func (s *Store) namespaceAt(ctx context.Context, ns string, rev int64) (*corev1.Namespace, error) {
	res := s.cfg.Catalogue.Get(corev1.SchemeGroupVersion.WithResource("namespaces"))
	key := res.Key("", ns)
	lr, err := s.cfg.Storage.List(ctx, key, storage.ListOptions{Revision: rev, Serializable: true})
	if err != nil {
		return nil, err
	}
	for _, kv := range lr.KVs {
		if kv.Key != key {
			continue
		}
		obj, err := decodeKV(res, kv)
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}
	return nil, nil
}

// selecting returns the names of the cluster quotas (of specs) that select namespace n.
func selecting(specs []*clusterquota.ClusterResourceQuota, n *corev1.Namespace) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, c := range specs {
		if clusterquota.Selects(c.Spec.Selector, n.Labels, n.Annotations) {
			out = append(out, c.Name)
		}
	}
	return out
}

// readClusterBinding sets st's cluster quota set revision and the cluster quotas that
// select ns, at st.readRev. Its errors are storage's, unwrapped.
func (s *Store) readClusterBinding(ctx context.Context, ns string, st *nsState) error {
	specs, setRev, err := s.clusterQuotasAt(ctx, st.readRev)
	if err != nil {
		return err
	}
	st.crqSetRev = setRev
	if len(specs) == 0 {
		return nil
	}
	n, err := s.namespaceAt(ctx, ns, st.readRev)
	if err != nil {
		return err
	}
	st.crqs = selecting(specs, n)
	return nil
}

// usageIn computes one namespace's usage under a cluster quota's spec at revision rev, and
// returns the group-resources it counted.
func (s *Store) usageIn(ctx context.Context, crq *clusterquota.ClusterResourceQuota, ns string, rev int64) (corev1.ResourceList, []schema.GroupResource, error) {
	if s.cfg.Quota == nil {
		return corev1.ResourceList{}, nil, nil
	}
	view := clusterquota.View(crq, ns)
	view.Status.Hard = crq.Spec.Quota.Hard
	var grs []schema.GroupResource
	used, err := s.cfg.Quota.Usage(&view, func(gr schema.GroupResource) ([]runtime.Object, error) {
		if !slices.Contains(grs, gr) {
			grs = append(grs, gr)
		}
		return s.listAt(ctx, gr, ns, rev)
	})
	if err != nil {
		return nil, nil, internalError(err)
	}
	return used, grs, nil
}

// counted is what a recomputation read in one namespace.
type counted struct {
	ns  string
	grs []schema.GroupResource
}

// computeClusterQuotaStatus sets crq's complete status from the namespaces it selects at
// revision rev and returns what it counted in each.
func (s *Store) computeClusterQuotaStatus(ctx context.Context, crq *clusterquota.ClusterResourceQuota, rev int64) ([]counted, error) {
	nsRes := s.cfg.Catalogue.Get(corev1.SchemeGroupVersion.WithResource("namespaces"))
	lr, err := s.cfg.Storage.List(ctx, nsRes.KeyPrefix(""), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, internalError(err)
	}
	var usage []clusterquota.Usage
	var read []counted
	for _, kv := range lr.KVs {
		obj, err := decodeKV(nsRes, kv)
		if err != nil {
			return nil, internalError(err)
		}
		n := obj.(*corev1.Namespace)
		if !clusterquota.Selects(crq.Spec.Selector, n.Labels, n.Annotations) {
			continue
		}
		used, grs, err := s.usageIn(ctx, crq, n.Name, rev)
		if err != nil {
			return nil, err
		}
		usage = append(usage, clusterquota.Usage{Namespace: n.Name, Used: used})
		read = append(read, counted{n.Name, grs})
	}
	crq.Status = clusterquota.Status(crq.Spec, usage)
	return read, nil
}

// usageGuards are the compares that nothing counted in read changed after rev (the usage
// epochs of the group-resources counted, coarser when they are many) and that no namespace
// was created, relabelled or deleted since.
func usageGuards(read []counted, rev int64) []storage.Compare {
	cmps := []storage.Compare{{Target: storage.RangeNotModifiedAfter, Key: KeyPrefix(namespacesGR, ""), Revision: rev}}
	n := 0
	for _, c := range read {
		n += len(c.grs)
	}
	switch {
	case len(read) > maxEpochGuards:
		return append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: epochPrefix, Revision: rev})
	case n > maxEpochGuards:
		for _, c := range read {
			cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: EpochKey(c.ns), Revision: rev})
		}
		return cmps
	}
	for _, c := range read {
		for _, gr := range c.grs {
			cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: epochKeyFor(c.ns, gr), Revision: rev})
		}
	}
	return cmps
}

// sameButStatus reports whether two cluster quotas differ only in status and
// resourceVersion.
func sameButStatus(a, b *clusterquota.ClusterResourceQuota) bool {
	am, bm := a.ObjectMeta, b.ObjectMeta
	am.ResourceVersion, bm.ResourceVersion = "", ""
	return semantic.DeepEqual(am, bm) && semantic.DeepEqual(a.Spec, b.Spec)
}

// commitClusterQuota writes a cluster quota (create, update, status update or delete) with
// its status computed complete (I3), under its slot.
func (s *Store) commitClusterQuota(ctx context.Context, w *write) (int64, error) {
	res := w.res
	name := w.attrs.Name
	old, _ := w.attrs.OldObject.(*clusterquota.ClusterResourceQuota)
	sl := s.crq.slot(name)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for attempt := 0; attempt < s.cfg.MaxRetries; attempt++ {
		sl.rev = 0
		// 1. The object as stored now: a change of status only (charges) is not a conflict.
		guard := w.guard
		kv, err := s.cfg.Storage.Get(ctx, w.key)
		switch {
		case isNotFound(err):
			if guard != 0 {
				return 0, errObjectChanged
			}
		case err != nil:
			return 0, internalError(err)
		case kv.ModRevision != guard:
			if guard == 0 || old == nil {
				return 0, errObjectChanged
			}
			cur, err := decodeKV(res, kv)
			if err != nil {
				return 0, internalError(err)
			}
			if !sameButStatus(cur.(*clusterquota.ClusterResourceQuota), old) {
				return 0, errObjectChanged
			}
			guard = kv.ModRevision
		}
		// 2. Complete status at one revision, guarded by everything it read.
		rev, err := s.cfg.Storage.Revision(ctx)
		if err != nil {
			return 0, internalError(err)
		}
		txn := storage.Txn{Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: w.key, Revision: guard}}}
		if w.obj != nil {
			crq := w.obj.(*clusterquota.ClusterResourceQuota)
			read, err := s.computeClusterQuotaStatus(ctx, crq, rev)
			if err != nil {
				return 0, err
			}
			if w.attrs.DryRun {
				return 0, nil
			}
			txn.Compares = append(txn.Compares, usageGuards(read, rev)...)
			b, err := codec.EncodeForStorage(crq, res.GVK())
			if err != nil {
				return 0, internalError(err)
			}
			w.value = b
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: w.key, Value: b})
		} else {
			if w.attrs.DryRun {
				return 0, nil
			}
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpDelete, Key: w.key})
		}
		txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: ClusterQuotaSetKey})
		r, err := s.cfg.Storage.Txn(ctx, txn)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return 0, internalError(err)
		}
		if w.obj != nil {
			sl.value, sl.rev, sl.obj = w.value, r.Revision, w.obj.(*clusterquota.ClusterResourceQuota).DeepCopy()
		}
		return r.Revision, nil
	}
	return 0, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("too many concurrent changes, please try again"))
}

// commitNamespace writes a namespace and, in the same transaction, moves its usage into
// the cluster quotas that start selecting it and out of those that stop (or all, when it
// is deleted).
func (s *Store) commitNamespace(ctx context.Context, w *write, base storage.Txn) (int64, error) {
	ns := w.attrs.Name
	n, _ := w.obj.(*corev1.Namespace)
	for attempt := 0; attempt < s.cfg.MaxRetries; attempt++ {
		// 1. Which cluster quotas change: those whose entries or selectors say so.
		rev, err := s.cfg.Storage.Revision(ctx)
		if err != nil {
			return 0, internalError(err)
		}
		// Candidates: the cluster quotas whose selection of the namespace changes (each is
		// decided again on the stored cluster quota under its slot).
		specs, setRev, err := s.clusterQuotasAt(ctx, rev)
		if err != nil {
			return 0, internalError(err)
		}
		old, _ := w.attrs.OldObject.(*corev1.Namespace)
		var names []string
		for _, c := range specs {
			was := old != nil && clusterquota.Selects(c.Spec.Selector, old.Labels, old.Annotations)
			is := n != nil && clusterquota.Selects(c.Spec.Selector, n.Labels, n.Annotations)
			if was != is {
				names = append(names, c.Name)
			}
		}
		// The set of cluster quotas decided on must still be the stored one.
		txn := storage.Txn{Compares: append(slices.Clone(base.Compares), storage.Compare{Target: storage.ModRevisionEquals, Key: ClusterQuotaSetKey, Revision: setRev}), Ops: base.Ops}
		var r int64
		if len(names) == 0 {
			var res storage.TxnResult
			if res, err = s.cfg.Storage.Txn(ctx, txn); err == nil {
				r = res.Revision
			} else if !errors.Is(err, storage.ErrConflict) {
				err = internalError(err)
			}
		} else {
			// 2. Under their slots, each moved as stored, guarded.
			r, err = s.moveNamespace(ctx, txn, ns, n, names)
		}
		if errors.Is(err, storage.ErrConflict) {
			kv, gerr := s.cfg.Storage.Get(ctx, w.key)
			switch {
			case isNotFound(gerr):
				if w.guard != 0 {
					return 0, errObjectChanged
				}
			case gerr != nil:
				return 0, internalError(gerr)
			case kv.ModRevision != w.guard:
				return 0, errObjectChanged
			case w.guard == 0:
				return 0, errObjectChanged
			}
			continue
		}
		return r, err
	}
	return 0, apierrors.NewConflict(namespacesGR, ns, fmt.Errorf("too many concurrent changes, please try again"))
}

func (s *Store) moveNamespace(ctx context.Context, base storage.Txn, ns string, n *corev1.Namespace, names []string) (int64, error) {
	slots := s.lockSlots(names)
	defer unlockSlots(slots)
	rev, err := s.cfg.Storage.Revision(ctx)
	if err != nil {
		return 0, internalError(err)
	}
	txn := storage.Txn{Compares: slices.Clone(base.Compares), Ops: slices.Clone(base.Ops)}
	type put struct {
		sl  *crqSlot
		obj *clusterquota.ClusterResourceQuota
		b   []byte
	}
	var puts []put
	sort.Strings(names)
	for i, name := range slices.Compact(names) {
		sl := slots[i]
		sl.rev = 0
		h, err := s.readSlot(ctx, sl, name)
		if err != nil {
			return 0, err
		}
		if h == nil {
			continue
		}
		var moved *clusterquota.ClusterResourceQuota
		if n != nil && clusterquota.Selects(h.obj.Spec.Selector, n.Labels, n.Annotations) {
			used, grs, err := s.usageIn(ctx, h.obj, ns, rev)
			if err != nil {
				return 0, err
			}
			for _, gr := range grs {
				txn.Compares = append(txn.Compares, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: epochKeyFor(ns, gr), Revision: rev})
			}
			moved = clusterquota.WithNamespace(h.obj, ns, used)
		} else {
			moved = clusterquota.Without(h.obj, ns)
		}
		b, err := codec.EncodeClusterQuota(moved)
		if err != nil {
			return 0, internalError(err)
		}
		txn.Compares = append(txn.Compares, h.stored.guard(h.key))
		txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: h.key, Value: b})
		puts = append(puts, put{sl, moved, b})
	}
	txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: ClusterQuotaSetKey})
	r, err := s.cfg.Storage.Txn(ctx, txn)
	if err != nil {
		for _, sl := range slots {
			sl.rev = 0
		}
		if errors.Is(err, storage.ErrConflict) {
			return 0, err
		}
		return 0, internalError(err)
	}
	for _, p := range puts {
		p.sl.value, p.sl.rev, p.sl.obj = p.b, r.Revision, p.obj
	}
	return r.Revision, nil
}

// AppliedClusterQuotas returns the cluster quotas that select namespace ns, as its
// AppliedClusterResourceQuotas, read at one revision.
func (s *Store) AppliedClusterQuotas(ctx context.Context, ns string) (*ListResult, error) {
	rev, err := s.cfg.Storage.Revision(ctx)
	if err != nil {
		return nil, internalError(err)
	}
	out := &ListResult{ResourceVersion: fmt.Sprint(rev), Items: []runtime.Object{}}
	n, err := s.namespaceAt(ctx, ns, rev)
	if err != nil {
		return nil, internalError(err)
	}
	if n == nil {
		return out, nil
	}
	res := s.cfg.Catalogue.Get(crqGVR)
	lr, err := s.cfg.Storage.List(ctx, res.KeyPrefix(""), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, internalError(err)
	}
	for _, kv := range lr.KVs {
		obj, err := decodeKV(res, kv)
		if err != nil {
			return nil, internalError(err)
		}
		c := obj.(*clusterquota.ClusterResourceQuota)
		if clusterquota.Selects(c.Spec.Selector, n.Labels, n.Annotations) {
			out.Items = append(out.Items, clusterquota.Applied(c, ns))
		}
	}
	return out, nil
}

// Named returns the item of an applied list named name, or upstream's 404.
func (l *ListResult) Named(res *Resource, name string) (runtime.Object, error) {
	for _, o := range l.Items {
		if a, ok := o.(*clusterquota.AppliedClusterResourceQuota); ok && a.Name == name {
			return a, nil
		}
	}
	return nil, apierrors.NewNotFound(res.GroupResource(), name)
}
