package registry

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/registry/selector"
	"github.com/quotad/quotad/internal/storage"
)

// A list or watch with a selector evaluates it on every stored object it reads, most of
// which it may then leave out. Decoding a whole pod to read its spec.nodeName was most of
// the processor time of a watch of every bound pod (KWOK asks for one each time its pod
// watch ends). A selection decodes instead a copy of the stored JSON pruned to what the
// selector reads (codec.Prune): metadata.name and metadata.namespace, metadata.labels for
// a label selector, and each field label's path (FieldPather, for labels read elsewhere).
// Kinds stored as another kind, custom resources and values the pruner does not read are
// decoded whole. TestSelectionReadsWhatFieldsRead holds every kind's field labels to it.

// FieldPather is a kind with a field label whose value is read at another path of the
// object than the label names (a Job's status.successful is its status.succeeded).
type FieldPather interface {
	// FieldPath is the dotted path the label's value is read from, "" for the label's own.
	FieldPath(label string) string
}

// selection evaluates one selector on stored objects of one resource; it is used by one
// goroutine (its buffer is reused).
type selection struct {
	res *Resource
	sel selector.Selector
	// paths is what a pruned copy keeps; nil decodes objects whole.
	paths codec.Paths
	buf   []byte
}

func newSelection(res *Resource, sel selector.Selector) *selection {
	s := &selection{res: res, sel: sel}
	if sel.Empty() || res.Storage != nil {
		return s
	}
	if _, ok := res.New().(*unstructured.Unstructured); ok {
		return s
	}
	s.paths = codec.Paths{}
	s.paths.Add("metadata", "name")
	s.paths.Add("metadata", "namespace")
	if sel.Label != nil && !sel.Label.Empty() {
		s.paths.Add("metadata", "labels")
	}
	if sel.Field != nil {
		fp, _ := res.Strategy.(FieldPather)
		for _, r := range sel.Field.Requirements() {
			p := r.Field
			if fp != nil {
				if q := fp.FieldPath(p); q != "" {
					p = q
				}
			}
			s.paths.AddDotted(p)
		}
	}
	return s
}

// matches reports whether the object kv holds satisfies the selector (an object that does
// not decode is an internal error, as every read of it gives).
func (s *selection) matches(kv storage.KV) (bool, error) {
	if s.sel.Empty() {
		return true, nil
	}
	if obj := s.pruned(kv); obj != nil {
		return s.sel.Matches(s.res, obj), nil
	}
	obj, err := decodeKV(s.res, kv)
	if err != nil {
		return false, internalError(err)
	}
	return s.sel.Matches(s.res, obj), nil
}

// pruned is the object kv holds decoded from its pruned copy, or nil when it must be
// decoded whole.
func (s *selection) pruned(kv storage.KV) runtime.Object {
	if s.paths == nil {
		return nil
	}
	b, ok := codec.Prune(s.buf[:0], kv.Value, s.paths)
	if !ok {
		return nil
	}
	s.buf = b
	obj := s.res.New()
	if err := kjson.UnmarshalCaseSensitivePreserveInts(b, obj); err != nil {
		return nil
	}
	return obj
}
