package server

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/auth/authn"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's bounds on a requested token's lifetime, and its default.
const (
	minTokenSeconds     = 10 * 60
	maxTokenSeconds     = 1 << 32
	defaultTokenSeconds = 3600
)

// tokenRequester serves serviceaccounts/<name>/token as upstream's TokenREST does:
//  1. metadata.name and metadata.namespace, when set, must be the ServiceAccount's.
//  2. Read the ServiceAccount (404 when there is none); default the audiences, name and
//     namespace, and expirationSeconds (3600); validate it (10 minutes to 2^32 seconds).
//  3. A bound object must be a Pod running as that ServiceAccount or a Secret, with the
//     UID given, if one is.
//  4. Shorten the expiry to --service-account-max-token-expiration, with a warning; sign
//     the token (not on a dry run) and answer it with its expiry.
func tokenRequester(store *registry.Store, sas *authn.ServiceAccounts, maxExpiration time.Duration) apiserver.TokenRequester {
	core := func(r string) *registry.Resource {
		return store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource(r))
	}
	gk := schema.GroupKind{Group: authenticationv1.GroupName, Kind: "TokenRequest"}
	return func(ctx context.Context, ns, name string, req *authenticationv1.TokenRequest, dryRun bool) (*authenticationv1.TokenRequest, []string, error) {
		// 1.
		if req.Name != "" && req.Name != name {
			return nil, nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified")})
		}
		if req.Namespace != "" && req.Namespace != ns {
			return nil, nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified")})
		}
		// 2.
		saObj, err := store.Get(ctx, core("serviceaccounts"), ns, name)
		if err != nil {
			return nil, nil, err
		}
		sa := saObj.(*corev1.ServiceAccount)
		if len(req.Spec.Audiences) == 0 {
			req.Spec.Audiences = sas.APIAudiences()
		}
		req.Name, req.Namespace = sa.Name, sa.Namespace
		now := time.Now()
		req.CreationTimestamp = metav1.NewTime(now)
		req.Status = authenticationv1.TokenRequestStatus{}
		if req.Spec.ExpirationSeconds == nil {
			d := int64(defaultTokenSeconds)
			req.Spec.ExpirationSeconds = &d
		}
		exp := *req.Spec.ExpirationSeconds
		var errs field.ErrorList
		if exp < minTokenSeconds {
			errs = append(errs, field.Invalid(field.NewPath("spec", "expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
		}
		if exp > maxTokenSeconds {
			errs = append(errs, field.Invalid(field.NewPath("spec", "expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
		}
		if len(errs) > 0 {
			return nil, nil, apierrors.NewInvalid(gk, "", errs)
		}
		spec := authn.TokenSpec{
			Namespace: ns, ServiceAccount: authn.Ref{Name: sa.Name, UID: sa.UID},
			Audiences: req.Spec.Audiences, Expiration: time.Duration(exp) * time.Second,
		}
		// 3.
		if ref := req.Spec.BoundObjectRef; ref != nil {
			gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
			var uid types.UID
			switch {
			case gvk.Group == "" && gvk.Kind == "Pod":
				obj, err := store.Get(ctx, core("pods"), ns, ref.Name)
				if err != nil {
					return nil, nil, err
				}
				pod := obj.(*corev1.Pod)
				if pod.Spec.ServiceAccountName != name {
					return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", name))
				}
				uid = pod.UID
				spec.Pod = &authn.Ref{Name: pod.Name, UID: uid}
			case gvk.Group == "" && gvk.Kind == "Secret":
				obj, err := store.Get(ctx, core("secrets"), ns, ref.Name)
				if err != nil {
					return nil, nil, err
				}
				m, _ := meta.Accessor(obj)
				uid = m.GetUID()
				spec.Secret = &authn.Ref{Name: m.GetName(), UID: uid}
			default:
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
			}
			if ref.UID != "" && uid != ref.UID {
				return nil, nil, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
					fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
			}
		}
		// 4.
		var warnings []string
		if max := int64(maxExpiration / time.Second); max > 0 && exp > max {
			warnings = append(warnings, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", exp, max))
			exp = max
			req.Spec.ExpirationSeconds = &exp
			spec.Expiration = time.Duration(exp) * time.Second
		}
		if dryRun {
			return req, warnings, nil
		}
		tok, expires, err := sas.Issue(spec)
		if err != nil {
			return nil, nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
		}
		req.Status = authenticationv1.TokenRequestStatus{Token: tok, ExpirationTimestamp: metav1.NewTime(expires)}
		return req, warnings, nil
	}
}
