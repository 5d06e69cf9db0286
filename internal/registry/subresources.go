package registry

import (
	certificatesv1 "k8s.io/api/certificates/v1"
)

// CSRs are the one kind with an /approval subresource.
var csrGR = certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests").GroupResource()

// ServesApproval reports whether res has the /approval subresource.
func ServesApproval(res *Resource) bool { return res.Type != nil && res.GroupResource() == csrGR }

// isStatusLike reports a subresource that writes only (part of) the status.
func isStatusLike(subresource string) bool {
	return subresource == "status" || subresource == "approval"
}
