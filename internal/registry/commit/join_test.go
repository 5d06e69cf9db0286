package commit

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/admission"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/storage"
)

// joinRun is cluster quota c (pods=100) over namespaces n0..n2 (team=a), none with a
// ResourceQuota, and an engine whose first transaction putting c waits for first.
type joinRun struct {
	t      *testing.T
	r      *recomputeRun
	first  chan error // the first round's outcome: nil lets it commit
	txns   chan storage.Txn
	once   sync.Once
	stalls chan struct{}
}

func newJoinRun(t *testing.T) *joinRun {
	r := newRecomputeRun(t, nil)
	j := &joinRun{t: t, r: r, first: make(chan error), txns: make(chan storage.Txn, 64), stalls: make(chan struct{})}
	for i := 0; i < 3; i++ {
		ns := fmt.Sprint("n", i)
		b, err := r.env.Encode(namespacesGR, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": "a"}}})
		if err != nil {
			t.Fatal(err)
		}
		r.h.kv.txn(storageTxnPut(r.env.KeyPrefix(namespacesGR, "")+ns, b))
	}
	if _, err := r.e.Commit(r.ctx, r.crqWrite()); err != nil {
		t.Fatal(err)
	}
	r.rs.beforeTxn = func(txn storage.Txn) error {
		if !slicesContainsPut(txn.Ops, r.crqKey) {
			return nil
		}
		j.txns <- txn
		var err error
		j.once.Do(func() {
			close(j.stalls)
			err = <-j.first
		})
		return err
	}
	return j
}

// create commits pod name in namespace ns through the engine.
func (j *joinRun) create(ns, name string) <-chan error {
	h := j.r.h
	p := newPod(name, "10m", "")
	p.Namespace = ns
	res := h.pods()
	attrs := &admission.Attributes{Operation: admission.Create, Resource: res.gvr, Kind: res.gvk, Namespace: ns, Name: name, Object: p}
	w := &Write{GR: res.GroupResource(), Namespaced: true, Attrs: attrs, Key: res.Key(ns, name), Obj: p}
	w.Decision, w.DecisionErr = h.acct.Prepare(attrs)
	w.Prepared = true
	b, err := testEnv{}.Encode(res.GroupResource(), p)
	if err != nil {
		j.t.Fatal(err)
	}
	w.Value, w.Size = b, len(b)
	out := make(chan error, 1)
	go func() {
		_, err := j.r.e.Commit(j.r.ctx, w)
		out <- err
	}()
	return out
}

// planned waits until the slot holds two rounds: the first in flight, the next planned.
func (j *joinRun) planned() {
	sl := j.r.e.crq.slot("c")
	deadline := time.Now().Add(time.Minute)
	for {
		sl.mu.Lock()
		n := sl.rounds
		sl.mu.Unlock()
		if n == maxRounds {
			return
		}
		if time.Now().After(deadline) {
			j.t.Fatalf("rounds planned: %d, want %d while the first commits", n, maxRounds)
		}
		time.Sleep(time.Millisecond)
	}
}

// revPutting is the revision whose transaction put key (0: none).
func (j *joinRun) revPutting(key string) int64 {
	for _, r := range j.r.h.kv.log {
		if slicesContainsPut(r.ops, key) {
			return r.rev
		}
	}
	return 0
}

// used is the cluster quota's stored total and per-namespace pods.
func (j *joinRun) used() (int64, map[string]int64) {
	var got clusterquota.ClusterResourceQuota
	if err := json.Unmarshal(j.r.h.kv.keys[j.r.crqKey].Value, &got); err != nil {
		j.t.Fatal(err)
	}
	total := got.Status.Total.Used[corev1.ResourcePods]
	per := map[string]int64{}
	for _, n := range got.Status.Namespaces {
		q := n.Status.Used[corev1.ResourcePods]
		per[n.Namespace] = q.Value()
	}
	return total.Value(), per
}

// TestJoinedRoundsPipelined: while a joined round commits, the next is planned on the
// cluster quota it writes; once it committed, the next is guarded by its revision.
func TestJoinedRoundsPipelined(t *testing.T) {
	j := newJoinRun(t)
	a := j.create("n0", "a")
	<-j.stalls
	<-j.txns
	b, c := j.create("n1", "b"), j.create("n2", "c")
	j.planned()
	j.first <- nil
	for _, ch := range []<-chan error{a, b, c} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	// The second round guards the cluster quota by the revision the first committed at.
	first := j.revPutting(j.r.h.pods().Key("n0", "a"))
	second := <-j.txns
	guarded := false
	for _, cmp := range second.Compares {
		if cmp.Key == j.r.crqKey {
			guarded = cmp.Target == storage.ModRevisionEquals && cmp.Revision == first
		}
	}
	if !guarded || !slicesContainsPut(second.Ops, j.r.h.pods().Key("n1", "b")) && !slicesContainsPut(second.Ops, j.r.h.pods().Key("n2", "c")) {
		t.Errorf("second round: compares %+v, want the cluster quota at revision %d, with pod b or c", second.Compares, first)
	}
	if n := j.r.rs.conflicts.Load(); n != 0 {
		t.Errorf("%d transactions failed their guards", n)
	}
	total, per := j.used()
	if total != 3 || per["n0"] != 1 || per["n1"] != 1 || per["n2"] != 1 {
		t.Errorf("cluster quota: total %d, per namespace %v; want 3, one each", total, per)
	}
}

// TestJoinedRoundAfterAFailedOne: a round planned on one that then fails is not sent as
// planned; its writes are evaluated again on the cluster quota as stored, and every write
// is charged once.
func TestJoinedRoundAfterAFailedOne(t *testing.T) {
	j := newJoinRun(t)
	a := j.create("n0", "a")
	<-j.stalls
	<-j.txns
	b, c := j.create("n1", "b"), j.create("n2", "c")
	j.planned()
	j.first <- storage.ErrConflict
	for _, ch := range []<-chan error{a, b, c} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	close(j.txns)
	for txn := range j.txns {
		for _, cmp := range txn.Compares {
			if cmp.Key == j.r.crqKey && cmp.Target == storage.ValueEquals {
				t.Errorf("a round was sent guarded by the value of a round that failed")
			}
		}
	}
	total, per := j.used()
	if total != 3 || per["n0"] != 1 || per["n1"] != 1 || per["n2"] != 1 {
		t.Errorf("cluster quota: total %d, per namespace %v; want 3, one each", total, per)
	}
	for ns, name := range map[string]string{"n0": "a", "n1": "b", "n2": "c"} {
		if j.revPutting(j.r.h.pods().Key(ns, name)) == 0 {
			t.Errorf("pod %s/%s not stored", ns, name)
		}
	}
}
