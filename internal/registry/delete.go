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

	"github.com/quotad/quotad/internal/admission"
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
		// 3. What holds the object: finalizers, the propagation policy, a namespace's contents.
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
		if len(finalizers) > 0 || isNS {
			r, err = s.markDeleting(ctx, res, ns, name, old, rev, finalizers, wopts)
		} else {
			var res2 *Result
			res2, err = s.finishDelete(ctx, res, ns, name, old, rev, opts.Preconditions, wopts)
			if res2 != nil {
				r = &DeleteResult{Object: res2.Object, Deleted: true}
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
	if p.UID != nil && *p.UID != om.GetUID() {
		return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, om.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != om.GetResourceVersion() {
		return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, om.GetResourceVersion()))
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
	if res.GVR.Group == "batch" && res.GVR.Resource == "jobs" {
		return metav1.DeletePropagationOrphan
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

// markDeleting sets deletionTimestamp (and the policy's finalizer); namespaces turn Terminating.
func (s *Store) markDeleting(ctx context.Context, res *Resource, ns, name string, old runtime.Object, rev int64, finalizers []string, wopts WriteOptions) (*DeleteResult, error) {
	obj := old.DeepCopyObject()
	m := objectMeta(obj)
	if m.GetDeletionTimestamp() == nil {
		now := s.now()
		m.SetDeletionTimestamp(&now)
		zero := int64(0)
		m.SetDeletionGracePeriodSeconds(&zero)
	}
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
	newRev, err := s.commit(ctx, &write{res: res, attrs: uattrs, key: res.Key(ns, name), guard: rev, obj: obj})
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
		return &write{res: res, attrs: attrs, key: res.Key(ns, name), guard: rev}, nil
	}
	w, err := prepare(old, rev)
	if err != nil {
		return nil, err
	}
	if isQuotaWrite(w) {
		w.redo = func(cur runtime.Object, curRev int64) (*write, error) {
			om := objectMeta(cur)
			if len(om.GetFinalizers()) > 0 {
				return nil, errObjectChanged // held by finalizers: start over
			}
			if err := checkPreconditions(res, name, om, pre); err != nil {
				return nil, err
			}
			return prepare(cur, curRev)
		}
	}
	newRev, err := s.commit(ctx, w)
	if err != nil {
		return nil, err
	}
	old = w.attrs.OldObject // the object the commit deleted (redo may have read it again)
	if !wopts.DryRun {
		objectMeta(old).SetResourceVersion(strconv.FormatInt(newRev, 10))
		if s.cfg.AfterCommit != nil {
			s.cfg.AfterCommit(res, old, true)
		}
	}
	old.GetObjectKind().SetGroupVersionKind(res.GVK())
	return &Result{Object: old}, nil
}
