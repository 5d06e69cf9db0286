package server

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/quotafit"
	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/codec"
)

var (
	quotaReviewsGR = fit.SchemeGroupVersion.WithResource("quotareviews").GroupResource()
	podsGVR        = corev1.SchemeGroupVersion.WithResource("pods")
)

// fitSource is quotafit's Source over the store: quotas read at one revision, template
// pods prepared as a dry-run create by their controller (no user) would be.
type fitSource struct{ store **registry.Store }

func (s fitSource) Quotas(ctx context.Context, ns string) ([]fit.Quota, error) {
	return (*s.store).ReviewQuotas(ctx, ns)
}

func (s fitSource) Pod(ctx context.Context, ns string, pod *corev1.Pod) (*corev1.Pod, error) {
	st := *s.store
	obj, _, err := st.WhatIf(auth.WithUser(ctx, auth.User{}), st.Catalogue().Get(podsGVR), ns, pod, false)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

// quotaFitAdmission runs the workload warnings after the validating plugins.
type quotaFitAdmission struct {
	registry.Admission
	fit *quotafit.Plugin
}

func (a quotaFitAdmission) Validate(ctx context.Context, attrs *admission.Attributes) error {
	if err := a.Admission.Validate(ctx, attrs); err != nil {
		return err
	}
	return a.fit.Validate(ctx, attrs)
}

// quotaReview answers QuotaReviews: spec.object decoded as the create of it would be,
// prepared as a dry run (defaults, mutating admission, validation), and reviewed against
// the namespace's quotas. Nothing is stored or charged.
func quotaReview(store *registry.Store, plugin *quotafit.Plugin) apiserver.Review {
	return func(ctx context.Context, ns string, obj runtime.Object) (runtime.Object, error) {
		qr := obj.(*fit.QuotaReview)
		// 1. The object's kind, which must be a namespaced one the server serves.
		res, err := reviewedResource(store.Catalogue(), qr)
		if err != nil {
			return nil, err
		}
		if r := qr.Spec.Replicas; r != nil && *r < 0 {
			return nil, reviewInvalid(qr, field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), *r, "must be greater than or equal to 0")})
		}
		// 2. Decoded exactly as a create's body (upstream's 400 and 422 texts).
		d, err := codec.Decode(res, qr.Spec.Object.Raw, codec.FieldValidationStrict)
		if err != nil {
			return nil, err
		}
		target := d.Object
		m, err := meta.Accessor(target)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if m.GetNamespace() != "" && m.GetNamespace() != ns {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		// 3. Prepared as a dry-run write of it, then reviewed.
		newObj, old, err := store.WhatIf(ctx, res, ns, target, true)
		if err != nil {
			return nil, err
		}
		r, err := plugin.Review(ctx, ns, res.GroupResource(), newObj, old, qr.Spec.Replicas)
		if err != nil {
			return nil, err
		}
		qr.Status = r.Status
		return qr, nil
	}
}

// reviewedResource returns the resource of spec.object's apiVersion and kind, or the
// review's 422.
func reviewedResource(cat *registry.Catalogue, qr *fit.QuotaReview) (*registry.Resource, error) {
	objPath := field.NewPath("spec", "object")
	if len(qr.Spec.Object.Raw) == 0 {
		return nil, reviewInvalid(qr, field.ErrorList{field.Required(objPath, "")})
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(qr.Spec.Object.Raw, &tm); err != nil {
		return nil, reviewInvalid(qr, field.ErrorList{field.Invalid(objPath, string(qr.Spec.Object.Raw), "must be an object")})
	}
	var errs field.ErrorList
	if tm.APIVersion == "" {
		errs = append(errs, field.Required(objPath.Child("apiVersion"), ""))
	}
	if tm.Kind == "" {
		errs = append(errs, field.Required(objPath.Child("kind"), ""))
	}
	if len(errs) > 0 {
		return nil, reviewInvalid(qr, errs)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, reviewInvalid(qr, field.ErrorList{field.Invalid(objPath.Child("apiVersion"), tm.APIVersion, err.Error())})
	}
	res := cat.ForKind(gv.WithKind(tm.Kind))
	if res == nil || res.Synthesized || res.AppliedView {
		return nil, reviewInvalid(qr, field.ErrorList{field.Invalid(objPath.Child("kind"), tm.Kind, fmt.Sprintf("no kind %q is served in version %q", tm.Kind, tm.APIVersion))})
	}
	if !res.Namespaced {
		return nil, reviewInvalid(qr, field.ErrorList{field.Invalid(objPath.Child("kind"), tm.Kind, "must be a namespaced kind")})
	}
	return res, nil
}

func reviewInvalid(qr *fit.QuotaReview, errs field.ErrorList) error {
	return apierrors.NewInvalid(fit.SchemeGroupVersion.WithKind("QuotaReview").GroupKind(), qr.Name, errs)
}
