package registry

import (
	"bytes"
	"context"
	goruntime "runtime"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/storage"
)

// Un-paged JSON lists are answered from the stored bytes. A stored object is its kind's
// JSON encoding without metadata.resourceVersion (codec.EncodeForStorage), and decoding it and
// encoding it again gives the same bytes: what the list writes is the stored value with
// the key's mod revision put where encoding/json puts resourceVersion. Lists of 20,000 pods
// then cost their reading and copying, not a decode and an encode of every object (which
// were two thirds of a long list's processor time).

// StoredListable reports whether ListEachStored can serve a list of res with opts: a kind
// stored as itself (no conversion from another version's storage), typed (custom
// resources are defaulted as they are read), not completed as it is decoded (a cluster
// quota's entries are stored without their hard, see decodeStored). A selector is
// evaluated on a pruned copy of each object (selection); a match is written from its
// stored bytes all the same.
func StoredListable(res *Resource) bool {
	if res.Storage != nil {
		return false
	}
	switch res.New().(type) {
	case *unstructured.Unstructured, *clusterquota.ClusterResourceQuota:
		return false
	}
	return true
}

// ListEachStored is ListEach for a list that StoredListable allows, each page's items
// given as their JSON encoding (what encoding/json writes for the object read, byte for
// byte). The slices are valid only during the call of page.
func (s *Store) ListEachStored(ctx context.Context, res *Resource, ns string, opts ListOptions, pageSize int64, page func(rv string, items [][]byte) error) error {
	head := storedHead(res)
	sel := newSelection(res, opts.Selector)
	var (
		buf   []byte
		ends  []int
		items [][]byte
	)
	return s.listPages(ctx, res, ns, opts, pageSize, func(rv int64, kvs []storage.KV, paced bool) error {
		buf, ends, items = buf[:0], ends[:0], items[:0]
		for i, kv := range kvs {
			if paced && i%PacedYieldEvery == PacedYieldEvery-1 {
				goruntime.Gosched()
			}
			ok, err := sel.matches(kv)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if buf, err = appendStoredJSON(buf, res, head, kv); err != nil {
				return err
			}
			ends = append(ends, len(buf))
		}
		start := 0
		for _, end := range ends {
			items = append(items, buf[start:end:end])
			start = end
		}
		return page(strconv.FormatInt(rv, 10), items)
	})
}

// appendStoredJSON appends the JSON encoding of the object kv holds (of a kind that
// StoredListable allows, whose stored objects begin with head): its stored bytes with its
// resourceVersion put in.
func appendStoredJSON(dst []byte, res *Resource, head []byte, kv storage.KV) ([]byte, error) {
	if b, ok := appendStored(dst, kv.Value, head, kv.ModRevision); ok {
		return b, nil
	}
	// Not in the shape this kind encodes to (written by another encoder): decoded and
	// encoded as every other read.
	obj, err := decodeKV(res, kv)
	if err != nil {
		return dst, internalError(err)
	}
	b, err := codec.Encode(obj, res.GVK())
	if err != nil {
		return dst, internalError(err)
	}
	return append(dst, b...), nil
}

// storedHead is how every stored object of res begins: its TypeMeta, then the opening of
// its metadata.
func storedHead(res *Resource) []byte {
	return []byte(`{"kind":` + strconv.Quote(res.Kind) + `,"apiVersion":` + strconv.Quote(res.GVR.GroupVersion().String()) + `,"metadata":{`)
}

// objectMetaBeforeResourceVersion are the metadata fields encoding/json writes before
// resourceVersion (ObjectMeta's field order), all strings.
var objectMetaBeforeResourceVersion = map[string]bool{"name": true, "generateName": true, "namespace": true, "selfLink": true, "uid": true}

// appendStored appends value, which must begin with head, with `"resourceVersion":"<rev>"`
// put in its metadata where encoding/json would put it. ok is false, with dst unchanged,
// when value is not in that shape.
func appendStored(dst, value, head []byte, rev int64) (_ []byte, ok bool) {
	if !bytes.HasPrefix(value, head) {
		return dst, false
	}
	at, comma := -1, false
	i := len(head)
	for first := true; at < 0; first = false {
		if i >= len(value) {
			return dst, false
		}
		if value[i] == '}' {
			at, comma = i, !first
			break
		}
		if !first {
			if value[i] != ',' {
				return dst, false
			}
			i++
		}
		key, next, ok := jsonPlainString(value, i)
		if !ok || next >= len(value) || value[next] != ':' {
			return dst, false
		}
		if !objectMetaBeforeResourceVersion[key] {
			if key == "resourceVersion" {
				return dst, false
			}
			at = i
			break
		}
		if i, ok = codec.SkipString(value, next+1); !ok {
			return dst, false
		}
	}
	dst = append(dst, value[:at]...)
	if comma {
		dst = append(dst, ',')
	}
	dst = append(dst, `"resourceVersion":"`...)
	dst = strconv.AppendInt(dst, rev, 10)
	dst = append(dst, '"')
	if !comma && value[at] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, value[at:]...), true
}

// jsonPlainString reads a JSON string without escapes at b[i:]: its text and the index
// after it.
func jsonPlainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	end := bytes.IndexByte(b[i+1:], '"')
	if end < 0 {
		return "", 0, false
	}
	s := b[i+1 : i+1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return "", 0, false
	}
	return string(s), i + end + 2, true
}
