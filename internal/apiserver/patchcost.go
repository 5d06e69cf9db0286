package apiserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// MaxStrategicMergeCost bounds the work of merging one strategic merge patch, in element
// comparisons. apimachinery's merge finds each element of a patch's list by its merge
// key by walking the live list, and orders it by walking the $setElementOrder list: a
// list of n elements costs about n × (n + the live list's length) comparisons, some
// 150 ns each. A 1.4 MB patch whose lists cost 4·10⁹ took six minutes of a core, and the
// library cannot be stopped once started. 4·10⁶ is about 0.6 s; a list of 1,000
// elements merged into one of 1,000 costs 2·10⁶.
const MaxStrategicMergeCost = 4_000_000

// shape is what the cost of a merge needs of the live object: for each path (object keys,
// and "any element" for arrays) the longest array found there.
type shape struct {
	maxLen   int
	children map[string]*shape
	elem     *shape
}

func (s *shape) add(v any) {
	switch v := v.(type) {
	case map[string]any:
		if s.children == nil {
			s.children = map[string]*shape{}
		}
		for k, c := range v {
			cs := s.children[k]
			if cs == nil {
				cs = &shape{}
				s.children[k] = cs
			}
			cs.add(c)
		}
	case []any:
		s.maxLen = max(s.maxLen, len(v))
		if s.elem == nil {
			s.elem = &shape{}
		}
		for _, e := range v {
			s.elem.add(e)
		}
	}
}

func (s *shape) child(k string) *shape {
	if s == nil {
		return nil
	}
	return s.children[k]
}

func (s *shape) length() int {
	if s == nil {
		return 0
	}
	return s.maxLen
}

func (s *shape) element() *shape {
	if s == nil {
		return nil
	}
	return s.elem
}

// strategicMergeCost estimates the comparisons merging patch into orig costs, against
// the patch metadata of schemaObj's type; a list whose strategy is unknown counts as
// merged.
func strategicMergeCost(orig, patch []byte, schemaObj any) (int64, error) {
	var p, o any
	if err := json.Unmarshal(patch, &p); err != nil {
		return 0, err
	}
	if err := json.Unmarshal(orig, &o); err != nil {
		return 0, err
	}
	live := &shape{}
	live.add(o)
	var meta strategicpatch.LookupPatchMeta
	if m, err := strategicpatch.NewPatchMetaFromStruct(schemaObj); err == nil {
		meta = m
	}
	return mapCost(p, live, meta), nil
}

func mapCost(v any, live *shape, meta strategicpatch.LookupPatchMeta) int64 {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	var cost int64
	for k, pv := range m {
		if strings.HasPrefix(k, "$") {
			// $setElementOrder/<list>, $deleteFromPrimitiveList/<list>, $retainKeys: each
			// element is looked up in the list it orders or edits.
			if list, ok := pv.([]any); ok {
				field := k[strings.IndexByte(k, '/')+1:]
				others := 0
				if pl, ok := m[field].([]any); ok {
					others = len(pl)
				}
				n := int64(len(list))
				cost += n * (n + int64(live.child(field).length()+others))
			}
			continue
		}
		switch pv := pv.(type) {
		case map[string]any:
			var sub strategicpatch.LookupPatchMeta
			if meta != nil {
				sub, _, _ = meta.LookupPatchMetadataForStruct(k)
			}
			cost += mapCost(pv, live.child(k), sub)
		case []any:
			merged := true
			var sub strategicpatch.LookupPatchMeta
			if meta != nil {
				s, pm, err := meta.LookupPatchMetadataForSlice(k)
				if err == nil {
					sub = s
					merged = slices.Contains(pm.GetPatchStrategies(), "merge")
				}
			}
			n, l := int64(len(pv)), int64(live.child(k).length())
			if merged {
				cost += n * (n + l)
			} else {
				cost += n + l
			}
			elem := live.child(k).element()
			for _, e := range pv {
				cost += mapCost(e, elem, sub)
			}
		}
	}
	return cost
}

// HeavyMergeCost is the cost from which a strategic merge is done holding a seat of long
// reads (about 15 ms of a core).
const HeavyMergeCost = 100_000

// checkStrategicMergeCost refuses a strategic merge patch whose merge would cost more
// than MaxStrategicMergeCost with a 413, before any of it runs, and returns its cost.
func checkStrategicMergeCost(orig, patch []byte, schemaObj any) (int64, error) {
	cost, err := strategicMergeCost(orig, patch, schemaObj)
	if err != nil {
		return 0, apierrors.NewBadRequest(err.Error())
	}
	if cost > MaxStrategicMergeCost {
		return 0, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the strategic merge patch's lists would take %d comparisons to merge, more than the limit %d", cost, MaxStrategicMergeCost))
	}
	return cost, nil
}
