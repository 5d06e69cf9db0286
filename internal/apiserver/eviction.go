package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/kinds/core"
	"github.com/quotad/quotad/internal/registry/kinds/policy"
)

// evictionRetries bounds the attempts of an eviction that needs no budget when its guarded
// delete conflicts with another write of the pod (upstream's EvictionsRetry steps).
const evictionRetries = 20

// evictPod is pods/eviction (policy/v1 Eviction): the pod is deleted unless the one
// PodDisruptionBudget selecting it allows no disruption, as upstream's EvictionREST.
//  1. A pod that is Succeeded, Failed, Pending or being deleted is deleted at once; unless
//     it is terminal or terminating, the delete is guarded by the revision read (a pod
//     that became Ready meanwhile is read again), and a conflict tries again.
//  2. No budget selects it: deleted. More than one: upstream's 500.
//  3. One budget: an unready pod is deleted without using a disruption when the budget
//     is healthy enough (or its policy is AlwaysAllow), guarded by the revision read (a
//     conflict is a 429: it may have become Ready); otherwise the budget's
//     disruptionsAllowed is checked and decremented, recording the pod in disruptedPods,
//     in the budget's own guarded write; then the pod is deleted.
//
// Every delete is preceded (except in a dry run) by the DisruptionTarget condition
// (EvictionByEvictionAPI) written to the pod's status, as upstream's
// addConditionAndDeletePod.
func (s *Server) evictPod(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	ctx := r.Context()
	obj, err := decodeSubresourceBody(r, policyv1.SchemeGroupVersion.WithKind("Eviction"), &policyv1.Eviction{}, true)
	if err != nil {
		writeError(w, err)
		return
	}
	ev := *obj.(*policyv1.Eviction)
	if ev.Namespace != "" && ev.Namespace != info.Namespace {
		writeError(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	if ev.Name != info.Name {
		writeError(w, apierrors.NewBadRequest("name in URL does not match name in Eviction object"))
		return
	}
	q := query(r)
	dryRun := len(q["dryRun"]) > 0
	var del metav1.DeleteOptions
	if ev.DeleteOptions != nil {
		del = *ev.DeleteOptions
	}
	if dryRun && len(del.DryRun) == 0 {
		del.DryRun = q["dryRun"]
	}
	dryRun = dryRun || len(del.DryRun) > 0
	if s.cfg.EvictionAdmission != nil {
		a := &admission.Attributes{Operation: admission.Create, Resource: res.GVR, Subresource: "eviction", Kind: policyv1.SchemeGroupVersion.WithKind("Eviction"),
			Namespace: info.Namespace, Name: info.Name, Object: &ev, DryRun: dryRun}
		if err := s.cfg.EvictionAdmission(ctx, a); err != nil {
			writeError(w, err)
			return
		}
	}
	rvUnset := del.Preconditions == nil || del.Preconditions.ResourceVersion == nil
	// 1.
	var pod *corev1.Pod
	for attempt := 1; ; attempt++ {
		obj, err := s.cfg.Store.Get(ctx, res, info.Namespace, info.Name)
		if err != nil {
			writeError(w, err)
			return
		}
		pod = obj.(*corev1.Pod)
		if !canIgnoreBudget(pod) {
			break
		}
		opts := del
		if enforceRevision(pod) && rvUnset {
			opts = withRevision(del, pod.ResourceVersion)
		}
		err = s.disruptAndDelete(ctx, res, info.Namespace, info.Name, opts, dryRun)
		if apierrors.IsConflict(err) && rvUnset && attempt < evictionRetries {
			continue
		}
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, createdStatus())
		return
	}
	// 2. and 3.
	budget, guarded, err := s.checkDisruptionBudget(ctx, pod, dryRun)
	if err != nil {
		writeError(w, err)
		return
	}
	opts := del
	if guarded {
		opts = withRevision(del, pod.ResourceVersion)
	}
	if err := s.disruptAndDelete(ctx, res, info.Namespace, info.Name, opts, dryRun); err != nil {
		if apierrors.IsConflict(err) && guarded && rvUnset {
			err = policy.BudgetProcessing(budget)
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, createdStatus())
}

// canIgnoreBudget is upstream's canIgnorePDB: a pod that is terminal, Pending or being
// deleted is evicted whatever its budget says.
func canIgnoreBudget(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// enforceRevision is upstream's shouldEnforceResourceVersion: the delete of a pod neither
// terminal nor being deleted is guarded by the revision read, so that it does not race
// with the pod becoming Ready.
func enforceRevision(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

// withRevision returns a copy of opts whose preconditions require resourceVersion rv.
func withRevision(opts metav1.DeleteOptions, rv string) metav1.DeleteOptions {
	var pre metav1.Preconditions
	if opts.Preconditions != nil {
		pre = *opts.Preconditions
	}
	pre.ResourceVersion = &rv
	opts.Preconditions = &pre
	return opts
}

// errConditionUnchanged stops a status write that would change nothing.
var errConditionUnchanged = errors.New("unchanged")

// podKind is the resource upstream's eviction names in its precondition conflicts.
var podKind = schema.GroupResource{Resource: "Pod"}

// disruptAndDelete is upstream's addConditionAndDeletePod: except in a dry run, the pod's
// status gets the DisruptionTarget condition (its preconditions checked against the pod
// as stored, a resourceVersion precondition moved on to the revision the condition's
// write makes); then the pod is deleted with opts.
func (s *Server) disruptAndDelete(ctx context.Context, res *registry.Resource, ns, name string, opts metav1.DeleteOptions, dryRun bool) error {
	if !dryRun {
		written, err := s.cfg.Store.Update(ctx, res, ns, name, "status", func(cur runtime.Object) (runtime.Object, error) {
			p := cur.(*corev1.Pod)
			if pre := opts.Preconditions; pre != nil {
				if pre.UID != nil && len(*pre.UID) > 0 && *pre.UID != p.UID {
					return nil, apierrors.NewConflict(podKind, p.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, p.UID))
				}
				if pre.ResourceVersion != nil && len(*pre.ResourceVersion) > 0 && *pre.ResourceVersion != p.ResourceVersion {
					return nil, apierrors.NewConflict(podKind, p.Name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, p.ResourceVersion))
				}
			}
			if !core.SetDisruptionTarget(p, "EvictionByEvictionAPI", "Eviction API: evicting", metav1.NewTime(s.cfg.Clock.Now())) {
				return nil, errConditionUnchanged
			}
			return p, nil
		}, registry.WriteOptions{})
		switch {
		case errors.Is(err, errConditionUnchanged):
		case err != nil:
			return err
		case opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil:
			rv := written.Object.(*corev1.Pod).ResourceVersion
			opts = withRevision(opts, rv)
		}
	}
	_, err := s.cfg.Store.Delete(ctx, res, ns, name, opts, registry.WriteOptions{DryRun: dryRun})
	return err
}

// checkDisruptionBudget takes one disruption from the budget that selects pod when one
// must be taken, or returns its refusal. It returns the budget's name, and whether the
// pod's delete must be guarded by the revision read (an unready pod deleted without
// taking a disruption).
func (s *Server) checkDisruptionBudget(ctx context.Context, pod *corev1.Pod, dryRun bool) (string, bool, error) {
	pdbRes := s.cfg.Store.Catalogue().Get(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"))
	if pdbRes == nil {
		return "", false, nil
	}
	objs, _, err := s.cfg.Store.ListObjects(ctx, pdbRes, pod.Namespace)
	if err != nil {
		return "", false, err
	}
	var matching []*policyv1.PodDisruptionBudget
	for _, o := range objs {
		pdb, ok := o.(*policyv1.PodDisruptionBudget)
		if !ok {
			continue
		}
		// policy/v1: a nil selector selects nothing, an empty one every pod.
		if pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matching = append(matching, pdb)
	}
	switch len(matching) {
	case 0:
		return "", false, nil
	case 1:
	default:
		// Upstream answers with a Status of code 500 and no reason.
		return "", false, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Message: policy.EvictionManyBudgets, Code: http.StatusInternalServerError}}
	}
	budget := matching[0]
	if !core.Ready(pod) {
		if budget.Spec.UnhealthyPodEvictionPolicy != nil && *budget.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return budget.Name, true, nil
		}
		if budget.Status.CurrentHealthy >= budget.Status.DesiredHealthy && budget.Status.DesiredHealthy > 0 {
			return budget.Name, true, nil
		}
	}
	_, err = s.cfg.Store.Update(ctx, pdbRes, budget.Namespace, budget.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
		pdb := cur.(*policyv1.PodDisruptionBudget)
		if err := policy.TakeDisruption(pdb, pod.Name); err != nil {
			return nil, err
		}
		return pdb, nil
	}, registry.WriteOptions{DryRun: dryRun})
	return budget.Name, false, err
}
