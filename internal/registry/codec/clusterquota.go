package codec

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"

	"github.com/quotad/quotad/internal/quota/clusterquota"
)

// A cluster quota selecting many namespaces carries a status entry for each, and every
// joined transaction rewrites it: encoding it reflectively costs more than the rest of the
// round. EncodeClusterQuota encodes everything but the status reflectively (small) and writes
// the status by hand, as encoding/json writes it (fields in declaration order, resource
// lists with sorted keys, empty lists omitted); a name or value JSON would escape falls back
// to the reflective encoding.
//
// OpenShift's shape repeats in every entry the names of the resources, and spec.quota.hard
// as the entry's hard: over 100 namespaces and 5 resources, 17 KB of which 12 are those
// repetitions, written by every joined round and kept in etcd's history. So the stored form
// holds the entries as rows under one list of names:
//
//	"status":{"total":{...},"namespaceRows":{"resources":["pods","requests.cpu"],
//	  "rows":[["team-a","3","1500m"],["team-b","0",null]]}}
//
// each row the namespace, then its used value of each of spec.quota.hard's resources (sorted;
// null where it has none), its hard being spec.quota.hard. DecodeClusterQuota (the registry's
// decodeStored, the one place every read path decodes through) gives OpenShift's shape back,
// so get, list, watch and every reader inside quotad see status.namespaces with each entry's
// hard and used. An entry a row cannot hold (its hard another text than spec.quota.hard's,
// its used naming another resource, for the moments after a spec edit) makes the whole
// status stored in OpenShift's shape, each entry's hard left out when it is spec.quota.hard's
// (and put back on decoding: clusterquota.FillEntryHard). Values stored in that shape, with
// or without the entries' hards, read the same.

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
	// NoRows stores the entries in OpenShift's shape, as quotad did before the rows, so
	// that replicas of an earlier version sharing the storage read them (an upgrade
	// replica by replica: docs/ha.md).
	NoRows   bool
	specHard corev1.ResourceList
	names    []string
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
	names := c.rowNames(crq.Spec.Quota.Hard)
	b := make([]byte, 0, len(base)+64+len(crq.Status.Namespaces)*(16+8*len(names)))
	b = append(b, base[:len(base)-len(emptyStatusSuffix)]...)
	b = append(b, `"status":{"total":`...)
	var ok bool
	if b, ok = appendQuotaStatus(b, crq.Status.Total); !ok {
		return encodeFull(crq)
	}
	head := len(b)
	if c == nil || !c.NoRows {
		if out, ok := c.appendRows(b, crq, names); ok {
			return append(out, "}}"...), nil
		}
	}
	// An entry a row cannot hold, or rows off: every entry as OpenShift has it (its hard left
	// out when it is spec.quota.hard's); an encoder with NoRows keeps these bytes, as it
	// keeps no rows.
	b = append(b[:head], `,"namespaces":`...)
	if crq.Status.Namespaces == nil {
		b = append(b, "null"...)
	} else {
		keep := c
		if c != nil && !c.NoRows {
			keep = nil
		}
		out, ok := keep.appendEntries(append(b, '['), crq.Status.Namespaces, func(b []byte, e clusterquota.ResourceQuotaStatusByNamespace) ([]byte, bool) {
			return appendEntry(b, e, crq.Spec.Quota.Hard)
		})
		if !ok {
			return encodeFull(crq)
		}
		b = append(out, ']')
	}
	return append(b, "}}"...), nil
}

// rowNames returns the names of a row's values for a cluster quota of spec.quota.hard hard
// (its names, sorted), kept while hard is the same map; nil when no row can be made.
func (c *ClusterQuotaEncoder) rowNames(hard corev1.ResourceList) []string {
	if c != nil && c.entries != nil && sameList(c.specHard, hard) {
		return c.names
	}
	var names []string
	for name := range hard {
		if !plainJSON(string(name)) {
			names = nil
			break
		}
		names = append(names, string(name))
	}
	slices.SortFunc(names, strings.Compare)
	if c != nil {
		c.specHard, c.names, c.entries = hard, names, map[string]encodedEntry{}
	}
	return names
}

// appendRows appends the status entries as rows (namespaceRows), reusing the bytes of the
// rows whose lists the encoder has seen; false when an entry cannot be a row.
func (c *ClusterQuotaEncoder) appendRows(b []byte, crq *clusterquota.ClusterResourceQuota, names []string) ([]byte, bool) {
	entries := crq.Status.Namespaces
	if len(entries) == 0 || len(names) == 0 {
		return nil, false
	}
	b = append(b, `,"namespaceRows":{"resources":[`...)
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"')
	}
	b, ok := c.appendEntries(append(b, `],"rows":[`...), entries, func(b []byte, e clusterquota.ResourceQuotaStatusByNamespace) ([]byte, bool) {
		return appendRow(b, e, crq.Spec.Quota.Hard, names)
	})
	if !ok {
		return nil, false
	}
	return append(b, "]}"...), true
}

// appendEntries appends entries, comma separated, each by one (false: it cannot be), reusing
// the bytes the encoder kept of an entry whose lists it has seen and keeping the others' (a
// nil encoder keeps nothing); entries of namespaces no longer in the status are forgotten.
func (c *ClusterQuotaEncoder) appendEntries(b []byte, entries []clusterquota.ResourceQuotaStatusByNamespace, one func([]byte, clusterquota.ResourceQuotaStatusByNamespace) ([]byte, bool)) ([]byte, bool) {
	var ok bool
	for i, e := range entries {
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
		if b, ok = one(b, e); !ok {
			return nil, false
		}
		if c != nil {
			c.entries[e.Namespace] = encodedEntry{hard: e.Status.Hard, used: e.Status.Used, b: slices.Clone(b[start:])}
		}
	}
	if c != nil && len(c.entries) > len(entries) {
		kept := make(map[string]encodedEntry, len(entries))
		for _, e := range entries {
			if k, hit := c.entries[e.Namespace]; hit {
				kept[e.Namespace] = k
			}
		}
		c.entries = kept
	}
	return b, true
}

// appendRow appends one status entry as a row: its namespace, then its used value of each
// of names (null where it has none). An entry whose hard is not specHard's text (nor empty,
// which reads back as spec.quota.hard either way), or whose used names a resource not in
// names, cannot be a row.
func appendRow(b []byte, e clusterquota.ResourceQuotaStatusByNamespace, specHard corev1.ResourceList, names []string) ([]byte, bool) {
	if !plainJSON(e.Namespace) || len(e.Status.Hard) > 0 && !sameText(e.Status.Hard, specHard) {
		return nil, false
	}
	b = append(b, `["`...)
	b = append(b, e.Namespace...)
	b = append(b, '"')
	found := 0
	for _, name := range names {
		q, ok := e.Status.Used[corev1.ResourceName(name)]
		if !ok {
			b = append(b, ",null"...)
			continue
		}
		found++
		v := q.String()
		if !plainJSON(v) {
			return nil, false
		}
		b = append(b, `,"`...)
		b = append(b, v...)
		b = append(b, '"')
	}
	if found != len(e.Status.Used) {
		return nil, false
	}
	return append(b, ']'), true
}

// storedClusterQuota is a cluster quota as stored: its status either OpenShift's or with
// its entries as rows.
type storedClusterQuota struct {
	clusterquota.ClusterResourceQuota
	Status storedClusterQuotaStatus `json:"status"`
}

type storedClusterQuotaStatus struct {
	Total      corev1.ResourceQuotaStatus                   `json:"total"`
	Namespaces clusterquota.ResourceQuotasStatusByNamespace `json:"namespaces"`
	Rows       *namespaceRows                               `json:"namespaceRows"`
}

// namespaceRows is status.namespaces stored as rows: each the namespace, then its used
// value of each resource (nil: none).
type namespaceRows struct {
	Resources []corev1.ResourceName `json:"resources"`
	Rows      [][]*string           `json:"rows"`
}

// DecodeClusterQuota reads a cluster quota's stored form (any the encoders wrote) into
// OpenShift's shape: every entry of status.namespaces with its used, and its hard (left out
// of the stored form when it is spec.quota.hard: clusterquota.FillEntryHard).
func DecodeClusterQuota(value []byte, crq *clusterquota.ClusterResourceQuota) error {
	var s storedClusterQuota
	if err := kjson.UnmarshalCaseSensitivePreserveInts(value, &s); err != nil {
		return err
	}
	*crq = s.ClusterResourceQuota
	crq.Status = clusterquota.ClusterResourceQuotaStatus{Total: s.Status.Total, Namespaces: s.Status.Namespaces}
	if r := s.Status.Rows; r != nil {
		entries := make(clusterquota.ResourceQuotasStatusByNamespace, 0, len(r.Rows))
		for _, row := range r.Rows {
			if len(row) != len(r.Resources)+1 || row[0] == nil {
				return fmt.Errorf("cluster quota %q: a row of %d values for %d resources", crq.Name, len(row), len(r.Resources))
			}
			e := clusterquota.ResourceQuotaStatusByNamespace{Namespace: *row[0]}
			for i, v := range row[1:] {
				if v == nil {
					continue
				}
				q, err := resource.ParseQuantity(*v)
				if err != nil {
					return fmt.Errorf("cluster quota %q: namespace %q: %s: %w", crq.Name, e.Namespace, r.Resources[i], err)
				}
				if e.Status.Used == nil {
					e.Status.Used = make(corev1.ResourceList, len(r.Resources))
				}
				e.Status.Used[r.Resources[i]] = q
			}
			entries = append(entries, e)
		}
		crq.Status.Namespaces = entries
	}
	clusterquota.FillEntryHard(crq)
	return nil
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
