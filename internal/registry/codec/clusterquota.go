package codec

import (
	"bytes"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota/clusterquota"
)

// A cluster quota selecting many namespaces carries a status entry for each, and every
// joined transaction rewrites it: encoding it reflectively costs more than the rest of the
// round. EncodeClusterQuota encodes everything but the status reflectively (small) and writes
// the status by hand, exactly as encoding/json writes it (fields in declaration order,
// resource lists with sorted keys, empty lists omitted); a name or value JSON would escape
// falls back to the reflective encoding.
//
// Every entry's hard is spec.quota.hard (clusterquota.Status and Charge make it so), and
// OpenShift's format repeats it in each of them: a third of the bytes etcd writes per
// joined transaction. The stored form leaves an entry's hard out when it equals
// spec.quota.hard, and decoding puts it back (clusterquota.FillEntryHard, in the registry's decodeStored),
// so every reader still sees OpenShift's shape; a value stored with the hards (before this
// form, or by the reflective fallback) reads the same.

// clusterQuotaGVK is the stored form's kind.
var clusterQuotaGVK = clusterquota.SchemeGroupVersion.WithKind("ClusterResourceQuota")

// emptyStatusSuffix is how encoding/json ends an object whose status is the zero value.
const emptyStatusSuffix = `"status":{"total":{},"namespaces":null}}`

// EncodeClusterQuota returns the stored form of a cluster quota. crq is not modified.
func EncodeClusterQuota(crq *clusterquota.ClusterResourceQuota) ([]byte, error) {
	var none *ClusterQuotaEncoder
	return none.Encode(crq)
}

// ClusterQuotaEncoder encodes a cluster quota as EncodeClusterQuota does, keeping each
// status entry's bytes for the next call: a joined transaction charges a few of a cluster
// quota's entries and shares the others' lists with the cluster quota it charged
// (clusterquota.ChargeAll), so only the entries whose lists are new are encoded again. An
// entry's bytes are reused when its hard and used are the very maps they were made from
// (by identity; the encoder keeps them, so their memory is not reused) and spec.quota.hard
// is too: lists are never modified once a cluster quota holds them.
//
// The zero value is ready; a nil encoder keeps nothing. It is not safe for concurrent use:
// a cluster quota's slot holds one, used under the slot's lock.
type ClusterQuotaEncoder struct {
	specHard corev1.ResourceList
	entries  map[string]encodedEntry
}

// encodedEntry is a status entry's bytes and the lists they were made from.
type encodedEntry struct {
	hard, used corev1.ResourceList
	b          []byte
}

// sameList reports whether a and b are the same map (or both nil).
func sameList(a, b corev1.ResourceList) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Encode returns crq's stored form. crq is not modified.
func (c *ClusterQuotaEncoder) Encode(crq *clusterquota.ClusterResourceQuota) ([]byte, error) {
	bare := *crq
	bare.Status = clusterquota.ClusterResourceQuotaStatus{}
	base, err := EncodeForStorage(&bare, clusterQuotaGVK)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(base, []byte(emptyStatusSuffix)) {
		return encodeFull(crq)
	}
	if c != nil && (c.entries == nil || !sameList(c.specHard, crq.Spec.Quota.Hard)) {
		c.specHard, c.entries = crq.Spec.Quota.Hard, make(map[string]encodedEntry, len(crq.Status.Namespaces))
	}
	b := make([]byte, 0, len(base)+64+len(crq.Status.Namespaces)*160)
	b = append(b, base[:len(base)-len(emptyStatusSuffix)]...)
	b = append(b, `"status":{"total":`...)
	var ok bool
	if b, ok = appendQuotaStatus(b, crq.Status.Total); !ok {
		return encodeFull(crq)
	}
	b = append(b, `,"namespaces":`...)
	if crq.Status.Namespaces == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range crq.Status.Namespaces {
			if i > 0 {
				b = append(b, ',')
			}
			if c != nil {
				if k, hit := c.entries[e.Namespace]; hit && sameList(k.hard, e.Status.Hard) && sameList(k.used, e.Status.Used) {
					b = append(b, k.b...)
					continue
				}
			}
			start := len(b)
			if b, ok = appendEntry(b, e, crq.Spec.Quota.Hard); !ok {
				return encodeFull(crq)
			}
			if c != nil {
				c.entries[e.Namespace] = encodedEntry{hard: e.Status.Hard, used: e.Status.Used, b: slices.Clone(b[start:])}
			}
		}
		b = append(b, ']')
	}
	if c != nil && len(c.entries) > len(crq.Status.Namespaces) {
		// Entries of namespaces no longer in the status are dropped.
		kept := make(map[string]encodedEntry, len(crq.Status.Namespaces))
		for _, e := range crq.Status.Namespaces {
			if k, hit := c.entries[e.Namespace]; hit {
				kept[e.Namespace] = k
			}
		}
		c.entries = kept
	}
	return append(b, "}}"...), nil
}

// appendEntry appends one status entry; its hard is left out when it equals specHard.
func appendEntry(b []byte, e clusterquota.ResourceQuotaStatusByNamespace, specHard corev1.ResourceList) ([]byte, bool) {
	if !plainJSON(e.Namespace) {
		return nil, false
	}
	b = append(b, `{"namespace":"`...)
	b = append(b, e.Namespace...)
	b = append(b, `","status":`...)
	st := e.Status
	if sameText(st.Hard, specHard) {
		st.Hard = nil
	}
	b, ok := appendQuotaStatus(b, st)
	if !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// sameText reports whether two non-empty resource lists hold the same names with the same
// canonical text (then an entry's hard reads back from spec.quota.hard byte for byte).
func sameText(a, b corev1.ResourceList) bool {
	if len(a) == 0 || len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || x.String() != y.String() {
			return false
		}
	}
	return true
}

func encodeFull(crq *clusterquota.ClusterResourceQuota) ([]byte, error) {
	cp := *crq
	return EncodeForStorage(&cp, clusterQuotaGVK)
}

// appendQuotaStatus appends a ResourceQuotaStatus as encoding/json writes it.
func appendQuotaStatus(b []byte, st corev1.ResourceQuotaStatus) ([]byte, bool) {
	b = append(b, '{')
	var ok bool
	if len(st.Hard) > 0 {
		b = append(b, `"hard":`...)
		if b, ok = appendResourceList(b, st.Hard); !ok {
			return nil, false
		}
	}
	if len(st.Used) > 0 {
		if len(st.Hard) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"used":`...)
		if b, ok = appendResourceList(b, st.Used); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

func appendResourceList(b []byte, l corev1.ResourceList) ([]byte, bool) {
	names := make([]string, 0, len(l))
	for name := range l {
		if !plainJSON(string(name)) {
			return nil, false
		}
		names = append(names, string(name))
	}
	slices.SortFunc(names, strings.Compare)
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		q := l[corev1.ResourceName(name)]
		v := q.String()
		if !plainJSON(v) {
			return nil, false
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":"`...)
		b = append(b, v...)
		b = append(b, '"')
	}
	return append(b, '}'), true
}
