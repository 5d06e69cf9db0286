package codec

import (
	"bytes"
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
	bare := *crq
	bare.Status = clusterquota.ClusterResourceQuotaStatus{}
	base, err := EncodeForStorage(&bare, clusterQuotaGVK)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(base, []byte(emptyStatusSuffix)) {
		return encodeFull(crq)
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
			if !plainJSON(e.Namespace) {
				return encodeFull(crq)
			}
			b = append(b, `{"namespace":"`...)
			b = append(b, e.Namespace...)
			b = append(b, `","status":`...)
			st := e.Status
			if sameText(st.Hard, crq.Spec.Quota.Hard) {
				st.Hard = nil
			}
			if b, ok = appendQuotaStatus(b, st); !ok {
				return encodeFull(crq)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, "}}"...), nil
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
