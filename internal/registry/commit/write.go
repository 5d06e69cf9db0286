package commit

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/storage"
)

// Write is one object change on its way to storage.
type Write struct {
	// GR is the object's group-resource; Namespaced whether the resource is namespaced.
	GR         schema.GroupResource
	Namespaced bool
	Attrs      *admission.Attributes
	Key        string
	// Guard is the mod revision the object key must still have (0: must not exist).
	Guard int64
	// Obj is the object to store; nil deletes the key.
	Obj runtime.Object
	// Value is the encoded object when known before the batch (quota writes are encoded
	// after their status is computed); Size is its length, for batch limits.
	Value []byte
	Size  int
	// Decision is the write's prepared quota decision (nil: no quota governs it);
	// DecisionErr the error preparing it, reported where the decision would be.
	Decision    QuotaDecision
	DecisionErr error
	// Prepared: Prepare ran (it is skipped while the namespace is known to have no quota).
	Prepared bool
	// Tentative: the write was prepared on the store's last write of the object, not on
	// what etcd holds; a refusal is not final (the update is tried again on what etcd
	// holds), so its quota findings are not delivered.
	Tentative bool
	// ExtraCmps and ExtraOps are what else the write's transaction guards and changes
	// (a Service's cluster IP and node port allocations).
	ExtraCmps []storage.Compare
	ExtraOps  []storage.Op
	// Redo, when set (ResourceQuota updates and deletes), prepares the write again on the
	// object as stored at rev. Every charge in a namespace rewrites its quotas, so a quota
	// write prepared on what its request read would lose its guard to the charges queued
	// before it again and again; its commit instead runs Redo on the quota it reads while
	// holding the namespace's lead, when the quota moved since (commitSolo).
	Redo func(cur runtime.Object, rev int64) (*Write, error)
}

// Quota is the ResourceQuota accounting committed with every write.
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
// over-limit writes Warn and Audit quotas admitted, crossed warn-at thresholds. It is read
// once the write is settled, so only the Check its commit was planned on counts.
type QuotaFinder interface {
	Findings() []quota.Finding
}

// QuotaReport is what Config.QuotaFindings is told about one settled write whose last
// quota check found something.
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

// Env is what the engine reads and tells of the store around it: the keys and stored forms
// of the kinds it reads and writes itself (ResourceQuotas, cluster quotas, namespaces),
// lists of any kind at a revision (to count usage), and the watch hubs that may stand a
// written quota for its stored bytes. Other writes come encoded (Write.Value).
type Env interface {
	// KeyPrefix is the key prefix of a group-resource's objects in namespace ns.
	KeyPrefix(gr schema.GroupResource, ns string) string
	// Encode returns the stored form of an object of gr.
	Encode(gr schema.GroupResource, obj runtime.Object) ([]byte, error)
	// Decode decodes a stored object of gr and sets its resourceVersion.
	Decode(gr schema.GroupResource, kv storage.KV) (runtime.Object, error)
	// List returns every object of gr in namespace ns at revision rev (nil for a
	// group-resource the store does not serve).
	List(ctx context.Context, gr schema.GroupResource, ns string, rev int64) ([]runtime.Object, error)
	// Offer tells the watch hub of gr, if any, the object about to be stored as value at
	// key; obj returns an object standing for it that no writer modifies.
	Offer(gr schema.GroupResource, key string, value []byte, obj func() runtime.Object)
}

// Group-resources the engine treats apart.
var (
	quotaGR      = corev1.SchemeGroupVersion.WithResource("resourcequotas").GroupResource()
	namespacesGR = corev1.SchemeGroupVersion.WithResource("namespaces").GroupResource()
)

// quotaGVK is the ResourceQuota kind (its stored form).
var quotaGVK = corev1.SchemeGroupVersion.WithKind("ResourceQuota")

// QuotaSetKey is the per-namespace key every ResourceQuota object write (create, update,
// delete, and the verifier's repair of a status) puts: batches guard on it to learn that no
// quota they did not charge changed but by usage (pipelined batches its revision, solo ones
// the prefix, which holds the namespace's turn too: TurnKey).
func QuotaSetKey(ns string) string { return "/registry/quotad.io/quota-set/" + ns + "/" }

// EpochKey is the per-namespace prefix of the usage epochs every namespaced transaction puts
// (EpochKeyFor) unless it puts one of the namespace's quotas; quota recomputation guards on
// it and on the namespace's quotas to learn that nothing in the namespace changed.
func EpochKey(ns string) string { return epochPrefix + ns + "/" }

// EpochKeyFor is the usage epoch of one group-resource in a namespace, under EpochKey(ns):
// a transaction puts the epoch of each group-resource it writes, so a guard on EpochKey(ns)
// sees every write of the namespace, and a guard on EpochKeyFor only those of that
// group-resource (a cluster quota's recomputation guards on what its usage counts).
func EpochKeyFor(ns string, gr schema.GroupResource) string { return EpochKey(ns) + gr.String() }

// ErrObjectChanged reports that the object's own guard failed: the caller reads again.
var ErrObjectChanged = errors.New("object changed")

// ErrAllocated reports that a value a write takes was taken by another write first.
type ErrAllocated struct{ Key string }

func (e ErrAllocated) Error() string { return "allocated by another service: " + e.Key }

// InternalError wraps an unexpected error as upstream's status: a timeout for an ended
// context, 413 for a transaction too large, else a 500. API statuses pass unchanged.
func InternalError(err error) error {
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

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
