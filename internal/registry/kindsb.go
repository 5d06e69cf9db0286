package registry

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/auth"
)

// CSRs are the one kind with an /approval subresource.
var csrGR = certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests").GroupResource()

// ServesApproval reports whether res has the /approval subresource.
func ServesApproval(res *Resource) bool { return res.Type != nil && res.GroupResource() == csrGR }

// isStatusLike reports a subresource that writes only (part of) the status.
func isStatusLike(subresource string) bool {
	return subresource == "status" || subresource == "approval"
}

// prepareCSRCreate sets what upstream's strategy sets on a new CertificateSigningRequest:
// the requesting user's identity and an empty status.
func prepareCSRCreate(obj runtime.Object, u auth.User) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return
	}
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = u.Name, u.UID, u.Groups, nil
	if len(u.Extra) > 0 {
		csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range u.Extra {
			csr.Spec.Extra[k] = v
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
}

// prepareKindsBUpdate bumps a CSIDriver's generation on spec changes, and is upstream's split of a CertificateSigningRequest update: the spec never
// changes; the main resource keeps the status; /status keeps the Approved and Denied
// conditions as stored (when their number is unchanged) and may set the certificate;
// /approval changes only the conditions. Conditions get their timestamps.
func prepareKindsBUpdate(obj, old runtime.Object, subresource string, now metav1.Time) {
	if d, ok := obj.(*storagev1.CSIDriver); ok && subresource == "" {
		// A CSIDriver is created at generation 0 (upstream's strategy does not set it) and
		// counts spec changes from there.
		if o, ok := old.(*storagev1.CSIDriver); ok && !semantic.DeepEqual(d.Spec, o.Spec) {
			d.Generation = o.Generation + 1
		}
		return
	}
	n, ok := obj.(*certificatesv1.CertificateSigningRequest)
	o, ok2 := old.(*certificatesv1.CertificateSigningRequest)
	if !ok || !ok2 {
		return
	}
	n.Spec = *o.Spec.DeepCopy()
	switch subresource {
	case "":
		n.Status = *o.Status.DeepCopy()
	case "status":
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oi, ni := conditionIndices(o, t), conditionIndices(n, t)
			if len(oi) == len(ni) {
				for i := range oi {
					n.Status.Conditions[ni[i]] = *o.Status.Conditions[oi[i]].DeepCopy()
				}
			}
		}
		conditionTimes(n, o, now)
	case "approval":
		conditionTimes(n, o, now)
		conds := n.Status.Conditions
		n.Status = *o.Status.DeepCopy()
		n.Status.Conditions = conds
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// conditionTimes is upstream's populateConditionTimestamps.
func conditionTimes(n, o *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
			for _, oc := range o.Status.Conditions {
				if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
					c.LastTransitionTime = oc.LastTransitionTime
					break
				}
			}
		}
	}
}

// prepareAPIServiceCreate marks a local APIService available on create, as kube-aggregator's
// strategy does.
func prepareAPIServiceCreate(obj runtime.Object, now metav1.Time) {
	a, ok := obj.(*apiregistrationv1.APIService)
	if !ok || a.Spec.Service != nil {
		return
	}
	a.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		LastTransitionTime: now, Reason: "Local", Message: "Local APIServices are always available"}}
}
