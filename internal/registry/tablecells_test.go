package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// upstreamTable is one file of testdata/upstream-tables, written by hack/conformance/tables
// from kube-apiserver v1.37.2's table convertors.
type upstreamTable struct {
	APIVersion        string                         `json:"apiVersion"`
	Kind              string                         `json:"kind"`
	Now               time.Time                      `json:"now"`
	Convertor         string                         `json:"convertor"`
	ColumnDefinitions []metav1.TableColumnDefinition `json:"columnDefinitions"`
	Samples           []struct {
		Name   string          `json:"name"`
		Object json.RawMessage `json:"object"`
		upstreamRow
	} `json:"samples"`
	List []upstreamRow `json:"list"`
}

type upstreamRow struct {
	Cells      json.RawMessage            `json:"cells"`
	Conditions []metav1.TableRowCondition `json:"conditions,omitempty"`
}

func readUpstreamTables(t *testing.T) map[schema.GroupKind]*upstreamTable {
	t.Helper()
	paths, err := filepath.Glob("testdata/upstream-tables/*.json")
	if err != nil {
		t.Fatal(err)
	}
	out := map[schema.GroupKind]*upstreamTable{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var u upstreamTable
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		gv, err := schema.ParseGroupVersion(u.APIVersion)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[gv.WithKind(u.Kind).GroupKind()] = &u
	}
	return out
}

// TestTableCellsAsUpstream: for every served kind (quotad's own kinds and the aggregated
// servers' aside, as in TestTableColumnsAsUpstream), each sample object of
// testdata/upstream-tables (hack/conformance/tables: kube-apiserver v1.37.2's storage
// convertor, wide, at the file's fixed now), decoded as a stored object is, converts to
// the same columns and the same row — cells, -o wide ones included, and row conditions
// — byte for byte as JSON, alone (a GET) and all samples together (a LIST, where some
// printers order rows or mark the default across the list). A version served from
// another's storage (events.k8s.io/v1 Event, autoscaling/v1 HorizontalPodAutoscaler)
// reads the stored version's samples.
func TestTableCellsAsUpstream(t *testing.T) {
	tables := readUpstreamTables(t)
	own := map[string]bool{"quota.openshift.io": true, "quotad.dev": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true}
	cat := NewCatalogue()
	s := &Store{cfg: Config{Catalogue: cat}}
	checked := 0
	for _, res := range cat.All() {
		if own[res.GVR.Group] {
			continue
		}
		stored := res
		if res.Storage != nil {
			stored = res.Storage.Resource
		}
		u, ok := tables[schema.GroupKind{Group: stored.GVR.Group, Kind: stored.Kind}]
		if !ok {
			t.Errorf("%s: no samples in testdata/upstream-tables (add them to hack/conformance/tables)", res.GVR)
			continue
		}
		checked++
		t.Run(res.GVR.Group+"/"+res.GVR.Version+"/"+res.GVR.Resource, func(t *testing.T) {
			var objs []runtime.Object
			for _, sample := range u.Samples {
				obj, err := decodeStored(res, sample.Object, 1)
				if err != nil {
					t.Fatalf("%s: %v", sample.Name, err)
				}
				objs = append(objs, obj)
				tbl, err := s.ConvertToTable(res, []runtime.Object{obj}, u.Now, metav1.IncludeNone)
				if err != nil {
					t.Fatalf("%s: %v", sample.Name, err)
				}
				if !reflect.DeepEqual(tbl.ColumnDefinitions, u.ColumnDefinitions) {
					t.Fatalf("columns (upstream's convertor: %s):\n got %s\nwant %s", u.Convertor, names(tbl.ColumnDefinitions), names(u.ColumnDefinitions))
				}
				if len(tbl.Rows) != 1 {
					t.Fatalf("%s: %d rows", sample.Name, len(tbl.Rows))
				}
				compareRow(t, "sample "+sample.Name, u.ColumnDefinitions, tbl.Rows[0], sample.upstreamRow)
			}
			tbl, err := s.ConvertListToTable(res, objs, u.Now, metav1.IncludeNone)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(tbl.Rows) != len(u.List) {
				t.Fatalf("list: %d rows, want %d", len(tbl.Rows), len(u.List))
			}
			for i, row := range tbl.Rows {
				compareRow(t, fmt.Sprintf("list row %d", i), u.ColumnDefinitions, row, u.List[i])
			}
		})
	}
	if checked < 55 {
		t.Errorf("checked %d kinds", checked)
	}
}

// compareRow requires got's cells and conditions to encode as want's, and names the
// columns that differ.
func compareRow(t *testing.T, what string, cols []metav1.TableColumnDefinition, got metav1.TableRow, want upstreamRow) {
	t.Helper()
	gotCells, err := json.Marshal(got.Cells)
	if err != nil {
		t.Fatal(err)
	}
	var wantCells bytes.Buffer
	if err := json.Compact(&wantCells, want.Cells); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotCells, wantCells.Bytes()) {
		var g, w []json.RawMessage
		_ = json.Unmarshal(gotCells, &g)
		_ = json.Unmarshal(wantCells.Bytes(), &w)
		for i := range max(len(g), len(w)) {
			var gc, wc string
			if i < len(g) {
				gc = string(g[i])
			}
			if i < len(w) {
				wc = string(w[i])
			}
			if gc != wc {
				col := "?"
				if i < len(cols) {
					col = cols[i].Name
				}
				t.Errorf("%s: %s: got %s, want %s", what, col, gc, wc)
			}
		}
	}
	if len(got.Conditions) != 0 || len(want.Conditions) != 0 {
		if !reflect.DeepEqual(got.Conditions, want.Conditions) {
			t.Errorf("%s: conditions:\n got %+v\nwant %+v", what, got.Conditions, want.Conditions)
		}
	}
}
