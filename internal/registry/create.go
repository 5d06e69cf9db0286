package registry

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/registry/commit"
)

// WriteOptions are the options common to every write.
type WriteOptions struct {
	DryRun bool
	// SkipValidation is for writes the server itself makes that users may not make so:
	// the kubernetes Endpoints naming a loopback address of this replica.
	SkipValidation bool
}

// Result is a committed (or dry-run) write.
type Result struct {
	Object   runtime.Object
	Warnings []string
	// JSON, unless zero, is Object encoded exactly as stored plus its resourceVersion: the
	// HTTP edge may answer with it instead of encoding Object again.
	JSON codec.VersionedJSON
}

const generateNameChars = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix() string {
	b := make([]byte, 5)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(generateNameChars))))
		b[i] = generateNameChars[n.Int64()]
	}
	return string(b)
}

// Create stores a new object in namespace ns (ignored for cluster-scoped resources). The
// store keeps obj (watchers may share its maps and slices): callers must not modify obj, or
// the returned object, once Create is called. The same holds for the objects of Update.
func (s *Store) Create(ctx context.Context, res *Resource, ns string, obj runtime.Object, opts WriteOptions) (*Result, error) {
	m := objectMeta(obj)
	if res.Namespaced {
		if m.GetNamespace() != "" && m.GetNamespace() != ns {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		m.SetNamespace(ns)
	} else {
		m.SetNamespace("")
		ns = ""
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	requested, isService := obj.(*corev1.Service)
	for attempt := 0; ; attempt++ {
		work := obj
		if generated || isService {
			work = obj.DeepCopyObject()
		}
		if generated {
			objectMeta(work).SetName(m.GetGenerateName() + randomSuffix())
		}
		r, err := s.createOnce(ctx, res, ns, work, opts)
		if generated && attempt < 8 && apierrors.IsAlreadyExists(err) {
			continue
		}
		// A cluster IP or node port went to another service first: a requested one is
		// refused as upstream refuses it; one the server picked is picked again.
		var taken commit.ErrAllocated
		if isService && errors.As(err, &taken) {
			if refusal := s.allocationRefusal(work.(*corev1.Service), requested, taken.Key); refusal != nil || attempt == 8 {
				if refusal == nil {
					refusal = apierrors.NewConflict(res.GroupResource(), objectMeta(work).GetName(), fmt.Errorf("too many concurrent allocations, please try again"))
				}
				return nil, refusal
			}
			continue
		}
		return r, err
	}
}

func (s *Store) createOnce(ctx context.Context, res *Resource, ns string, obj runtime.Object, opts WriteOptions) (*Result, error) {
	m := objectMeta(obj)
	name := m.GetName()
	// 1. Defaults, then what the server sets on every create.
	s.defaultObject(res, obj)
	now := metav1.NewTime(s.cfg.Clock.Now().Truncate(1e9))
	m.SetUID(types.UID(uuid.NewUUID()))
	m.SetCreationTimestamp(now)
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	if mf := m.GetManagedFields(); mf != nil && managedfields.ValidateManagedFields(mf) != nil {
		m.SetManagedFields(nil) // as upstream, invalid ownership is dropped, not refused
	}
	if res.Generation {
		m.SetGeneration(1)
	} else {
		m.SetGeneration(0)
	}
	attrs := &admission.Attributes{
		Operation: admission.Create, Resource: res.GVR, Kind: res.GVK(),
		Namespace: ns, Name: name, Object: obj, DryRun: opts.DryRun, User: requestUser(ctx),
	}
	// 2. Mutating admission, validation, validating admission.
	if s.cfg.Admission != nil {
		if err := s.cfg.Admission.Admit(ctx, attrs); err != nil {
			return nil, err
		}
	}
	s.prepareForCreate(res, obj, attrs.User, now)
	if name == "" {
		return nil, invalid(res, name, field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if errs := s.validate(res, obj, nil); len(errs) > 0 && !opts.SkipValidation {
		return nil, invalid(res, name, errs)
	}
	if s.cfg.Admission != nil {
		if err := s.cfg.Admission.Validate(ctx, attrs); err != nil {
			return nil, err
		}
	}
	if err := s.allocate(ctx, obj, nil); err != nil {
		return nil, err
	}
	// A dry run commits nothing, so the name is checked here as the commit's guard would.
	if opts.DryRun {
		if _, err := s.cfg.Storage.Get(ctx, res.Key(ns, name)); err == nil {
			return nil, apierrors.NewAlreadyExists(res.GroupResource(), name)
		} else if !isNotFound(err) {
			return nil, internalError(err)
		}
	}
	// 3. One transaction: the object and every quota it charges.
	w := newWrite(res, attrs, res.Key(ns, name), 0, obj)
	rev, err := s.commit(ctx, w)
	if errors.Is(err, errObjectChanged) {
		return nil, apierrors.NewAlreadyExists(res.GroupResource(), name)
	}
	if err != nil {
		return nil, err
	}
	result := &Result{Object: obj}
	if !opts.DryRun {
		rv := strconv.FormatInt(rev, 10)
		m.SetResourceVersion(rv)
		if res.Type != nil && res.Storage == nil { // typed objects encode kind, apiVersion, then metadata
			result.JSON, _ = codec.NewVersionedJSON(w.Value, rv)
		}
		if s.cfg.AfterCommit != nil {
			s.cfg.AfterCommit(res, obj, false)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	result.Warnings = s.warnings(res, obj)
	return result, nil
}

func (s *Store) warnings(res *Resource, obj runtime.Object) []string {
	if w, ok := s.strategy(res).(Warner); ok {
		return w.Warnings(obj)
	}
	return nil
}

// validate runs the kind's validation (oldObj nil on create).
func (s *Store) validate(res *Resource, obj, oldObj runtime.Object) field.ErrorList {
	st := s.strategy(res)
	if st == nil {
		return nil
	}
	if oldObj == nil {
		return st.Validate(obj)
	}
	return st.ValidateUpdate(obj, oldObj)
}

// validateUpdate runs the subresource's own validation when it has one, else the kind's.
func (s *Store) validateUpdate(res *Resource, subresource string, obj, oldObj runtime.Object) field.ErrorList {
	if v, ok := s.strategy(res).(ClockedSubresourceValidator); ok && subresource != "" {
		if errs, ok := v.ValidateSubresourceUpdateAt(subresource, obj, oldObj, s.cfg.Clock.Now()); ok {
			return errs
		}
	}
	if v, ok := s.strategy(res).(SubresourceValidator); ok && subresource != "" {
		if errs, ok := v.ValidateSubresourceUpdate(subresource, obj, oldObj); ok {
			return errs
		}
	}
	return s.validate(res, obj, oldObj)
}

// prepareForCreate resets what users may not set on create, as upstream's strategies do:
// the kind's CreatePreparer, else the status of a resource with a status subresource.
func (s *Store) prepareForCreate(res *Resource, obj runtime.Object, user auth.User, now metav1.Time) {
	if p, ok := s.strategy(res).(CreatePreparer); ok {
		p.PrepareForCreate(obj, user, now)
		return
	}
	if !res.Status {
		return
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "status")
		return
	}
	clearStatus(obj)
}

// clearStatus zeroes the Status field of a typed object.
func clearStatus(obj runtime.Object) {
	setStatusFrom(obj, nil)
}

// allocate assigns what the server allocates on create and update (service cluster IPs and
// node ports); old is the stored object of an update, nil on create.
func (s *Store) allocate(ctx context.Context, obj, old runtime.Object) error {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil
	}
	oldSvc, _ := old.(*corev1.Service)
	return s.allocateService(ctx, svc, oldSvc)
}
