package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/registry/graceful"
)

// SubresourceBinding is the pods/binding update: the pod's node, annotations and
// PodScheduled condition set by the server, which pod update validation would refuse.
const SubresourceBinding = "binding"

// UpdateFunc turns the current object (a fresh copy the function may change) into the
// desired one. It may return a Conflict (stale resourceVersion) or any API error.
type UpdateFunc func(current runtime.Object) (runtime.Object, error)

// Update changes one object (or its "status" subresource), retrying fn on concurrent
// changes. Objects whose finalizers are gone while being deleted are removed.
func (s *Store) Update(ctx context.Context, res *Resource, ns, name, subresource string, fn UpdateFunc, opts WriteOptions) (*Result, error) {
	if !res.Namespaced {
		ns = ""
	}
	key := res.Key(ns, name)
	for attempt := 0; attempt < s.cfg.MaxRetries; attempt++ {
		// The first attempt starts from this store's last write of the object, when it
		// remembers one (recent.go); every other from etcd.
		old, rev, recent, err := s.readForUpdate(ctx, res, ns, name, key, attempt == 0 && !opts.DryRun)
		if err != nil {
			return nil, err
		}
		obj, err := fn(old.DeepCopyObject())
		if err != nil {
			if recent {
				continue // perhaps refused for being stale: ask etcd
			}
			return nil, err
		}
		r, err := s.updateOnce(ctx, res, ns, name, subresource, old, obj, rev, fn, opts, recent)
		// A node port picked for this update went to another write: pick again.
		if errors.Is(err, errObjectChanged) || errors.As(err, new(commit.ErrAllocated)) || (recent && err != nil) {
			continue
		}
		return r, err
	}
	return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("too many concurrent changes, please try again"))
}

// readForUpdate returns the object an update starts from and its mod revision: this
// store's last write of it when useRecent and it remembers one (recent reports that), else
// what etcd holds.
func (s *Store) readForUpdate(ctx context.Context, res *Resource, ns, name, key string, useRecent bool) (obj runtime.Object, rev int64, recent bool, err error) {
	if useRecent {
		if kv, ok := s.recent.take(key); ok {
			if obj, err := decodeKV(res, kv); err == nil {
				return obj, kv.ModRevision, true, nil
			}
		}
	}
	obj, rev, err = s.readCurrent(ctx, res, ns, name)
	return obj, rev, false, err
}

// updateOnce prepares and commits one attempt of an update. fn is the update, which the
// commit of a ResourceQuota may run again on the quota as it finds it (see write.redo).
// recent: old is this store's last write of the object, not read from etcd; then a no-op
// or a deletion is errObjectChanged (the caller confirms it on what etcd holds).
func (s *Store) updateOnce(ctx context.Context, res *Resource, ns, name, subresource string, old, obj runtime.Object, rev int64, fn UpdateFunc, opts WriteOptions, recent bool) (*Result, error) {
	u, err := s.prepareUpdate(ctx, res, ns, name, subresource, old, obj, rev, opts)
	if err != nil {
		return nil, err
	}
	if recent && (u.deletes || u.noop != nil) {
		return nil, errObjectChanged
	}
	switch {
	case u.deletes:
		return s.finishDelete(ctx, res, ns, name, old, rev, nil, opts)
	case u.noop != nil:
		return u.noop, nil
	}
	w := u.w
	w.Tentative = recent
	if isQuotaWrite(w) {
		// Every write in the namespace moves the quota's status.used and so its mod
		// revision: the commit runs the update again on the quota it reads under its
		// namespace's lead, so that edits are serialized with charges instead of racing
		// them. A resourceVersion sent by the client is still checked against what fn
		// sees then.
		w.Redo = func(cur runtime.Object, curRev int64) (*commit.Write, error) {
			obj, err := fn(cur.DeepCopyObject())
			if err != nil {
				return nil, err
			}
			u, err := s.prepareUpdate(ctx, res, ns, name, subresource, cur, obj, curRev, opts)
			if err != nil {
				return nil, err
			}
			if u.w == nil {
				return nil, errObjectChanged // a no-op or a deletion now: start over
			}
			return &u.w.Write, nil
		}
	}
	newRev, err := s.commit(ctx, w)
	if err != nil {
		return nil, err
	}
	obj = w.Obj // the object the commit wrote (redo may have replaced it)
	if !opts.DryRun {
		if w.Redo == nil && !isClusterQuotaWrite(w) { // quotas are rewritten by every charge
			s.recent.put(w.Key, w.Value, newRev)
		}
		objectMeta(obj).SetResourceVersion(strconv.FormatInt(newRev, 10))
		if s.cfg.AfterCommit != nil {
			s.cfg.AfterCommit(res, obj, false)
		}
		if rq, ok := obj.(*corev1.ResourceQuota); ok && subresource == "status" {
			s.restoreQuotaStatus(ctx, res, rq)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	return &Result{Object: obj, Warnings: s.updateWarnings(res, subresource, obj, old)}, nil
}

func (s *Store) updateWarnings(res *Resource, subresource string, obj, old runtime.Object) []string {
	if w, ok := s.strategy(res).(UpdateWarner); ok {
		return w.UpdateWarnings(subresource, obj, old)
	}
	return s.warnings(res, obj)
}

// preparedUpdate is an update ready to commit (w), or what it turned out to be: a no-op
// (answered with noop) or, its finalizers all gone while being deleted, the deletion.
type preparedUpdate struct {
	w       *write
	noop    *Result
	deletes bool
}

// prepareUpdate turns the desired object into the write of an update of old (stored at
// rev): what the server owns, defaults, admission and validation. It writes nothing.
func (s *Store) prepareUpdate(ctx context.Context, res *Resource, ns, name, subresource string, old, obj runtime.Object, rev int64, opts WriteOptions) (preparedUpdate, error) {
	m := objectMeta(obj)
	om := objectMeta(old)
	if m.GetName() != "" && m.GetName() != name {
		return preparedUpdate{}, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if res.Namespaced && m.GetNamespace() != "" && m.GetNamespace() != ns {
		return preparedUpdate{}, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	// 1. Optimistic concurrency: a resourceVersion in the body must be the stored one
	// (compared as numbers, as upstream's versioner compares them).
	sent, err := checkObjectResourceVersion(m.GetResourceVersion())
	if err != nil {
		return preparedUpdate{}, err
	}
	if stored, _ := strconv.ParseUint(om.GetResourceVersion(), 10, 64); sent != 0 && sent != stored {
		return preparedUpdate{}, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	// 2. What the server owns: identity, timestamps, and the spec/status split.
	m.SetName(name)
	m.SetNamespace(om.GetNamespace())
	m.SetUID(om.GetUID())
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetDeletionTimestamp(om.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	m.SetResourceVersion(om.GetResourceVersion())
	m.SetGeneration(om.GetGeneration())
	// Field ownership (server-side apply) stays as stored unless the update sets it, validly.
	if mf := m.GetManagedFields(); mf == nil || managedfields.ValidateManagedFields(mf) != nil {
		m.SetManagedFields(om.GetManagedFields())
	}
	switch {
	case subresource == SubresourceBinding:
		// pods/binding: the server's own change of spec.nodeName, annotations and the
		// PodScheduled condition; nothing else of fn's object differs from old.
	case isStatusLike(subresource):
		setSpecFrom(obj, old)
		if k, ok := s.strategy(res).(StatusMetadataKeeper); !ok || !k.StatusKeepsMetadata() {
			m.SetLabels(om.GetLabels())
			m.SetAnnotations(om.GetAnnotations())
			m.SetFinalizers(om.GetFinalizers())
			m.SetOwnerReferences(om.GetOwnerReferences())
		}
	case res.Status:
		setStatusFrom(obj, old)
	}
	if subresource == "" {
		s.defaultUpdate(res, obj, old)
		if err := s.allocate(ctx, obj, old); err != nil {
			return preparedUpdate{}, err
		}
	}
	if p, ok := s.strategy(res).(UpdatePreparer); ok {
		p.PrepareForUpdate(obj, old, subresource, s.now())
	}
	if res.Generation && subresource == "" && specChanged(obj, old) {
		m.SetGeneration(om.GetGeneration() + 1)
	}
	attrs := &admission.Attributes{
		Operation: admission.Update, Resource: res.GVR, Subresource: subresource, Kind: res.GVK(),
		Namespace: ns, Name: name, Object: obj, OldObject: old, DryRun: opts.DryRun, User: requestUser(ctx),
	}
	// 3. Finalizers all gone while deleting with no grace period left: the update is the
	// deletion. An object in a graceful deletion waits for its zero-grace delete.
	if om.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 && !isNamespaceHeld(obj) && graceful.NoGraceLeft(om) {
		return preparedUpdate{deletes: true}, nil
	}
	if s.cfg.Admission != nil && subresource == "" {
		if err := s.cfg.Admission.Admit(ctx, attrs); err != nil {
			return preparedUpdate{}, err
		}
	}
	// A binding changes what pod update validation forbids (spec.nodeName) and is checked
	// where it is made: it is not validated as an update (nor are the writes that skip
	// validation), so the validation is not computed for them either.
	if !opts.SkipValidation && subresource != SubresourceBinding {
		if errs := s.validateUpdate(res, subresource, obj, old); len(errs) > 0 {
			return preparedUpdate{}, invalid(res, name, errs)
		}
	}
	if s.cfg.Admission != nil {
		if err := s.cfg.Admission.Validate(ctx, attrs); err != nil {
			return preparedUpdate{}, err
		}
	}
	// 4. A no-op update writes nothing, keeps the resourceVersion and emits no event, as
	// upstream, for every kind and subresource.
	if same := s.asStored(obj, old, subresource); same != nil {
		same.GetObjectKind().SetGroupVersionKind(res.GVK())
		return preparedUpdate{noop: &Result{Object: same}}, nil
	}
	return preparedUpdate{w: newWrite(res, attrs, res.Key(ns, name), rev, obj)}, nil
}

// isNamespaceHeld reports a namespace still held by its spec finalizers.
func isNamespaceHeld(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}

// FinalizeNamespace removes the namespace's spec finalizers (the /finalize subresource) and
// deletes it when nothing else holds it.
func (s *Store) FinalizeNamespace(ctx context.Context, name string, body *corev1.Namespace) (*Result, error) {
	res := s.cfg.Catalogue.Get(corev1.SchemeGroupVersion.WithResource("namespaces"))
	sent, err := checkObjectResourceVersion(body.ResourceVersion)
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < s.cfg.MaxRetries; attempt++ {
		old, cur, err := s.readCurrent(ctx, res, "", name)
		if err != nil {
			return nil, err
		}
		// A resourceVersion in the body must be the stored one, as for any update.
		if sent != 0 && sent != uint64(cur) {
			return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		nsObj := old.DeepCopyObject().(*corev1.Namespace)
		nsObj.Spec.Finalizers = body.Spec.Finalizers
		if errs := s.validateUpdate(res, "finalize", nsObj, old); len(errs) > 0 {
			return nil, invalid(res, name, errs)
		}
		var r *Result
		if semanticEqual(nsObj, old) {
			return &Result{Object: nsObj}, nil // a no-op writes nothing
		}
		if nsObj.DeletionTimestamp != nil && len(nsObj.Spec.Finalizers) == 0 && len(nsObj.Finalizers) == 0 {
			r, err = s.finishDelete(ctx, res, "", name, old, cur, nil, WriteOptions{})
		} else {
			attrs := &admission.Attributes{Operation: admission.Update, Resource: res.GVR, Subresource: "finalize", Kind: res.GVK(), Name: name, Object: nsObj, OldObject: old, User: requestUser(ctx)}
			var rev int64
			rev, err = s.commit(ctx, newWrite(res, attrs, res.Key("", name), cur, nsObj))
			if err == nil {
				nsObj.ResourceVersion = strconv.FormatInt(rev, 10)
				r = &Result{Object: nsObj}
			}
		}
		if errors.Is(err, errObjectChanged) {
			continue
		}
		return r, err
	}
	return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("too many concurrent changes, please try again"))
}

// now returns the store clock as a metav1.Time truncated to seconds.
func (s *Store) now() metav1.Time { return metav1.NewTime(s.cfg.Clock.Now().Truncate(1e9)) }

// asStored returns the object an update would store when that is the stored one (old), or
// nil when the update changes something. A ResourceQuota's status.used is the server's:
// the write's transaction recomputes it, and storage already holds it exactly (I1); its
// status.hard is spec.hard unless the write is to /status (see writtenQuotaStatus). So a
// quota write that changes nothing else is a no-op whatever used it sent, answered with the
// stored status.
func (s *Store) asStored(obj, old runtime.Object, subresource string) runtime.Object {
	if rq, ok := obj.(*corev1.ResourceQuota); ok {
		cmp := rq.DeepCopy()
		if subresource != "status" {
			cmp.Status.Hard = cmp.Spec.Hard.DeepCopy()
		}
		if s.cfg.Quota != nil {
			cmp.Status.Used = old.(*corev1.ResourceQuota).Status.Used.DeepCopy()
		}
		obj = cmp
	}
	if semanticEqual(obj, old) {
		return obj
	}
	return nil
}
