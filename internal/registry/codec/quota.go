package codec

import (
	"bytes"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A batch changes only status.used of the quotas it touches (quota.Prepared.Check returns
// quotas that share everything else), and status.used is the last field of a stored quota.
// So a quota's stored form is a prefix that stays the same along a namespace's chain of
// planned states, followed by status.used and the two closing braces. QuotaEncoder keeps
// each quota's prefix, so that encoding a quota with every batch costs the few bytes of its
// usage instead of a reflective encoding of the whole object (most of a one-write batch's
// planning). Each prefix is checked once against the full encoding; a quota whose encoding
// does not have that shape is encoded in full every time.

// QuotaEncoder holds the prefixes of one chain of planned states. Plans of a namespace run
// one at a time, and a chain ends whenever quotas are read again, so it needs no lock.
type QuotaEncoder struct {
	gvk schema.GroupVersionKind
	// prefixes maps a quota's name to its stored form up to status.used (nil: encode it in
	// full).
	prefixes map[string][]byte
}

func NewQuotaEncoder(gvk schema.GroupVersionKind) *QuotaEncoder {
	return &QuotaEncoder{gvk: gvk, prefixes: map[string][]byte{}}
}

// encode returns q's stored form. q must share everything but status.used with the quota of
// that name the encoder saw first.
func (e *QuotaEncoder) Encode(q *corev1.ResourceQuota) ([]byte, error) {
	prefix, known := e.prefixes[q.Name]
	if known && prefix != nil {
		if b, ok := spliceUsed(prefix, q.Status.Used); ok {
			return b, nil
		}
	}
	full, err := EncodeForStorage(q, e.gvk)
	if err != nil || known {
		return full, err
	}
	e.prefixes[q.Name] = nil
	bare := *q
	bare.Status.Used = nil
	base, err := EncodeForStorage(&bare, e.gvk)
	if err != nil || !bytes.HasSuffix(base, []byte("}}")) {
		return full, nil
	}
	prefix = base[:len(base)-2]
	if b, ok := spliceUsed(prefix, q.Status.Used); ok && bytes.Equal(b, full) {
		e.prefixes[q.Name] = prefix
	}
	return full, nil
}

// spliceUsed appends used, as encoding/json writes a ResourceList, and the closing braces to
// prefix. It reports false for a name that JSON would escape.
func spliceUsed(prefix []byte, used corev1.ResourceList) ([]byte, bool) {
	if len(prefix) == 0 {
		return nil, false
	}
	type entry struct{ name, value string }
	entries := make([]entry, 0, len(used))
	size := len(prefix) + 12
	for name, v := range used {
		if !plainJSON(string(name)) {
			return nil, false
		}
		e := entry{string(name), v.String()}
		entries = append(entries, e)
		size += len(e.name) + len(e.value) + 6
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	b := make([]byte, 0, size)
	b = append(b, prefix...)
	if len(entries) > 0 {
		if prefix[len(prefix)-1] != '{' {
			b = append(b, ',')
		}
		b = append(b, `"used":{`...)
		for i, e := range entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, e.name...)
			b = append(b, `":"`...)
			b = append(b, e.value...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, "}}"...), true
}

// plainJSON reports whether s is written by encoding/json as is (resource names and
// quantities always are).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '/') {
			return false
		}
	}
	return true
}
