package apiserver

import (
	"net/http"

	"github.com/quotad/quotad/internal/registry"
)

// serveApplied answers reads of AppliedClusterResourceQuota (registry.Resource.AppliedView):
// the cluster quotas that select a namespace, as that namespace's read-only objects. Only
// get, list and watch in a namespace are served, as OpenShift serves them.
func (s *Server) serveApplied(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	if info.Subresource != "" || info.Namespace == "" {
		writeError(w, notFoundPath())
		return
	}
	switch info.Verb {
	case "get", "list":
	case "watch":
		s.watch(w, r, res, info)
		return
	default:
		writeError(w, methodNotAllowed())
		return
	}
	acc, sel, ok := s.readQuery(w, r, res, info)
	if !ok {
		return
	}
	lr, err := s.cfg.Store.AppliedClusterQuotas(r.Context(), info.Namespace)
	if err != nil {
		writeError(w, err)
		return
	}
	if info.Verb == "get" {
		obj, err := lr.Named(res, info.Name)
		if err != nil {
			writeError(w, err)
			return
		}
		s.writeObjects(w, r, res, acc, http.StatusOK, obj)
		return
	}
	items := lr.Items[:0:0]
	for _, o := range lr.Items {
		if sel.Matches(res, o) {
			items = append(items, o)
		}
	}
	lr.Items = items
	s.writeListResult(w, r, res, acc, lr)
}
