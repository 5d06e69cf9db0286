package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/registry/watchhub"
	"github.com/quotad/quotad/internal/storage"
)

// Admission runs the mutating and validating admission plugins (quota excluded).
type Admission interface {
	Admit(ctx context.Context, a *admission.Attributes) error
	Validate(ctx context.Context, a *admission.Attributes) error
}

// The quota accounting the store commits with every write, and what it reports (package
// commit defines them).
type (
	Quota         = commit.Quota
	QuotaDecision = commit.QuotaDecision
	QuotaFinder   = commit.QuotaFinder
	QuotaReport   = commit.QuotaReport
)

// Config wires a Store.
type Config struct {
	Storage storage.Store
	// ServiceRanges are the ranges Services take values from (zero: DefaultServiceRanges).
	ServiceRanges ServiceRanges
	Catalogue     *Catalogue
	// CustomStrategy, when set, is the strategy of a custom resource (validation against
	// the CRD version the catalogue serves it at); built-in kinds name theirs in Builtins.
	CustomStrategy func(res *Resource) Strategy
	Admission      Admission
	// Quota is nil when the ResourceQuota plugin is disabled.
	Quota Quota
	// Clock is the store's now: the times writes stamp on objects and the time clocked
	// validation reads (nil: the real clock).
	Clock  clock.PassiveClock
	Logger *slog.Logger
	// AfterCommit, when set, is called after each committed write (used to register CRDs at once).
	AfterCommit func(res *Resource, obj runtime.Object, deleted bool)
	// Observers are told of the commit engine's outcomes (metrics, findings).
	commit.Observers
	// MaxRetries bounds conflict retries of one write (default 128: a write contended by
	// other replicas takes its namespace's turn after a few, and lands long before it runs
	// out; its request's deadline bounds it too).
	MaxRetries int
	// Replica is this replica's identity among those sharing the storage, kept across
	// restarts (commit.Config.Replica; default: a random one).
	Replica string
	// ClusterQuotaNoRows stores cluster quotas' entries in OpenShift's shape, not as rows
	// (commit.Config.ClusterQuotaNoRows).
	ClusterQuotaNoRows bool
	// ObserveIndexedList, when set, is told of every list an index can serve (one value of
	// its resource's IndexedField, or a cluster-wide label selector): whether its index
	// served it, or every object was read.
	ObserveIndexedList func(gr schema.GroupResource, indexed bool)
}

// Store is the generic registry over storage.Store.
type Store struct {
	cfg     Config
	commits *commit.Engine
	hubs    watchhub.Hubs
	recent  recentWrites
	indexes fieldIndexes
}

// NewStore returns a Store.
func NewStore(cfg Config) *Store {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if !cfg.ServiceRanges.ClusterIPs.IsValid() {
		cfg.ServiceRanges = DefaultServiceRanges()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 128
	}
	s := &Store{cfg: cfg}
	s.commits = commit.New(commit.Config{
		Storage: cfg.Storage, Env: storeEnv{s}, Quota: cfg.Quota, Logger: cfg.Logger, MaxRetries: cfg.MaxRetries,
		Observers: cfg.Observers, Replica: cfg.Replica, ClusterQuotaNoRows: cfg.ClusterQuotaNoRows,
	})
	return s
}

// commit commits a write with its quota charges (commit.Engine.Commit); a Service's write
// carries its allocations.
func (s *Store) commit(ctx context.Context, w *write) (int64, error) {
	if w.GR == servicesGR && !w.Attrs.DryRun {
		svc, _ := w.Obj.(*corev1.Service)
		old, _ := w.Attrs.OldObject.(*corev1.Service)
		var err error
		if w.ExtraCmps, w.ExtraOps, err = s.allocationChanges(svc, old); err != nil {
			return 0, err
		}
	}
	// Quotas and cluster quotas are encoded once their status is computed.
	if w.Obj != nil && !w.Attrs.DryRun && w.GR != quotaGVR.GroupResource() && w.GR != crqGVR.GroupResource() {
		b, err := encodeStored(w.res, w.Obj)
		if err != nil {
			return 0, internalError(err)
		}
		w.Value, w.Size = b, len(b)
		if w.Namespaced {
			s.offerWrite(w)
		}
	}
	return s.commits.Commit(ctx, &w.Write)
}

// QueuedTxns reports how many transactions wait for the next etcd request.
func (s *Store) QueuedTxns() int { return s.commits.QueuedTxns() }

// resourceOf returns the resource of a group-resource the commit engine reads or writes
// itself: ResourceQuotas, cluster quotas, namespaces (their one version, looked up
// directly), else the catalogue's choice.
func (s *Store) resourceOf(gr schema.GroupResource) *Resource {
	switch gr {
	case quotaGVR.GroupResource():
		return s.cfg.Catalogue.Get(quotaGVR)
	case crqGVR.GroupResource():
		return s.cfg.Catalogue.Get(crqGVR)
	case namespacesGR:
		return s.cfg.Catalogue.Get(namespacesGVR)
	}
	return s.cfg.Catalogue.ForGroupResource(gr)
}

// storeEnv is the commit engine's view of the store (commit.Env).
type storeEnv struct{ s *Store }

func (e storeEnv) KeyPrefix(gr schema.GroupResource, ns string) string {
	return e.s.resourceOf(gr).KeyPrefix(ns)
}

func (e storeEnv) Encode(gr schema.GroupResource, obj runtime.Object) ([]byte, error) {
	return encodeStored(e.s.resourceOf(gr), obj)
}

func (e storeEnv) Decode(gr schema.GroupResource, kv storage.KV) (runtime.Object, error) {
	return decodeKV(e.s.resourceOf(gr), kv)
}

func (e storeEnv) List(ctx context.Context, gr schema.GroupResource, ns string, rev int64) ([]runtime.Object, error) {
	return e.s.listAt(ctx, gr, ns, rev)
}

func (e storeEnv) Offer(gr schema.GroupResource, key string, value []byte, obj func() runtime.Object) {
	e.s.offer(e.s.resourceOf(gr), key, value, obj)
}

// Catalogue returns the store's catalogue.
func (s *Store) Catalogue() *Catalogue { return s.cfg.Catalogue }

// Storage returns the underlying storage.
func (s *Store) Storage() storage.Store { return s.cfg.Storage }

var quotaGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")

// servicesGR is the group-resource of Services, whose writes carry their allocations.
var servicesGR = corev1.SchemeGroupVersion.WithResource("services").GroupResource()

// namespacesGVR is the namespaces resource.
var (
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	namespacesGR  = namespacesGVR.GroupResource()
)

// crqGVR is the cluster quotas' resource.
var crqGVR = clusterquota.SchemeGroupVersion.WithResource("clusterresourcequotas")

// errObjectChanged reports that the object's own guard failed: the caller re-reads.
var errObjectChanged = commit.ErrObjectChanged

// internalError wraps an unexpected error as upstream's status (commit.InternalError).
func internalError(err error) error { return commit.InternalError(err) }

// Get returns one object.
func (s *Store) Get(ctx context.Context, res *Resource, ns, name string) (runtime.Object, error) {
	obj, _, err := s.readCurrent(ctx, res, ns, name)
	return obj, err
}

// readCurrent reads and decodes one stored object with its mod revision; a missing object
// is upstream's 404.
func (s *Store) readCurrent(ctx context.Context, res *Resource, ns, name string) (runtime.Object, int64, error) {
	kv, err := s.cfg.Storage.Get(ctx, res.Key(ns, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, 0, apierrors.NewNotFound(res.GroupResource(), name)
	}
	if err != nil {
		return nil, 0, internalError(err)
	}
	obj, err := decodeKV(res, kv)
	if err != nil {
		return nil, 0, internalError(err)
	}
	return obj, kv.ModRevision, nil
}

// write is one object change on its way to storage: what the commit engine takes, and
// its resource.
type write struct {
	commit.Write
	res *Resource
}

// newWrite returns the write of obj (nil: a deletion) at key, guarded by the key's mod
// revision guard (0: it must not exist).
func newWrite(res *Resource, attrs *admission.Attributes, key string, guard int64, obj runtime.Object) *write {
	return &write{res: res, Write: commit.Write{GR: res.GroupResource(), Namespaced: res.Namespaced, Attrs: attrs, Key: key, Guard: guard, Obj: obj}}
}

// computeQuotaStatus sets status.hard = spec.hard and status.used from the namespace's
// objects at revision rev (the quota itself included, as it counts itself; quotaStatus).
func (s *Store) computeQuotaStatus(ctx context.Context, rq *corev1.ResourceQuota, rev int64) error {
	return commit.QuotaStatus(s.cfg.Quota, rq, s.objectsAt(ctx, rq.Namespace, rev))
}

// objectsAt lists a namespace's objects of a group-resource as stored at revision rev.
func (s *Store) objectsAt(ctx context.Context, ns string, rev int64) func(schema.GroupResource) ([]runtime.Object, error) {
	return func(gr schema.GroupResource) ([]runtime.Object, error) { return s.listAt(ctx, gr, ns, rev) }
}

// listAt returns every object of a group-resource in a namespace at revision rev.
func (s *Store) listAt(ctx context.Context, gr schema.GroupResource, ns string, rev int64) ([]runtime.Object, error) {
	res := s.cfg.Catalogue.ForGroupResource(gr)
	if res == nil {
		return nil, nil
	}
	lr, err := s.cfg.Storage.List(ctx, res.KeyPrefix(ns), storage.ListOptions{Revision: rev})
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(lr.KVs))
	for _, kv := range lr.KVs {
		obj, err := decodeKV(res, kv)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// ListObjects returns every object of a resource in a namespace at the latest revision,
// with the revision it was read at.
func (s *Store) ListObjects(ctx context.Context, res *Resource, ns string) ([]runtime.Object, int64, error) {
	lr, err := s.cfg.Storage.List(ctx, res.KeyPrefix(ns), storage.ListOptions{})
	if err != nil {
		return nil, 0, internalError(err)
	}
	out := make([]runtime.Object, 0, len(lr.KVs))
	for _, kv := range lr.KVs {
		obj, err := decodeKV(res, kv)
		if err != nil {
			return nil, 0, internalError(err)
		}
		out = append(out, obj)
	}
	return out, lr.Revision, nil
}

// specChanged reports whether anything but metadata and status differs, semantically (as
// upstream's strategies compare specs to bump metadata.generation).
func specChanged(a, b runtime.Object) bool {
	if ua, ok := a.(*unstructured.Unstructured); ok {
		ub, ok := b.(*unstructured.Unstructured)
		if !ok {
			return true
		}
		return !semantic.DeepEqual(withoutMetaAndStatus(ua.Object), withoutMetaAndStatus(ub.Object))
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	if va.Type() != vb.Type() {
		return true
	}
	for i := 0; i < va.NumField(); i++ {
		switch va.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if !semantic.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return true
		}
	}
	return false
}

// withoutMetaAndStatus returns the top-level fields of a custom resource other than
// apiVersion, kind, metadata and status.
func withoutMetaAndStatus(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		out[k] = v
	}
	return out
}

// invalid builds upstream's 422.
func invalid(res *Resource, name string, errs field.ErrorList) error {
	// Upstream names the stored kind: an events.k8s.io Event is refused as a core Event.
	if res.Storage != nil && res.Storage.Resource != nil {
		res = res.Storage.Resource
	}
	return apierrors.NewInvalid(res.GVK().GroupKind(), name, errs)
}

// objectMeta returns the metav1.Object of obj, which every served kind has.
func objectMeta(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("registry: %T has no metadata: %v", obj, err))
	}
	return m
}

// semanticEqual compares two objects the way upstream compares them for no-op detection.
func semanticEqual(a, b runtime.Object) bool { return semantic.DeepEqual(a, b) }

// semantic is apimachinery's equality.Semantic with quantities compared without scaling:
// a stored object may hold a value from before quantities were bounded (Quantity.Cmp
// against 1e1000000000 takes hours).
var semantic = quantity.Semantic()

// isQuotaWrite reports whether w writes a ResourceQuota.
func isQuotaWrite(w *write) bool { return w.GR == quotaGVR.GroupResource() }

// isClusterQuotaWrite reports whether w writes a cluster quota.
func isClusterQuotaWrite(w *write) bool { return w.GR == crqGVR.GroupResource() }

// CheckClusterQuotas recomputes every cluster quota from storage at one revision (the
// verifier's core and the tests' invariant checker, for cluster quotas).
func (s *Store) CheckClusterQuotas(ctx context.Context) ([]ClusterQuotaCheck, error) {
	return s.commits.CheckClusterQuotas(ctx)
}

// RepairClusterQuota writes a check's computed status (commit.Engine.RepairClusterQuota).
func (s *Store) RepairClusterQuota(ctx context.Context, c ClusterQuotaCheck) error {
	return s.commits.RepairClusterQuota(ctx, c)
}

// ClusterQuotaCheck compares one cluster quota's stored status with the status recomputed
// from storage.
type ClusterQuotaCheck = commit.ClusterQuotaCheck
