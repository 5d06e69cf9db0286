package registry

import (
	"bytes"
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/storage"
)

// StoredMeta is what ListSelected reads of a stored object before deciding to decode it:
// its labels and the UID its controller owner reference names ("" when it has none).
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
	rev, err := s.eachPage(ctx, res.KeyPrefix(ns), 0, func(kvs []storage.KV) bool {
		for _, kv := range kvs {
			m, ok := storedMeta(kv.Value)
			if ok && !keep(m) {
				continue
			}
			obj, derr := decodeKV(res, kv)
			if derr != nil {
				continue
			}
			if !ok && !keep(metaOf(obj)) {
				continue
			}
			out = append(out, obj)
		}
		return true
	})
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
	out := StoredMeta{Labels: m.GetLabels()}
	for _, r := range m.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			out.Controller = r.UID
			break
		}
	}
	return out
}

// storedMeta reads the labels and controller of a stored object from its JSON: the keys
// before "metadata" are skipped, "metadata" alone is decoded, the rest is not read. ok is
// false when the value does not start so.
func storedMeta(value []byte) (StoredMeta, bool) {
	dec := json.NewDecoder(bytes.NewReader(value))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return StoredMeta{}, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return StoredMeta{}, false
		}
		if k != "metadata" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return StoredMeta{}, false
			}
			continue
		}
		var m struct {
			Labels          map[string]string `json:"labels"`
			OwnerReferences []struct {
				UID        types.UID `json:"uid"`
				Controller *bool     `json:"controller"`
			} `json:"ownerReferences"`
		}
		if err := dec.Decode(&m); err != nil {
			return StoredMeta{}, false
		}
		out := StoredMeta{Labels: m.Labels}
		for _, r := range m.OwnerReferences {
			if r.Controller != nil && *r.Controller {
				out.Controller = r.UID
				break
			}
		}
		return out, true
	}
	return StoredMeta{}, false
}
