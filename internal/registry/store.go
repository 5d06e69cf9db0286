package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/watchhub"
	"github.com/quotad/quotad/internal/storage"
)

// Admission runs the mutating and validating admission plugins (quota excluded).
type Admission interface {
	Admit(ctx context.Context, a *admission.Attributes) error
	Validate(ctx context.Context, a *admission.Attributes) error
}

// Quota is the ResourceQuota accounting the store commits with every write.
type Quota interface {
	// Prepare evaluates the part of one request's decision that does not depend on the
	// quotas (the usage of its objects), in the writer's goroutine; nil means no quota
	// governs the request.
	Prepare(a *admission.Attributes) (QuotaDecision, error)
	// Limits reports whether requests can be refused in a namespace without quotas
	// (limitedResources); when not, writes to such namespaces skip Prepare.
	Limits() bool
	// Usage recomputes status.used of a quota from the namespace's objects.
	Usage(rq *corev1.ResourceQuota, list func(schema.GroupResource) ([]runtime.Object, error)) (corev1.ResourceList, error)
}

// QuotaDecision decides one prepared request against the namespace's quotas and returns the
// quotas whose status.used changes (sharing all other fields with quotas, which it does not
// modify), or a refusal. A batch may check a request more than once.
type QuotaDecision interface {
	Check(quotas []corev1.ResourceQuota) ([]corev1.ResourceQuota, error)
}

// QuotaFinder is the optional interface of a QuotaDecision that reports what the quotas
// found at its last Check (quota.Prepared.Findings): the refusal of an Enforce quota,
// over-limit writes Warn and Audit quotas admitted, crossed warn-at thresholds. The store
// reads it once the write is settled, so only the Check its commit was planned on counts.
type QuotaFinder interface {
	Findings() []quota.Finding
}

// QuotaReport is what the store tells Config.QuotaFindings about one settled write whose
// last quota check found something.
type QuotaReport struct {
	// Namespace, Resource and Name are the write's.
	Namespace string
	Resource  schema.GroupResource
	Name      string
	// Admitted: the write committed (or, a dry run, would have); else an Enforce quota
	// refused it and Findings holds that refusal alone.
	Admitted bool
	DryRun   bool
	Findings []quota.Finding
}

// Config wires a Store.
type Config struct {
	Storage   storage.Store
	Catalogue *Catalogue
	// CustomStrategy, when set, is the strategy of a custom resource (validation against
	// the CRD version the catalogue serves it at); built-in kinds name theirs in Builtins.
	CustomStrategy func(res *Resource) Strategy
	Admission      Admission
	// Quota is nil when the ResourceQuota plugin is disabled.
	Quota  Quota
	Clock  func() time.Time
	Logger *slog.Logger
	// AfterCommit, when set, is called after each committed write (used to register CRDs at once).
	AfterCommit func(res *Resource, obj runtime.Object, deleted bool)
	// ObserveQuota, when set, is told the final outcome of every write evaluated against at
	// least one quota: nil (admitted), the refusal, or another error.
	ObserveQuota func(err error)
	// QuotaFindings, when set, is told the quota findings of every settled write that has
	// any (metrics, Events), after the store gave the client its Warning headers and the
	// audit event its annotation (deliverFindings). It runs in the writer's goroutine.
	QuotaFindings func(ctx context.Context, r QuotaReport)
	// ObserveRequest, when set, is told how many transactions each etcd request of the
	// combiner carried.
	ObserveRequest func(txns int)
	// ObserveWrites, when set, is told how many writes each committed group-commit
	// transaction of a namespace carried (its batch size).
	ObserveWrites func(writes int)
	// ObserveQuotaLatency, when set, is told for every namespaced write the quota
	// accounting prepared how long its quota step took, from the evaluation until the write
	// was settled (the guarded transaction that charges it included, as upstream's
	// ResourceQuota admission includes its status write), and whether quota refused it.
	ObserveQuotaLatency func(op admission.Operation, elapsed time.Duration, rejected bool)
	// MaxRetries bounds conflict retries of one write (default 128: with the growing waits
	// of conflictBackoff, a write contended by other replicas lands long before it runs
	// out; its request's deadline bounds it too).
	MaxRetries int
}

// Store is the generic registry over storage.Store.
type Store struct {
	cfg      Config
	queues   [64]queueShard
	hubs     watchhub.Hubs
	combiner combiner
	crq      crqSlots
	recent   recentWrites
}

// NewStore returns a Store.
func NewStore(cfg Config) *Store {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 128
	}
	return &Store{cfg: cfg}
}

// Catalogue returns the store's catalogue.
func (s *Store) Catalogue() *Catalogue { return s.cfg.Catalogue }

// Storage returns the underlying storage.
func (s *Store) Storage() storage.Store { return s.cfg.Storage }

var quotaGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")

// servicesGR is the group-resource of Services, whose writes carry their allocations.
var servicesGR = corev1.SchemeGroupVersion.WithResource("services").GroupResource()

// namespacesGR is the namespaces group-resource.
var namespacesGR = corev1.SchemeGroupVersion.WithResource("namespaces").GroupResource()

// errObjectChanged reports that the object's own guard failed: the caller re-reads.
var errObjectChanged = errors.New("object changed")

// internalError wraps an unexpected error as a 500.
func internalError(err error) error {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return apierrors.NewTimeoutError(err.Error(), 0)
	}
	if errors.Is(err, storage.ErrTooLarge) {
		return apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	return apierrors.NewInternalError(err)
}

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

// write is one object change on its way to storage.
type write struct {
	res   *Resource
	attrs *admission.Attributes
	key   string
	// guard is the mod revision the object key must still have (0: must not exist).
	guard int64
	// obj is the object to store; nil deletes the key.
	obj runtime.Object
	// value is the encoded object when known before the batch (quota writes are encoded
	// after their status is computed); size is its length, for batch limits.
	value []byte
	size  int
	// quota is the write's prepared quota decision (nil: no quota governs it); quotaErr
	// the error preparing it, reported where the decision would be.
	quota    QuotaDecision
	quotaErr error
	// prepared: Prepare ran (it is skipped while the namespace is known to have no quota).
	prepared bool
	// tentative: the write was prepared on this store's last write of the object, not on
	// what etcd holds (recent.go); a refusal is not final (the update is tried again on
	// what etcd holds), so its quota findings are not delivered.
	tentative bool
	// extraCmps and extraOps are what else the write's transaction guards and changes
	// (a Service's cluster IP and node port allocations).
	extraCmps []storage.Compare
	extraOps  []storage.Op
	// redo, when set (ResourceQuota updates and deletes), prepares the write again on the
	// object as stored at rev. Every charge in a namespace rewrites its quotas, so a quota
	// write prepared on what its request read would lose its guard to the charges queued
	// before it again and again; its commit instead runs redo on the quota it reads while
	// holding the namespace's lead, when the quota moved since (commitSolo).
	redo func(cur runtime.Object, rev int64) (*write, error)
}

// computeQuotaStatus sets status.hard = spec.hard and status.used from the namespace's
// objects at revision rev (the quota itself included, as it counts itself; quotaStatus).
func (s *Store) computeQuotaStatus(ctx context.Context, rq *corev1.ResourceQuota, rev int64) error {
	return quotaStatus(s.cfg.Quota, rq, s.objectsAt(ctx, rq.Namespace, rev))
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
