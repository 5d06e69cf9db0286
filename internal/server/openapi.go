package server

import (
	"net/http"
	"sync"

	"github.com/quotad/quotad/internal/apiserver/openapi"
	"github.com/quotad/quotad/internal/registry"
)

// openAPIDocs serves the /openapi/v3 documents and the /openapi/v2 document, rebuilt when
// the catalogue changes (a CRD is established, changed or removed). One long-lived
// Builder keeps the encoded documents, so a rebuild re-encodes only what changed; the v2
// document is built on its first request after a change.
type openAPIDocs struct {
	cat     *registry.Catalogue
	builder *openapi.Builder

	mu   sync.Mutex // guards gen and docs
	gen  int64
	docs *openapi.Documents

	v2Mu  sync.Mutex // guards v2Gen and v2, so building v2 does not hold up v3 requests
	v2Gen int64
	v2    *openapi.V2
}

func newOpenAPI(cat *registry.Catalogue) *openAPIDocs {
	return &openAPIDocs{cat: cat, builder: openapi.NewBuilder(), gen: -1, v2Gen: -1}
}

// resources describes the catalogue's resources for the openapi builder.
func (o *openAPIDocs) resources() []openapi.Resource {
	var rs []openapi.Resource
	for _, r := range o.cat.All() {
		or := openapi.Resource{
			GVK: r.GVK(), ListKind: r.ListKind, Plural: r.GVR.Resource, Namespaced: r.Namespaced,
			Type: r.Type, ListType: r.ListType,
		}
		if r.Synthesized {
			or.Verbs = []string{"get", "list"}
		}
		if r.Status {
			or.Subresources = append(or.Subresources, "status")
		}
		if r.Scale {
			or.Subresources = append(or.Subresources, "scale")
		}
		if v := r.CRDVersion(); v != nil && v.Schema != nil {
			or.CRDSchema = v.Schema.OpenAPIV3Schema
		}
		rs = append(rs, or)
	}
	return rs
}

func (o *openAPIDocs) current() (*openapi.Documents, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	gen := o.cat.Generation()
	if o.docs != nil && gen == o.gen {
		return o.docs, nil
	}
	docs, err := o.builder.Build(o.resources())
	if err != nil {
		return nil, err
	}
	o.docs, o.gen = docs, gen
	return docs, nil
}

func (o *openAPIDocs) currentV2() (*openapi.V2, error) {
	o.v2Mu.Lock()
	defer o.v2Mu.Unlock()
	gen := o.cat.Generation()
	if o.v2 != nil && gen == o.v2Gen {
		return o.v2, nil
	}
	v2, err := o.builder.BuildV2(o.resources())
	if err != nil {
		return nil, err
	}
	o.v2, o.v2Gen = v2, gen
	return v2, nil
}

// Index implements apiserver.OpenAPI.
func (o *openAPIDocs) Index() ([]byte, error) {
	d, err := o.current()
	if err != nil {
		return nil, err
	}
	return d.Index, nil
}

// Document implements apiserver.OpenAPI.
func (o *openAPIDocs) Document(path string) ([]byte, string, bool, error) {
	d, err := o.current()
	if err != nil {
		return nil, "", false, err
	}
	doc, ok := d.Paths[path]
	return doc.JSON, doc.Hash, ok, nil
}

// ServeV2 implements apiserver.OpenAPI: GET /openapi/v2 as JSON or protobuf. A document
// that cannot be built gets 503, as kube-openapi answers when it has no document.
func (o *openAPIDocs) ServeV2(w http.ResponseWriter, r *http.Request) {
	v2, err := o.currentV2()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	v2.ServeHTTP(w, r)
}
