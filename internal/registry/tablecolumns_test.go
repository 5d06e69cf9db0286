package registry

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/registry/table"
)

// TestTableColumnsAsUpstream: every served kind's Table has the columns of kube-apiserver
// v1.37.2's printers (pkg/printers/internalversion), name, type, format, priority and
// description, as recorded in testdata/upstream-columns.json (generated from that module's
// AddHandlers); a kind upstream has no printer for gets its default columns (Name, Created
// At), and so does a kind whose storage upstream builds with the default convertor though
// a printer exists (CSIStorageCapacity: testdata/upstream-tables says which). quotad's own kinds (clusterquota's and quotareviews) and the kinds of the servers
// upstream aggregates (CRDs, APIServices) keep their own printers.
func TestTableColumnsAsUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/upstream-columns.json")
	if err != nil {
		t.Fatal(err)
	}
	var upstream map[string][]metav1.TableColumnDefinition
	if err := json.Unmarshal(b, &upstream); err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{"quota.openshift.io": true, "quotad.dev": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true}
	tables := readUpstreamTables(t)
	cat := NewCatalogue()
	s := &Store{cfg: Config{Catalogue: cat}}
	checked := 0
	for _, res := range cat.All() {
		gk := schema.GroupKind{Group: res.GVR.Group, Kind: res.Kind}
		if own[gk.Group] {
			continue
		}
		tbl, err := s.ConvertToTable(res, nil, time.Now(), metav1.IncludeNone)
		if err != nil {
			t.Errorf("%s: %v", gk, err)
			continue
		}
		key := gk.Group + "/" + gk.Kind
		if key == "events.k8s.io/Event" {
			key = "/Event" // one internal type, printed by core's Event printer
		}
		want, ok := upstream[key]
		stored := res
		if res.Storage != nil {
			stored = res.Storage.Resource
		}
		if u := tables[schema.GroupKind{Group: stored.GVR.Group, Kind: stored.Kind}]; !ok || (u != nil && u.Convertor == "default") {
			dt, _ := table.DefaultPrinter(schema.GroupVersionKind{}).Convert(nil, time.Now(), metav1.IncludeNone, false)
			want = dt.ColumnDefinitions
		}
		if !reflect.DeepEqual(tbl.ColumnDefinitions, want) {
			t.Errorf("%s (%s) columns:\n got %s\nwant %s", gk, res.GVR.Resource, names(tbl.ColumnDefinitions), names(want))
			for i := range min(len(want), len(tbl.ColumnDefinitions)) {
				if g, w := tbl.ColumnDefinitions[i], want[i]; g != w {
					t.Errorf("  column %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("checked %d kinds", checked)
	}
}

func names(cols []metav1.TableColumnDefinition) []string {
	var out []string
	for _, c := range cols {
		n := c.Name
		if c.Priority > 0 {
			n += "(wide)"
		}
		out = append(out, n)
	}
	return out
}
