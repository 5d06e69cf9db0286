package registry

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/storage"
)

// StoredMeta is what ListSelected reads of a stored object before deciding to decode it:
// the UID its controller owner reference names ("" when it has none) and, for an object
// without a controller, its labels (an owner decides on its own objects by UID; only
// orphans are matched by labels).
type StoredMeta struct {
	Labels     map[string]string
	Controller types.UID
}

// ListSelected returns the objects of res in ns for which keep returns true, read at one
// revision (which it returns). keep is given each object's labels and controller from its
// stored metadata, read without decoding the rest of the object, so that a controller
// wanting the few pods it owns or may adopt in a namespace of thousands decodes those few
// (a ReplicaSet's sync listing every pod of its namespace fell minutes behind with 3,000
// pods per namespace). An object whose metadata cannot be read so is decoded whole and
// judged on that.
func (s *Store) ListSelected(ctx context.Context, res *Resource, ns string, keep func(StoredMeta) bool) ([]runtime.Object, int64, error) {
	var out []runtime.Object
	var derr error
	rev, err := s.eachPage(ctx, res.KeyPrefix(ns), 0, func(kvs []storage.KV) bool {
		for _, kv := range kvs {
			m, ok := storedMeta(kv.Value)
			if ok && !keep(m) {
				continue
			}
			var obj runtime.Object
			if obj, derr = decodeKV(res, kv); derr != nil {
				return false // as ListObjects: an object that cannot be read fails the list
			}
			if !ok && !keep(metaOf(obj)) {
				continue
			}
			out = append(out, obj)
		}
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, 0, internalError(err)
	}
	return out, rev, nil
}

// metaOf is StoredMeta of a decoded object.
func metaOf(obj runtime.Object) StoredMeta {
	m, err := meta.Accessor(obj)
	if err != nil {
		return StoredMeta{}
	}
	var out StoredMeta
	for _, r := range m.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			out.Controller = r.UID
			break
		}
	}
	if out.Controller == "" {
		out.Labels = m.GetLabels()
	}
	return out
}

// storedMeta reads the labels and controller of a stored object from its JSON (compact,
// as stored): the top-level values before "metadata" and metadata's other values are
// skipped by matching brackets and quotes, only "labels" and "ownerReferences" are
// decoded, and nothing after metadata is read. ok is false on anything unexpected (the
// caller then decodes the whole object).
func storedMeta(v []byte) (StoredMeta, bool) {
	var out StoredMeta
	var rawLabels []byte
	found := false
	ok := eachKey(v, 0, func(key []byte, val []byte) bool {
		if string(key) != "metadata" {
			return true
		}
		found = true
		if !eachKey(val, 0, func(k, mv []byte) bool {
			switch string(k) {
			case "labels":
				rawLabels = mv
			case "ownerReferences":
				var refs []struct {
					UID        types.UID `json:"uid"`
					Controller *bool     `json:"controller"`
				}
				if json.Unmarshal(mv, &refs) != nil {
					found = false
				}
				for _, r := range refs {
					if r.Controller != nil && *r.Controller {
						out.Controller = r.UID
						break
					}
				}
			}
			return true
		}) {
			found = false
		}
		return false // nothing after metadata is read
	})
	if ok && found && out.Controller == "" && rawLabels != nil && json.Unmarshal(rawLabels, &out.Labels) != nil {
		return out, false
	}
	return out, ok && found
}

// eachKey calls f with each key of the JSON object starting at b[i] and the bytes of its
// value, until f returns false; it reports whether the object read was well formed up to
// there.
func eachKey(b []byte, i int, f func(key, val []byte) bool) bool {
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i++
	for i < len(b) && b[i] != '}' {
		if b[i] == ',' {
			i++
		}
		end, ok := skipJSONValue(b, i)
		if !ok || b[i] != '"' || end >= len(b) || b[end] != ':' {
			return false
		}
		key := b[i+1 : end-1]
		start := end + 1
		vend, ok := skipJSONValue(b, start)
		if !ok {
			return false
		}
		if !f(key, b[start:vend]) {
			return true
		}
		i = vend
	}
	return i < len(b)
}

// skipJSONValue returns the index just past the JSON value starting at b[i]: a string,
// an object or array (brackets matched outside strings), or a literal.
func skipJSONValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipJSONString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, ok := skipJSONString(b, j)
				if !ok {
					return 0, false
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		return j, j > i
	}
}
