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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/registry/graceful"
	"github.com/quotad/quotad/internal/storage"
)

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }

// DeleteResult is the outcome of a delete: the final object and whether it is gone
// (false: it waits for finalizers).
type DeleteResult struct {
	Object  runtime.Object
	Deleted bool
}

// Finalizers the garbage collector acts on.
const (
	FinalizerOrphan     = metav1.FinalizerOrphanDependents
	FinalizerForeground = metav1.FinalizerDeleteDependents
)

// Delete removes one object, honouring preconditions, finalizers and the propagation policy.
func (s *Store) Delete(ctx context.Context, res *Resource, ns, name string, opts metav1.DeleteOptions, wopts WriteOptions) (*DeleteResult, error) {
	if !res.Namespaced {
		ns = ""
	}
	for attempt := 0; attempt < s.cfg.MaxRetries; attempt++ {
		old, rev, err := s.readCurrent(ctx, res, ns, name)
		if err != nil {
			return nil, err
		}
		om := objectMeta(old)
		// 1. Preconditions.
		if err := checkPreconditions(res, name, om, opts.Preconditions); err != nil {
			return nil, err
		}
		// 2. Mutating admission sees every delete, as upstream's delete handler runs it
		// (NamespaceLifecycle refuses to delete the system namespaces there).
		if s.cfg.Admission != nil {
			attrs := &admission.Attributes{Operation: admission.Delete, Resource: res.GVR, Kind: res.GVK(), Namespace: ns, Name: name, OldObject: old, DryRun: wopts.DryRun, User: requestUser(ctx)}
			if err := s.cfg.Admission.Admit(ctx, attrs); err != nil {
				return nil, err
			}
		}
		// 3. Graceful deletion (kinds with a GracefulDeleter: pods), upstream's BeforeDelete:
		// a first delete with a grace period marks the object; a later one may only shorten
		// the period, and one that does not is answered with the object, writing nothing.
		stamp, pending := s.graceful(res, old, opts.GracePeriodSeconds)
		if pending {
			old.GetObjectKind().SetGroupVersionKind(res.GVK())
			return &DeleteResult{Object: old}, nil
		}
		// 4. What holds the object: a grace period, finalizers, the propagation policy, a
		// namespace's contents.
		finalizers := om.GetFinalizers()
		policy := propagation(res, opts)
		switch policy {
		case metav1.DeletePropagationOrphan:
			finalizers = addFinalizer(removeFinalizer(finalizers, FinalizerForeground), FinalizerOrphan)
		case metav1.DeletePropagationForeground:
			finalizers = addFinalizer(removeFinalizer(finalizers, FinalizerOrphan), FinalizerForeground)
		}
		_, isNS := old.(*corev1.Namespace)
		var r *DeleteResult
		if len(finalizers) > 0 || isNS || stamp != nil && stamp.Grace > 0 {
			r, err = s.markDeleting(ctx, res, ns, name, old, rev, finalizers, stamp, wopts)
		} else {
			var res2 *Result
			res2, err = s.finishDelete(ctx, res, ns, name, old, rev, opts.Preconditions, wopts)
			if res2 != nil {
				r = &DeleteResult{Object: res2.Object, Deleted: true}
				if stamp != nil {
					// Upstream stamps a graceful kind (and bumps its generation) before
					// removing it; the answer shows it. (A copy: AfterCommit's watchers may
					// hold the object.)
					r.Object = res2.Object.DeepCopyObject()
					graceful.Mark(objectMeta(r.Object), stamp, metav1.Time{})
				}
			}
		}
		if errors.Is(err, errObjectChanged) {
			continue
		}
		return r, err
	}
	return nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("too many concurrent changes, please try again"))
}

// checkPreconditions checks a delete's preconditions against the stored object's metadata.
func checkPreconditions(res *Resource, name string, om metav1.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	// As upstream's check before deleting: the conflict names the kind, not the resource.
	kind := schema.GroupResource{Group: res.GVR.Group, Resource: res.GVK().Kind}
	if p.UID != nil && *p.UID != om.GetUID() {
		return apierrors.NewConflict(kind, name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, om.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != om.GetResourceVersion() {
		return apierrors.NewConflict(kind, name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, om.GetResourceVersion()))
	}
	return nil
}

func propagation(res *Resource, opts metav1.DeleteOptions) metav1.DeletionPropagation {
	if opts.PropagationPolicy != nil {
		return *opts.PropagationPolicy
	}
	if opts.OrphanDependents != nil {
		if *opts.OrphanDependents {
			return metav1.DeletePropagationOrphan
		}
		return metav1.DeletePropagationBackground
	}
	if d, ok := res.Strategy.(DeletePropagationDefaulter); ok {
		return d.DefaultDeletePropagation()
	}
	return metav1.DeletePropagationBackground
}

func addFinalizer(fs []string, f string) []string {
	for _, x := range fs {
		if x == f {
			return fs
		}
	}
	return append(append([]string(nil), fs...), f)
}

func removeFinalizer(fs []string, f string) []string {
	out := make([]string, 0, len(fs))
	for _, x := range fs {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// graceful applies upstream's BeforeDelete to a delete of old asking for requested
// seconds (nil: none; negative: 1). For a kind without a GracefulDeleter, or an object
// already deleting with no grace period left, it returns nil (the delete proceeds as
// for any kind). Otherwise, an object not yet deleting gets the stamp of the strategy's
// period (grace 0: removed at once); one deleting with a grace period gets a shorter
// period when asked for one (its deletionTimestamp moved back by the difference, never
// before now: then, unless the new period is 0, the period is 1 and the object still
// waits), and pending is true when it is not shortened.
func (s *Store) graceful(res *Resource, old runtime.Object, requested *int64) (stamp *graceful.Stamp, pending bool) {
	gd, ok := s.strategy(res).(GracefulDeleter)
	if !ok {
		return nil, false
	}
	return graceful.Decide(gd, old, requested, s.now())
}

// markDeleting sets deletionTimestamp (and the policy's finalizer); namespaces turn
// Terminating. stamp, when set, is a graceful delete's deletionTimestamp and grace period;
// otherwise an object not yet deleting is stamped now with no grace period.
func (s *Store) markDeleting(ctx context.Context, res *Resource, ns, name string, old runtime.Object, rev int64, finalizers []string, stamp *graceful.Stamp, wopts WriteOptions) (*DeleteResult, error) {
	obj := old.DeepCopyObject()
	m := objectMeta(obj)
	graceful.Mark(m, stamp, s.now())
	m.SetFinalizers(finalizers)
	if nsObj, ok := obj.(*corev1.Namespace); ok {
		nsObj.Status.Phase = corev1.NamespaceTerminating
	}
	attrs := &admission.Attributes{Operation: admission.Delete, Resource: res.GVR, Kind: res.GVK(), Namespace: ns, Name: name, OldObject: old, DryRun: wopts.DryRun, User: requestUser(ctx)}
	if s.cfg.Admission != nil {
		if err := s.cfg.Admission.Validate(ctx, attrs); err != nil {
			return nil, err
		}
	}
	if semanticEqual(obj, old) {
		return &DeleteResult{Object: obj}, nil
	}
	uattrs := &admission.Attributes{Operation: admission.Update, Resource: res.GVR, Kind: res.GVK(), Namespace: ns, Name: name, Object: obj, OldObject: old, DryRun: wopts.DryRun, User: requestUser(ctx)}
	newRev, err := s.commit(ctx, newWrite(res, uattrs, res.Key(ns, name), rev, obj))
	if err != nil {
		return nil, err
	}
	if !wopts.DryRun {
		m.SetResourceVersion(strconv.FormatInt(newRev, 10))
		// This replica's caches learn of it before the client does: a create in a
		// namespace whose deletion was answered is refused at once, not once the watch
		// delivers the Terminating phase.
		if s.cfg.AfterCommit != nil {
			s.cfg.AfterCommit(res, obj, false)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	return &DeleteResult{Object: obj}, nil
}

// finishDelete removes the key, crediting every quota in the same transaction. pre are
// the delete's preconditions, checked again when a quota's deletion is prepared again on
// the quota as its commit finds it (see write.redo).
func (s *Store) finishDelete(ctx context.Context, res *Resource, ns, name string, old runtime.Object, rev int64, pre *metav1.Preconditions, wopts WriteOptions) (*Result, error) {
	prepare := func(old runtime.Object, rev int64) (*write, error) {
		attrs := &admission.Attributes{Operation: admission.Delete, Resource: res.GVR, Kind: res.GVK(), Namespace: ns, Name: name, OldObject: old, DryRun: wopts.DryRun, User: requestUser(ctx)}
		if s.cfg.Admission != nil {
			if err := s.cfg.Admission.Validate(ctx, attrs); err != nil {
				return nil, err
			}
		}
		return newWrite(res, attrs, res.Key(ns, name), rev, nil), nil
	}
	w, err := prepare(old, rev)
	if err != nil {
		return nil, err
	}
	if isQuotaWrite(w) {
		w.Redo = func(cur runtime.Object, curRev int64) (*commit.Write, error) {
			om := objectMeta(cur)
			if len(om.GetFinalizers()) > 0 {
				return nil, errObjectChanged // held by finalizers: start over
			}
			if err := checkPreconditions(res, name, om, pre); err != nil {
				return nil, err
			}
			nw, err := prepare(cur, curRev)
			if err != nil {
				return nil, err
			}
			return &nw.Write, nil
		}
	}
	s.recent.drop(w.Key)
	newRev, err := s.commit(ctx, w)
	if err != nil {
		return nil, err
	}
	old = w.Attrs.OldObject // the object the commit deleted (redo may have read it again)
	if !wopts.DryRun {
		objectMeta(old).SetResourceVersion(strconv.FormatInt(newRev, 10))
		if s.cfg.AfterCommit != nil {
			s.cfg.AfterCommit(res, old, true)
		}
	}
	old.GetObjectKind().SetGroupVersionKind(res.GVK())
	return &Result{Object: old}, nil
}
