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
// goroutine (its reader's buffer is reused).
type selection struct {
	sel    selector.Selector
	reader *prunedReader
}

func newSelection(res *Resource, sel selector.Selector) *selection {
	s := &selection{sel: sel}
	if !sel.Empty() {
		var fieldLabels []string
		if sel.Field != nil {
			for _, r := range sel.Field.Requirements() {
				fieldLabels = append(fieldLabels, r.Field)
			}
		}
		s.reader = newPrunedReader(res, sel.Label != nil && !sel.Label.Empty(), fieldLabels)
	}
	return s
}

// matches reports whether the object kv holds satisfies the selector (an object that does
// not decode is an internal error, as every read of it gives).
func (s *selection) matches(kv storage.KV) (bool, error) {
	if s.sel.Empty() {
		return true, nil
	}
	obj, err := s.reader.object(kv)
	if err != nil {
		return false, internalError(err)
	}
	return s.sel.Matches(s.reader.res, obj), nil
}

// prunedReader decodes stored objects of one resource pruned to what some field labels
// (and the labels) read; it is used by one goroutine (its buffer is reused).
type prunedReader struct {
	res *Resource
	// paths is what a pruned copy keeps; nil decodes objects whole.
	paths codec.Paths
	buf   []byte
}

// newPrunedReader returns a reader keeping metadata.name and metadata.namespace,
// metadata.labels when labels is set, and what each of fieldLabels reads.
func newPrunedReader(res *Resource, labels bool, fieldLabels []string) *prunedReader {
	r := &prunedReader{res: res}
	if res.Storage != nil {
		return r
	}
	if _, ok := res.New().(*unstructured.Unstructured); ok {
		return r
	}
	r.paths = codec.Paths{}
	r.paths.Add("metadata", "name")
	r.paths.Add("metadata", "namespace")
	if labels {
		r.paths.Add("metadata", "labels")
	}
	fp, _ := res.Strategy.(FieldPather)
	for _, p := range fieldLabels {
		if fp != nil {
			if q := fp.FieldPath(p); q != "" {
				p = q
			}
		}
		r.paths.AddDotted(p)
	}
	return r
}

// object is the object kv holds, from its pruned copy when it can be, else decoded whole.
func (r *prunedReader) object(kv storage.KV) (runtime.Object, error) {
	if obj := r.pruned(kv); obj != nil {
		return obj, nil
	}
	return decodeKV(r.res, kv)
}

// pruned is the object kv holds decoded from its pruned copy, or nil when it must be
// decoded whole.
func (r *prunedReader) pruned(kv storage.KV) runtime.Object {
	if r.paths == nil {
		return nil
	}
	b, ok := codec.Prune(r.buf[:0], kv.Value, r.paths)
	if !ok {
		return nil
	}
	r.buf = b
	obj := r.res.New()
	if err := kjson.UnmarshalCaseSensitivePreserveInts(b, obj); err != nil {
		return nil
	}
	return obj
}
