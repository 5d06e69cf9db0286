package registry

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/registry/selector"
	"github.com/quotad/quotad/internal/storage"
)

// TestSelectionReadsWhatFieldsRead: for every kind a selection prunes, random objects of
// the kind, stored, give from their pruned copy the labels and every field label a selector
// may name (all that upstream's scheme accepts for the kind) that decoding them whole gives. A kind whose
// field label is read outside the label's path fails here until it says where
// (FieldPather).
func TestSelectionReadsWhatFieldsRead(t *testing.T) {
	up := readUpstreamFieldLabels(t)
	const seeds = 30
	kinds, objects := 0, 0
	for _, res := range NewCatalogue().All() {
		if res.Review {
			continue
		}
		var terms []fields.Selector
		var accepted []string
		for _, c := range up.Candidates {
			if label, _, err := res.ConvertFieldLabel(c, "v"); err == nil {
				terms = append(terms, fields.OneTermEqualSelector(label, "v"))
				accepted = append(accepted, label)
			}
		}
		sel := newSelection(res, selector.New(labels.SelectorFromSet(labels.Set{"a": "b"}), fields.AndSelectors(terms...)))
		if sel.reader.paths == nil {
			continue // decoded whole
		}

		kinds++
		for seed := int64(0); seed < seeds; seed++ {
			obj := res.New()
			randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 2).MaxDepth(8).Funcs(
				func(q *resource.Quantity, c randfill.Continue) {
					*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
				},
				func(r *runtime.RawExtension, c randfill.Continue) {
					*r = runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"n":%d}`, c.Intn(9)))}
				},
			).Fill(obj)
			m, err := meta.Accessor(obj)
			if err != nil {
				t.Fatal(err)
			}
			m.SetResourceVersion("")
			value, err := codec.EncodeForStorage(obj, res.GVK())
			if err != nil {
				continue // not an object the kind can store
			}
			full, err := decodeStored(res, value, 1)
			if err != nil {
				continue
			}
			kv := storage.KV{Key: "k", Value: value, ModRevision: 1}
			pruned := sel.reader.pruned(kv)
			if pruned == nil {
				t.Errorf("%s seed %d: the stored value was not pruned: %s", res.GVR, seed, value)
				continue
			}
			objects++
			what := fmt.Sprintf("%s seed %d", res.GVR, seed)
			got, want := res.Fields(pruned), res.Fields(full)
			for _, label := range accepted {
				if got[label] != want[label] {
					t.Errorf("%s: %s of the pruned copy %q, of the whole object %q", what, label, got[label], want[label])
				}
			}
			pm, _ := meta.Accessor(pruned)
			if got, want := pm.GetLabels(), m.GetLabels(); !reflect.DeepEqual(labels.Set(got), labels.Set(want)) && len(got)+len(want) > 0 {
				t.Errorf("%s: labels of the pruned copy %v, of the whole object %v", what, got, want)
			}
		}
	}
	if kinds < 50 || objects < 50*seeds/2 {
		t.Errorf("checked %d kinds, %d objects", kinds, objects)
	}
}
