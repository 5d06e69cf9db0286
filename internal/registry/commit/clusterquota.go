package commit

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
	"github.com/quotad/quotad/internal/quota/quantity"
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
//     of them changed after R (each one's usage epochs, which every namespaced transaction
//     puts unless it puts one of the namespace's quotas, and its quotas) and no namespace was
//     created, deleted or relabelled after R.

// crqGR is the cluster quotas' group-resource.
var crqGR = clusterquota.SchemeGroupVersion.WithResource("clusterresourcequotas").GroupResource()

// ClusterQuotaSetKey is put by every transaction that changes which cluster quotas exist,
// their specs, or which namespaces they select; every namespaced batch guards on it.
const ClusterQuotaSetKey = "/registry/quotad.io/cluster-quota-set"

// epochPrefix holds every namespace's usage epoch.
const epochPrefix = "/registry/quotad.io/usage-epoch/"

// maxEpochGuards is how many namespaces a cluster quota's recomputation guards one by one;
// beyond, it guards every namespace's epoch with one compare.
const maxEpochGuards = 100

func isClusterQuotaWrite(w *Write) bool { return w.GR == crqGR }

// crqSlot serializes this replica's transactions that write one cluster quota and keeps
// its last known stored form (rev 0: unknown, read it).
type crqSlot struct {
	mu    sync.Mutex
	value []byte
	rev   int64
	obj   *clusterquota.ClusterResourceQuota
	// qmu guards the batches waiting to be joined (join.go) and whether one of
	// them leads.
	qmu     sync.Mutex
	waiting []*crqJoin
	leading bool
	// enc encodes the cluster quota, keeping the entries no charge changed (under mu).
	enc codec.ClusterQuotaEncoder
}

// forget drops what the slot keeps of its cluster quota. Called with the slot held.
func (sl *crqSlot) forget() {
	sl.value, sl.rev, sl.obj, sl.enc = nil, 0, nil, codec.ClusterQuotaEncoder{NoRows: sl.enc.NoRows}
}

// encode returns a cluster quota's stored form, with the slot's encoder. Called with the
// slot held.
func (sl *crqSlot) encode(crq *clusterquota.ClusterResourceQuota) ([]byte, error) {
	return sl.enc.Encode(crq)
}

// crqSlots holds the slots by name.
type crqSlots struct {
	// noRows is given to every slot's encoder (Config.ClusterQuotaNoRows).
	noRows bool
	mu     sync.Mutex
	slots  map[string]*crqSlot
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
		s = &crqSlot{enc: codec.ClusterQuotaEncoder{NoRows: c.noRows}}
		c.slots[name] = s
	}
	return s
}

// lockSlots locks the slots of names in order (so two batches never wait on each other).
func (e *Engine) lockSlots(names []string) []*crqSlot {
	sorted := slices.Clone(names)
	sort.Strings(sorted)
	out := make([]*crqSlot, 0, len(sorted))
	for _, n := range slices.Compact(sorted) {
		sl := e.crq.slot(n)
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
func (e *Engine) readSlot(ctx context.Context, sl *crqSlot, name string) (*heldQuota, error) {
	key := e.env.KeyPrefix(crqGR, "") + name
	if sl.rev == 0 {
		kv, err := e.cfg.Storage.Get(ctx, key)
		if isNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, InternalError(err)
		}
		obj, err := e.env.Decode(crqGR, kv)
		if err != nil {
			return nil, InternalError(err)
		}
		sl.value, sl.rev, sl.obj = kv.Value, kv.ModRevision, obj.(*clusterquota.ClusterResourceQuota)
		clusterquota.CacheCanonical(sl.obj)
	}
	return &heldQuota{slot: sl, key: key, obj: sl.obj, stored: storedQuota{value: sl.value, rev: sl.rev}}, nil
}

// clusterQuotasAt returns the cluster quotas stored at revision rev and the set key's mod
// revision then, from the cache when the set is unchanged (only specs and selectors are
// used: status.total moves without the set key).
func (e *Engine) clusterQuotasAt(ctx context.Context, rev int64) ([]*clusterquota.ClusterResourceQuota, int64, error) {
	set, err := e.cfg.Storage.List(ctx, ClusterQuotaSetKey, storage.ListOptions{Revision: rev, Serializable: true})
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
	if specs, ok := e.crq.cached(setRev); ok {
		return specs, setRev, nil
	}
	// One reader fills the cache; the others wait for it (a cluster quota over many
	// namespaces is big, and every namespace's first batch wants the set at once).
	e.crq.fill.Lock()
	defer e.crq.fill.Unlock()
	if specs, ok := e.crq.cached(setRev); ok {
		return specs, setRev, nil
	}
	lr, err := e.cfg.Storage.List(ctx, e.env.KeyPrefix(crqGR, ""), storage.ListOptions{Revision: rev, Serializable: true})
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
	e.crq.mu.Lock()
	if setRev >= e.crq.setRev {
		e.crq.setRev, e.crq.specs, e.crq.known = setRev, specs, true
	}
	e.crq.mu.Unlock()
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

// NamespaceAt reads a namespace at revision rev (nil when it does not exist). Its errors
// are storage's, unwrapped.
func (e *Engine) NamespaceAt(ctx context.Context, ns string, rev int64) (*corev1.Namespace, error) {
	key := e.env.KeyPrefix(namespacesGR, "") + ns
	lr, err := e.cfg.Storage.List(ctx, key, storage.ListOptions{Revision: rev, Serializable: true})
	if err != nil {
		return nil, err
	}
	for _, kv := range lr.KVs {
		if kv.Key != key {
			continue
		}
		obj, err := e.env.Decode(namespacesGR, kv)
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
func (e *Engine) readClusterBinding(ctx context.Context, ns string, st *nsState) error {
	specs, setRev, err := e.clusterQuotasAt(ctx, st.readRev)
	if err != nil {
		return err
	}
	st.crqSetRev = setRev
	if len(specs) == 0 {
		return nil
	}
	n, err := e.NamespaceAt(ctx, ns, st.readRev)
	if err != nil {
		return err
	}
	st.crqs = selecting(specs, n)
	return nil
}

// usageIn computes one namespace's usage under a cluster quota's spec at revision rev, and
// returns the group-resources it counted.
func (e *Engine) usageIn(ctx context.Context, crq *clusterquota.ClusterResourceQuota, ns string, rev int64) (corev1.ResourceList, []schema.GroupResource, error) {
	if e.cfg.Quota == nil {
		return corev1.ResourceList{}, nil, nil
	}
	view := clusterquota.View(crq, ns)
	view.Status.Hard = crq.Spec.Quota.Hard
	var grs []schema.GroupResource
	used, err := e.cfg.Quota.Usage(&view, func(gr schema.GroupResource) ([]runtime.Object, error) {
		if !slices.Contains(grs, gr) {
			grs = append(grs, gr)
		}
		return e.env.List(ctx, gr, ns, rev)
	})
	if err != nil {
		return nil, nil, InternalError(err)
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
func (e *Engine) computeClusterQuotaStatus(ctx context.Context, crq *clusterquota.ClusterResourceQuota, rev int64) ([]counted, error) {
	lr, err := e.cfg.Storage.List(ctx, e.env.KeyPrefix(namespacesGR, ""), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, InternalError(err)
	}
	var usage []clusterquota.Usage
	var read []counted
	for _, kv := range lr.KVs {
		obj, err := e.env.Decode(namespacesGR, kv)
		if err != nil {
			return nil, InternalError(err)
		}
		n := obj.(*corev1.Namespace)
		if !clusterquota.Selects(crq.Spec.Selector, n.Labels, n.Annotations) {
			continue
		}
		used, grs, err := e.usageIn(ctx, crq, n.Name, rev)
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
// epochs of the group-resources counted, coarser when they are many, and the namespaces'
// quotas: a write that charges a quota puts it instead of the epochs) and that no
// namespace was created, relabelled or deleted since.
func (e *Engine) usageGuards(read []counted, rev int64) []storage.Compare {
	cmps := []storage.Compare{{Target: storage.RangeNotModifiedAfter, Key: e.env.KeyPrefix(namespacesGR, ""), Revision: rev}}
	if len(read) > maxEpochGuards {
		return append(cmps,
			storage.Compare{Target: storage.RangeNotModifiedAfter, Key: epochPrefix, Revision: rev},
			storage.Compare{Target: storage.RangeNotModifiedAfter, Key: e.env.KeyPrefix(quotaGR, ""), Revision: rev})
	}
	n := 0
	for _, c := range read {
		n += len(c.grs)
	}
	for _, c := range read {
		cmps = append(cmps, e.quotaGuard(c.ns, rev))
		if n > maxEpochGuards {
			cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: EpochKey(c.ns), Revision: rev})
			continue
		}
		for _, gr := range c.grs {
			cmps = append(cmps, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: EpochKeyFor(c.ns, gr), Revision: rev})
		}
	}
	return cmps
}

// quotaGuard is the compare that none of ns's quotas was put after rev: with the usage
// epochs, it tells a recomputation that nothing it counted in ns changed (see planBatch).
func (e *Engine) quotaGuard(ns string, rev int64) storage.Compare {
	return storage.Compare{Target: storage.RangeNotModifiedAfter, Key: e.env.KeyPrefix(quotaGR, ns), Revision: rev}
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
func (e *Engine) commitClusterQuota(ctx context.Context, w *Write) (int64, error) {
	name := w.Attrs.Name
	old, _ := w.Attrs.OldObject.(*clusterquota.ClusterResourceQuota)
	sl := e.crq.slot(name)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for attempt := 0; attempt < e.cfg.MaxRetries; attempt++ {
		sl.rev = 0
		// 1. The object as stored now: a change of status only (charges) is not a conflict.
		guard := w.Guard
		kv, err := e.cfg.Storage.Get(ctx, w.Key)
		switch {
		case isNotFound(err):
			if guard != 0 {
				return 0, ErrObjectChanged
			}
		case err != nil:
			return 0, InternalError(err)
		case kv.ModRevision != guard:
			if guard == 0 || old == nil {
				return 0, ErrObjectChanged
			}
			cur, err := e.env.Decode(crqGR, kv)
			if err != nil {
				return 0, InternalError(err)
			}
			if !sameButStatus(cur.(*clusterquota.ClusterResourceQuota), old) {
				return 0, ErrObjectChanged
			}
			guard = kv.ModRevision
		}
		// 2. Complete status at one revision, guarded by everything it read.
		rev, err := e.cfg.Storage.Revision(ctx)
		if err != nil {
			return 0, InternalError(err)
		}
		txn := storage.Txn{Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: w.Key, Revision: guard}}}
		if w.Obj != nil {
			crq := w.Obj.(*clusterquota.ClusterResourceQuota)
			read, err := e.computeClusterQuotaStatus(ctx, crq, rev)
			if err != nil {
				return 0, err
			}
			if w.Attrs.DryRun {
				return 0, nil
			}
			txn.Compares = append(txn.Compares, e.usageGuards(read, rev)...)
			b, err := e.env.Encode(crqGR, crq)
			if err != nil {
				return 0, InternalError(err)
			}
			w.Value = b
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: w.Key, Value: b})
		} else {
			if w.Attrs.DryRun {
				return 0, nil
			}
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpDelete, Key: w.Key})
		}
		txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: ClusterQuotaSetKey})
		r, err := e.cfg.Storage.Txn(ctx, txn)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return 0, InternalError(err)
		}
		if w.Obj != nil {
			sl.value, sl.rev, sl.obj = w.Value, r.Revision, w.Obj.(*clusterquota.ClusterResourceQuota).DeepCopy()
		} else {
			// Deleted: the slot forgets the value, the object and the encoder's entries
			// (a status entry per namespace), which would otherwise stay for as long as
			// the process runs; the slot itself stays, as batches may hold it.
			sl.forget()
		}
		return r.Revision, nil
	}
	return 0, apierrors.NewConflict(crqGR, name, fmt.Errorf("too many concurrent changes, please try again"))
}

// commitNamespace writes a namespace and, in the same transaction, moves its usage into
// the cluster quotas that start selecting it and out of those that stop (or all, when it
// is deleted).
func (e *Engine) commitNamespace(ctx context.Context, w *Write, base storage.Txn) (int64, error) {
	ns := w.Attrs.Name
	n, _ := w.Obj.(*corev1.Namespace)
	for attempt := 0; attempt < e.cfg.MaxRetries; attempt++ {
		// 1. Which cluster quotas change: those whose entries or selectors say so.
		rev, err := e.cfg.Storage.Revision(ctx)
		if err != nil {
			return 0, InternalError(err)
		}
		// Candidates: the cluster quotas whose selection of the namespace changes (each is
		// decided again on the stored cluster quota under its slot).
		specs, setRev, err := e.clusterQuotasAt(ctx, rev)
		if err != nil {
			return 0, InternalError(err)
		}
		old, _ := w.Attrs.OldObject.(*corev1.Namespace)
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
			if res, err = e.cfg.Storage.Txn(ctx, txn); err == nil {
				r = res.Revision
			} else if !errors.Is(err, storage.ErrConflict) {
				err = InternalError(err)
			}
		} else {
			// 2. Under their slots, each moved as stored, guarded.
			r, err = e.moveNamespace(ctx, txn, ns, n, names)
		}
		if errors.Is(err, storage.ErrConflict) {
			kv, gerr := e.cfg.Storage.Get(ctx, w.Key)
			switch {
			case isNotFound(gerr):
				if w.Guard != 0 {
					return 0, ErrObjectChanged
				}
			case gerr != nil:
				return 0, InternalError(gerr)
			case kv.ModRevision != w.Guard:
				return 0, ErrObjectChanged
			case w.Guard == 0:
				return 0, ErrObjectChanged
			}
			continue
		}
		return r, err
	}
	return 0, apierrors.NewConflict(namespacesGR, ns, fmt.Errorf("too many concurrent changes, please try again"))
}

func (e *Engine) moveNamespace(ctx context.Context, base storage.Txn, ns string, n *corev1.Namespace, names []string) (int64, error) {
	slots := e.lockSlots(names)
	defer unlockSlots(slots)
	rev, err := e.cfg.Storage.Revision(ctx)
	if err != nil {
		return 0, InternalError(err)
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
		h, err := e.readSlot(ctx, sl, name)
		if err != nil {
			return 0, err
		}
		if h == nil {
			continue
		}
		var moved *clusterquota.ClusterResourceQuota
		if n != nil && clusterquota.Selects(h.obj.Spec.Selector, n.Labels, n.Annotations) {
			used, grs, err := e.usageIn(ctx, h.obj, ns, rev)
			if err != nil {
				return 0, err
			}
			txn.Compares = append(txn.Compares, e.quotaGuard(ns, rev))
			for _, gr := range grs {
				txn.Compares = append(txn.Compares, storage.Compare{Target: storage.RangeNotModifiedAfter, Key: EpochKeyFor(ns, gr), Revision: rev})
			}
			moved = clusterquota.WithNamespace(h.obj, ns, used)
		} else {
			moved = clusterquota.Without(h.obj, ns)
		}
		b, err := sl.encode(moved)
		if err != nil {
			return 0, InternalError(err)
		}
		txn.Compares = append(txn.Compares, h.stored.guard(h.key))
		txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: h.key, Value: b})
		puts = append(puts, put{sl, moved, b})
	}
	txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: ClusterQuotaSetKey})
	r, err := e.cfg.Storage.Txn(ctx, txn)
	if err != nil {
		for _, sl := range slots {
			sl.rev = 0
		}
		if errors.Is(err, storage.ErrConflict) {
			return 0, err
		}
		return 0, InternalError(err)
	}
	for _, p := range puts {
		p.sl.value, p.sl.rev, p.sl.obj = p.b, r.Revision, p.obj
	}
	return r.Revision, nil
}

var semantic = quantity.Semantic()
