package commit

import (
	"reflect"
	"testing"

	"github.com/quotad/quotad/internal/storage"
)

// TestResolveGuards: a quota read from storage is guarded by its revision; one a batch
// still in flight writes is guarded by the bytes it writes, until that batch has committed,
// after which the guard is its commit revision.
func TestResolveGuards(t *testing.T) {
	const key = "/registry/resourcequotas/ns/q"
	value := []byte(`{"kind":"ResourceQuota"}`)

	var p batchPlan
	cmps := p.guard(nil, storedQuota{value: value, rev: 7}, key)
	if len(p.pending) != 0 || !reflect.DeepEqual(cmps[0], storage.Compare{Target: storage.ModRevisionEquals, Key: key, Revision: 7}) {
		t.Fatalf("stored quota: guard %+v, pending %v; want its revision 7 and nothing pending", cmps[0], p.pending)
	}

	inFlight, committed := &batchDone{}, &batchDone{}
	cmps = p.guard(nil, storedQuota{value: value, by: inFlight}, key)
	cmps = p.guard(cmps, storedQuota{value: value, by: committed}, key+"2")
	for i, c := range cmps {
		if c.Target != storage.ValueEquals || string(c.Value) != string(value) {
			t.Fatalf("guard %d before resolving: %+v, want the written bytes", i, c)
		}
	}
	committed.rev.Store(42)
	p.txn.Compares = cmps
	p.resolveGuards()
	if c := p.txn.Compares[0]; c.Target != storage.ValueEquals || c.Key != key {
		t.Errorf("guard on the uncommitted batch's write: %+v, want its value", c)
	}
	if c := p.txn.Compares[1]; !reflect.DeepEqual(c, storage.Compare{Target: storage.ModRevisionEquals, Key: key + "2", Revision: 42}) {
		t.Errorf("guard on the committed batch's write: %+v, want revision 42", c)
	}
	if len(p.pending) != 0 {
		t.Errorf("pending after resolving: %v", p.pending)
	}
}
