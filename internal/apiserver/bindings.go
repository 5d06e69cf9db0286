package apiserver

import (
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/registry"
)

// bindingsGR is the core bindings resource: POST namespaces/<ns>/bindings with a Binding
// whose metadata.name is the pod does what pods/<name>/binding does (upstream's
// LegacyBindingREST).
var bindingsGR = corev1.SchemeGroupVersion.WithResource("bindings").GroupResource()

// createBinding serves a create of the bindings resource.
func (s *Server) createBinding(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	opts, _, err := writeOptions(r, "create", "")
	if err != nil {
		writeError(w, err)
		return
	}
	obj, ok := s.readCreate(w, r, res, info)
	if !ok {
		return
	}
	b, ok := obj.(*corev1.Binding)
	if !ok {
		writeError(w, apierrors.NewBadRequest("not a Binding"))
		return
	}
	if b.Name == "" {
		writeError(w, apierrors.NewBadRequest("name parameter required."))
		return
	}
	pods := s.cfg.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	s.bind(w, r, pods, info.Namespace, b, opts)
}
