package server

import (
	"sync"

	"github.com/quotad/quotad/internal/apiserver/openapi"
	"github.com/quotad/quotad/internal/registry"
)

// openAPIDocs serves the /openapi/v3 documents, rebuilt when the catalogue changes.
type openAPIDocs struct {
	cat  *registry.Catalogue
	mu   sync.Mutex
	gen  int64
	docs *openapi.Documents
}

func newOpenAPI(cat *registry.Catalogue) *openAPIDocs {
	return &openAPIDocs{cat: cat, gen: -1}
}

func (o *openAPIDocs) current() (*openapi.Documents, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	gen := o.cat.Generation()
	if o.docs != nil && gen == o.gen {
		return o.docs, nil
	}
	var rs []openapi.Resource
	for _, r := range o.cat.All() {
		or := openapi.Resource{
			GVK: r.GVK(), ListKind: r.ListKind, Plural: r.GVR.Resource, Namespaced: r.Namespaced,
			Type: r.Type, ListType: r.ListType,
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
	docs, err := openapi.Build(rs)
	if err != nil {
		return nil, err
	}
	o.docs, o.gen = docs, gen
	return docs, nil
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
