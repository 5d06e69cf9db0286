package watchhub

import (
	"context"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/storage"
)

// configMaps is a Source of ConfigMaps stored as JSON under /cm/, on embedded etcd.
func configMaps(t *testing.T) (Source, storage.Store) {
	t.Helper()
	e, err := storage.StartEmbedded(t.Context(), t.TempDir(), nil, storage.WithUnsafeNoFsync())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	st := e.Store()
	dec := jsonDecoder{}
	return Source{
		Storage: st,
		Prefix:  "/cm/",
		Decode: func(evs []storage.Event, taken []runtime.Object) []Event {
			out := make([]Event, 0, len(evs))
			for i, ev := range evs {
				de := Event{Type: ev.Type, Key: ev.KV.Key, Rev: ev.KV.ModRevision}
				if taken != nil && taken[i] != nil {
					de.Cur = taken[i]
				} else if ev.Type == storage.EventPut {
					de.Cur, _ = dec.DecodeKV(&ev.KV)
				}
				if ev.PrevKV != nil {
					de.Prev = NewLazy(dec, ev.PrevKV)
				}
				out = append(out, de)
			}
			return out
		},
	}, st
}

type jsonDecoder struct{}

func (jsonDecoder) DecodeKV(kv *storage.KV) (runtime.Object, error) {
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(kv.Value, cm); err != nil {
		return nil, err
	}
	cm.ResourceVersion = fmt.Sprint(kv.ModRevision)
	return cm, nil
}

func put(t *testing.T, st storage.Store, name string, value []byte) int64 {
	t.Helper()
	r, err := st.Txn(t.Context(), storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/cm/" + name, Value: value}}})
	if err != nil {
		t.Fatal(err)
	}
	return r.Revision
}

func cmJSON(name, v string) []byte {
	b, _ := json.Marshal(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": v}})
	return b
}

// next returns the next batch with events, failing after a deadline.
func next(t *testing.T, ch <-chan Batch) Batch {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case b, ok := <-ch:
			if !ok {
				t.Fatal("watch ended")
			}
			if b.Err != nil {
				t.Fatal(b.Err)
			}
			if len(b.Events) > 0 {
				return b
			}
		case <-deadline:
			t.Fatal("no batch within 30s")
		}
	}
}

// TestHubFansOutAndReplaysHistory: every watcher of a hub gets each committed change in
// revision order, a watcher starting at an earlier revision gets the hub's history first,
// and an offered object stands for the event whose value is the offered one.
func TestHubFansOutAndReplaysHistory(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	first := put(t, st, "a", cmJSON("a", "0"))
	var hubs Hubs
	owner := new(int)
	h := hubs.Get("cm", owner, func() Source { return src })
	if again := hubs.Get("cm", owner, func() Source { t.Fatal("a second source for the same owner"); return Source{} }); again != h {
		t.Fatal("Get made a second hub for the same owner")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w1 := h.Watch(ctx, first)
	if w1 == nil {
		t.Fatal("a hub that is not running must serve any start")
	}
	r1 := put(t, st, "a", cmJSON("a", "1"))
	offered := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Data: map[string]string{"v": "offered"}}
	value := cmJSON("b", "2")
	if hubs.Lookup("cm", owner) != h || hubs.Lookup("cm", new(int)) != nil {
		t.Fatal("Lookup does not find the owner's hub only")
	}
	h.Offer("/cm/b", value, func() runtime.Object { return offered })
	r2 := put(t, st, "b", value)

	b := next(t, w1)
	if b.Rev != r1 || b.Events[0].Cur.(*corev1.ConfigMap).Data["v"] != "1" || b.Events[0].Prev.Get().(*corev1.ConfigMap).Data["v"] != "0" {
		t.Fatalf("first batch %+v, want a's update at %d", b, r1)
	}
	b = next(t, w1)
	if b.Rev != r2 || b.Events[0].Cur != runtime.Object(offered) || offered.ResourceVersion != fmt.Sprint(r2) {
		t.Fatalf("second batch %+v: want the offered object at revision %d", b, r2)
	}
	// A second watcher from the first revision is served from history.
	w2 := h.Watch(ctx, first)
	if w2 == nil {
		t.Fatal("history holds every event after the first revision")
	}
	for _, want := range []int64{r1, r2} {
		if b := next(t, w2); b.Rev != want {
			t.Fatalf("replayed batch at %d, want %d", b.Rev, want)
		}
	}
	// Direct serves the same events with a watch of its own.
	d := Direct(ctx, src, first)
	for _, want := range []int64{r1, r2} {
		if b := next(t, d); b.Rev != want {
			t.Fatalf("direct batch at %d, want %d", b.Rev, want)
		}
	}
}

// TestHubHistoryBoundedByEvents: the history holds at most trimAt(hubHistoryEvents) events however
// few batches carry them (a group-committed transaction is one batch of many objects); a
// watcher starting before what it holds is refused (it is served by a watch of its own),
// one starting within it is replayed every batch after its start.
func TestHubHistoryBoundedByEvents(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	ctx := t.Context()
	h, first, w := watchedHub(t, src, st, "start")
	const perTxn = 100
	txns := 3 * hubHistoryEvents / perTxn
	var revs []int64
	for i := range txns {
		ops := make([]storage.Op, perTxn)
		for j := range ops {
			name := fmt.Sprintf("cm-%d-%d", i, j)
			ops[j] = storage.Op{Type: storage.OpPut, Key: "/cm/" + name, Value: cmJSON(name, "1")}
		}
		r, err := st.Txn(t.Context(), storage.Txn{Ops: ops})
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, r.Revision)
		// Drain the watcher as the batches come, so it never falls behind.
		if b := next(t, w); b.Rev != r.Revision || len(b.Events) != perTxn {
			t.Fatalf("batch at %d with %d events, want %d with %d", b.Rev, len(b.Events), r.Revision, perTxn)
		}
	}
	held, events, counted, _, _ := historyHeld(h)
	if events != counted || events > trimAt(hubHistoryEvents) || events < hubHistoryEvents || held >= txns {
		t.Fatalf("history holds %d batches, %d events (counted %d), after %d batches of %d", held, events, counted, txns, perTxn)
	}
	if h.Watch(ctx, first) != nil {
		t.Fatal("a watch from before the history was served from it")
	}
	from := revs[len(revs)-3]
	w2 := h.Watch(ctx, from)
	if w2 == nil {
		t.Fatalf("a watch from %d, within the history, was refused", from)
	}
	for _, want := range revs[len(revs)-2:] {
		if b := next(t, w2); b.Rev != want {
			t.Fatalf("replayed batch at %d, want %d", b.Rev, want)
		}
	}
}

// A hub keeping values gives each event the previous value of its key. That value must be
// held on its own: kept as a pointer into the batch it came in, each batch would keep the
// one before alive through its events' previous values, and a key written all day would
// hold every version it ever had. The first batch must be collectable once later batches
// replaced its values, even while the latest batch lives on (as in the hub's history).
func TestKeptValuesHoldNoEarlierBatch(t *testing.T) {
	v := &keptValues{kvs: map[string]*storage.KV{}}
	batch := func(rev int64) []storage.Event {
		return []storage.Event{
			{Type: storage.EventPut, KV: storage.KV{Key: "/cm/a", Value: fmt.Appendf(nil, "a%d", rev), ModRevision: rev}},
			{Type: storage.EventPut, KV: storage.KV{Key: "/cm/b", Value: fmt.Appendf(nil, "b%d", rev), ModRevision: rev}},
		}
	}
	first := batch(1)
	collected := make(chan struct{})
	goruntime.AddCleanup(&first[0], func(ch chan struct{}) { close(ch) }, collected)
	v.fill(first)
	first = nil
	var last []storage.Event
	for rev := int64(2); rev <= 4; rev++ {
		last = batch(rev)
		v.fill(last)
	}
	// The previous values are still given, and are the stored ones.
	if p := last[0].PrevKV; p == nil || string(p.Value) != "a3" || p.ModRevision != 3 {
		t.Fatalf("previous value of /cm/a at 4: %+v, want a3 at 3", p)
	}
	for i := 0; i < 20; i++ {
		goruntime.GC()
		select {
		case <-collected:
			goruntime.KeepAlive(last)
			return
		default:
			goruntime.Gosched()
		}
	}
	t.Fatal("the first batch is still reachable after 20 collections: kept values chain the batches")
}

// watchedHub puts ConfigMap name, then returns a new hub of src with a watcher from that
// revision (ended with the test).
func watchedHub(t *testing.T, src Source, st storage.Store, name string) (*Hub, int64, <-chan Batch) {
	t.Helper()
	first := put(t, st, name, cmJSON(name, "0"))
	var hubs Hubs
	h := hubs.Get("cm", new(int), func() Source { return src })
	return h, first, h.Watch(t.Context(), first)
}

// historyHeld returns the batches a hub's history holds, its counts of their events and
// bytes, and those it counts again from the batches.
func historyHeld(h *Hub) (batches, events, countedEvents, bytes, countedBytes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.history {
		countedEvents += len(b.raw)
		countedBytes += b.bytes
	}
	return len(h.history), h.histEvents, countedEvents, h.histBytes, countedBytes
}

// TestHubHistoryColdPastHotEvents: the history holds its newest hubHotEvents events (to a
// quarter past) decoded and older ones only as stored; a watcher replaying from before
// them gets every batch in order, decoded again, with the values and previous values
// stored, and the batches the first watcher was handed keep their objects.
func TestHubHistoryColdPastHotEvents(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	var decodes atomic.Int64 // events decoded by the source
	decode := src.Decode
	src.Decode = func(evs []storage.Event, taken []runtime.Object) []Event {
		decodes.Add(int64(len(evs)))
		return decode(evs, taken)
	}
	h, first, w := watchedHub(t, src, st, "start")
	const perTxn = 16
	type change struct {
		rev        int64
		keys, vals []string // "" for a deletion
		prev       string   // the previous value of the batch's first key
	}
	var changes []change
	var handed []Batch
	for i := range 3 * hubHotEvents / perTxn {
		c := change{}
		var ops []storage.Op
		if i == 1 {
			// An update and a deletion in a batch that goes cold.
			c.keys, c.vals, c.prev = []string{"cm-0-0", "cm-0-1"}, []string{"updated", ""}, "0-0"
			ops = []storage.Op{
				{Type: storage.OpPut, Key: "/cm/cm-0-0", Value: cmJSON("cm-0-0", "updated")},
				{Type: storage.OpDelete, Key: "/cm/cm-0-1"},
			}
		} else {
			for j := range perTxn {
				name := fmt.Sprintf("cm-%d-%d", i, j)
				c.keys, c.vals = append(c.keys, name), append(c.vals, fmt.Sprintf("%d-%d", i, j))
				ops = append(ops, storage.Op{Type: storage.OpPut, Key: "/cm/" + name, Value: cmJSON(name, c.vals[j])})
			}
		}
		r, err := st.Txn(t.Context(), storage.Txn{Ops: ops})
		if err != nil {
			t.Fatal(err)
		}
		c.rev = r.Revision
		changes = append(changes, c)
		b := next(t, w)
		if b.Rev != r.Revision || len(b.Events) != len(ops) {
			t.Fatalf("batch at %d with %d events, want %d with %d", b.Rev, len(b.Events), r.Revision, len(ops))
		}
		handed = append(handed, b)
	}
	h.mu.Lock()
	decoded, cold := 0, 0
	for _, b := range h.history {
		decoded += len(b.Events)
		if b.cold {
			cold++
			if b.Events != nil || len(b.raw) == 0 {
				t.Errorf("cold batch at %d holds %d decoded and %d stored events", b.Rev, len(b.Events), len(b.raw))
			}
		}
	}
	h.mu.Unlock()
	if decoded < hubHotEvents-perTxn || decoded > trimAt(hubHotEvents) || cold == 0 {
		t.Fatalf("history holds %d decoded events and %d cold batches, want %d to %d decoded", decoded, cold, hubHotEvents-perTxn, trimAt(hubHotEvents))
	}
	// The first watcher's batches keep their objects.
	if obj := handed[0].Events[0].Cur; obj == nil || obj.(*corev1.ConfigMap).Data["v"] != changes[0].vals[0] {
		t.Fatalf("the first watcher's first batch lost its object: %v", obj)
	}
	// A watcher of the keys under /cm/cm-0- (the first two batches') is replayed only the cold
	// batches with keys there, and only those keys are decoded again for it; the batches
	// still held decoded it is handed whole.
	before := decodes.Load()
	under := h.SubscribeUnder(t.Context(), first, "/cm/cm-0-")
	if under == nil {
		t.Fatal("a watch from the first revision, within the history, was refused")
	}
	var revs []int64
	under.Each(func(b Batch) bool {
		revs = append(revs, b.Rev)
		if b.Rev <= changes[1].rev {
			for _, ev := range b.Events {
				if !strings.HasPrefix(ev.Key, "/cm/cm-0-") {
					t.Errorf("a cold batch replayed under /cm/cm-0- carries %s", ev.Key)
				}
			}
		}
		return b.Rev < changes[len(changes)-1].rev
	})
	thawed := decodes.Load() - before
	if len(revs) < 3 || revs[0] != changes[0].rev || revs[1] != changes[1].rev || revs[len(revs)-1] != changes[len(changes)-1].rev {
		t.Fatalf("the watcher under /cm/cm-0- was replayed revisions %v, want %d, %d, then the history's decoded batches to %d", revs, changes[0].rev, changes[1].rev, changes[len(changes)-1].rev)
	}
	if want := int64(perTxn + 2); thawed != want {
		t.Fatalf("%d events decoded again for the watcher under /cm/cm-0-, want %d (its keys' only)", thawed, want)
	}
	for i, r := range revs[2:] {
		if r <= changes[1].rev || (i > 0 && r <= revs[i+1]) {
			t.Fatalf("revisions replayed under /cm/cm-0- out of order: %v", revs)
		}
	}
	w2 := h.Watch(t.Context(), first)
	if w2 == nil {
		t.Fatal("a watch from the first revision, within the history, was refused")
	}
	for _, c := range changes {
		b := next(t, w2)
		if b.Rev != c.rev || len(b.Events) != len(c.keys) {
			t.Fatalf("replayed batch at %d with %d events, want %d with %d", b.Rev, len(b.Events), c.rev, len(c.keys))
		}
		for j, ev := range b.Events {
			if ev.Key != "/cm/"+c.keys[j] || ev.Rev != c.rev {
				t.Fatalf("replayed event %s at %d, want %s at %d", ev.Key, ev.Rev, c.keys[j], c.rev)
			}
			if c.vals[j] == "" {
				if ev.Type != storage.EventDelete || ev.Cur != nil || ev.Prev.Get().(*corev1.ConfigMap).Data["v"] != "0-1" {
					t.Fatalf("replayed deletion of %s: %+v", ev.Key, ev)
				}
				continue
			}
			cm, _ := ev.Cur.(*corev1.ConfigMap)
			if cm == nil || cm.Data["v"] != c.vals[j] || cm.ResourceVersion != fmt.Sprint(c.rev) {
				t.Fatalf("replayed %s at %d: %v, want value %s", ev.Key, c.rev, ev.Cur, c.vals[j])
			}
			if j == 0 && c.prev != "" && ev.Prev.Get().(*corev1.ConfigMap).Data["v"] != c.prev {
				t.Fatalf("replayed update of %s: previous value %v, want %s", ev.Key, ev.Prev.Get(), c.prev)
			}
		}
	}
}

// TestHubHistoryBoundedByBytes: one large object rewritten again and again (a cluster
// quota over many namespaces) is held at most trimAt(hubHistoryBytes) of values deep, previous
// values included, far fewer than hubHistory batches; a watcher starting within it is
// still replayed from it, in order.
func TestHubHistoryBoundedByBytes(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	src.KeepsValues = true
	src.EachPage = func(ctx context.Context, prefix string, rev int64, f func([]storage.KV) bool) (int64, error) {
		lr, err := st.List(ctx, prefix, storage.ListOptions{Revision: rev})
		if err != nil {
			return 0, err
		}
		f(lr.KVs)
		return lr.Revision, nil
	}
	ctx := t.Context()
	h, _, w := watchedHub(t, src, st, "big")
	data := strings.Repeat("x", 256<<10)
	writes := 3 * hubHistoryBytes / (2 * len(data))
	var revs []int64
	for i := range writes {
		r := put(t, st, "big", cmJSON("big", fmt.Sprint(i, data)))
		revs = append(revs, r)
		if b := next(t, w); b.Rev != r {
			t.Fatalf("batch at %d, want %d", b.Rev, r)
		}
	}
	held, _, _, bytes, counted := historyHeld(h)
	if bytes != counted || bytes > trimAt(hubHistoryBytes) || held >= writes || held >= hubHistory {
		t.Fatalf("history holds %d batches, %d bytes (counted %d), after %d writes of %d bytes", held, bytes, counted, writes, len(data))
	}
	from := revs[len(revs)-4]
	w2 := h.Watch(ctx, from)
	if w2 == nil {
		t.Fatalf("a watch from %d, within the history, was refused", from)
	}
	for _, want := range revs[len(revs)-3:] {
		if b := next(t, w2); b.Rev != want || len(b.Events) != 1 || b.Events[0].Prev == nil {
			t.Fatalf("replayed batch at %d with %d events, want %d with one and its previous value", b.Rev, len(b.Events), want)
		}
	}
}

// TestHubOffersBoundedByBytes: offers of writes that failed are never taken; a client whose
// large writes keep failing (creates racing for a thousand names) leaves at most
// maxOfferBytes of them, and an offer replaced for its key counts once. An offer still
// stands for its event after the others were forgotten.
func TestHubOffersBoundedByBytes(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	h, _, w := watchedHub(t, src, st, "start")
	big := cmJSON("failed", strings.Repeat("x", 1<<20))
	for i := range 3 * maxOfferBytes / len(big) {
		h.Offer(fmt.Sprintf("/cm/failed-%d", i), big, func() runtime.Object { return &corev1.ConfigMap{} })
		h.Offer(fmt.Sprintf("/cm/failed-%d", i), big, func() runtime.Object { return &corev1.ConfigMap{} })
		h.mu.Lock()
		held, counted := h.offerBytes, 0
		n := 0
		for _, list := range h.offers {
			for _, o := range list {
				counted += len(o.value)
				n++
			}
		}
		if n != h.offerCount {
			t.Fatalf("%d offers counted as %d", n, h.offerCount)
		}
		h.mu.Unlock()
		if held != counted || held > maxOfferBytes {
			t.Fatalf("after %d failed writes of %d bytes the hub holds %d bytes of offers (counted %d)", i+1, len(big), held, counted)
		}
	}
	offered := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ok"}}
	value := cmJSON("ok", "1")
	h.Offer("/cm/ok", value, func() runtime.Object { return offered })
	r := put(t, st, "ok", value)
	if b := next(t, w); b.Rev != r || b.Events[0].Cur != runtime.Object(offered) {
		t.Fatalf("batch %+v: want the offered object at %d", b, r)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.offers["/cm/ok"]; ok {
		t.Error("a taken offer is still held")
	}
}

// TestHubOffersOfOneKeyInARow: a key offered again before the hub saw the previous write's
// event (a cluster quota, rewritten by every joined round) has each of its offers stand for
// its own event; an offer never stored (its write failed) is forgotten once a later offer
// of its key is taken, and a key keeps at most 4 offers.
func TestHubOffersOfOneKeyInARow(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	h, _, w := watchedHub(t, src, st, "start")
	offered := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Data: map[string]string{"v": v}}
	}
	objs := map[string]*corev1.ConfigMap{}
	for _, v := range []string{"1", "failed", "2", "3"} {
		obj := offered(v)
		objs[v] = obj
		h.Offer("/cm/q", cmJSON("q", v), func() runtime.Object { return obj })
	}
	for _, v := range []string{"1", "2", "3"} {
		r := put(t, st, "q", cmJSON("q", v))
		if b := next(t, w); b.Rev != r || b.Events[0].Cur != runtime.Object(objs[v]) {
			t.Fatalf("write %s: batch %+v, want the offered object at %d", v, b, r)
		}
	}
	h.mu.Lock()
	if len(h.offers) != 0 || h.offerCount != 0 || h.offerBytes != 0 {
		t.Errorf("after every offer's event: %d keys, %d offers, %d bytes held", len(h.offers), h.offerCount, h.offerBytes)
	}
	h.mu.Unlock()
	for i := range 2 * maxOffersPerKey {
		h.Offer("/cm/q", cmJSON("q", fmt.Sprint("lost-", i)), func() runtime.Object { return offered("lost") })
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.offers["/cm/q"]); n != maxOffersPerKey || h.offerCount != n {
		t.Errorf("%d offers of one key held (%d counted), want %d", n, h.offerCount, maxOffersPerKey)
	}
}

// TestHubWatcherFallsBehind: a watcher that does not read is dropped once hubSubBuffer
// batches wait for it. It still receives, in order, every batch queued before that, then
// "fell behind" (it re-lists, as upstream's slow watchers do), while a watcher that reads
// receives every batch and keeps no more than maxSpareBatches of backlog once drained.
func TestHubWatcherFallsBehind(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	h, _, slow := watchedHub(t, src, st, "start")
	var mu sync.Mutex
	var fastRevs []int64
	fast := h.Watch(t.Context(), h.lastRevision())
	go func() {
		for b := range fast {
			if b.Err != nil {
				return
			}
			if len(b.Events) > 0 {
				mu.Lock()
				fastRevs = append(fastRevs, b.Rev)
				mu.Unlock()
			}
		}
	}()
	// Write until the hub drops slow, which nothing reads meanwhile. How many batches its
	// goroutine took before blocking depends on when it ran: writing a fixed number past
	// hubSubBuffer would not fill the backlog when it took more.
	watchers := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.subs)
	}
	var revs []int64
	for i := 0; watchers() == 2; i++ {
		if i > 4*hubSubBuffer {
			t.Fatalf("the hub still serves the watcher that reads nothing after %d batches", i)
		}
		name := fmt.Sprintf("cm-%d", i)
		revs = append(revs, put(t, st, name, cmJSON(name, "1")))
	}
	// Read nothing from slow until the hub delivered every write.
	last := revs[len(revs)-1]
	deadline := time.Now().Add(30 * time.Second)
	for h.lastRevision() < last {
		if time.Now().After(deadline) {
			t.Fatal("the hub did not deliver the writes within 30s")
		}
		goruntime.Gosched()
	}
	var got []int64
	var end error
	for b := range slow {
		if b.Err != nil {
			end = b.Err
			continue
		}
		got = append(got, b.Rev)
	}
	if end == nil || !strings.Contains(end.Error(), "fell behind") {
		t.Fatalf("the slow watcher ended with %v, want fell behind", end)
	}
	// The batches its goroutine took before the backlog filled, then the backlog's: at
	// least hubSubBuffer arrive, fewer than all, in order.
	if len(got) < hubSubBuffer || len(got) >= len(revs) || !slices.Equal(got, revs[:len(got)]) {
		t.Fatalf("the slow watcher received %d batches (%v...), want at least %d in order and fewer than %d", len(got), got[:min(len(got), 3)], hubSubBuffer, len(revs))
	}
	for {
		mu.Lock()
		n := len(fastRevs)
		done := n > 0 && fastRevs[n-1] >= last
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reading watcher received %d batches in 30s, want %d", n, len(revs))
		}
		goruntime.Gosched()
	}
	mu.Lock()
	if !slices.Equal(fastRevs, revs) {
		t.Fatalf("the reading watcher received %d batches, want all %d in order", len(fastRevs), len(revs))
	}
	mu.Unlock()
	h.mu.Lock()
	for sub := range h.subs {
		sub.mu.Lock()
		c := cap(sub.queue)
		sub.mu.Unlock()
		if c > hubSubBuffer {
			t.Errorf("a watcher's backlog has room for %d batches, more than %d", c, hubSubBuffer)
		}
	}
	h.mu.Unlock()
}

// lastRevision is the revision of the last batch the hub delivered.
func (h *Hub) lastRevision() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastRev
}

// A Stream hands its batches to Each's function in the calling goroutine, in order, and
// ends its watcher when the function says so; a stream whose Each is never called is ended
// with its context, and the hub stops with its last watcher.
func TestStreamEach(t *testing.T) {
	t.Parallel()
	src, st := configMaps(t)
	first := put(t, st, "a", cmJSON("a", "0"))
	var hubs Hubs
	h := hubs.Get("cm", new(int), func() Source { return src })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s1 := h.Subscribe(ctx, first)
	if s1 == nil {
		t.Fatal("a hub that is not running must serve any start")
	}
	idle, stopIdle := context.WithCancel(t.Context())
	if h.Subscribe(idle, first) == nil {
		t.Fatal("a running hub must serve its last revision")
	}
	var want []int64
	for i := range 3 {
		name := fmt.Sprintf("cm-%d", i)
		want = append(want, put(t, st, name, cmJSON(name, "1")))
	}
	var got []int64
	s1.Each(func(b Batch) bool {
		if b.Err != nil {
			t.Fatal(b.Err)
		}
		if len(b.Events) > 0 {
			got = append(got, b.Rev)
		}
		return len(got) < len(want)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("Each handed batches at %v, want %v", got, want)
	}
	subs := func() (n int, running bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.subs), h.running
	}
	if n, running := subs(); n != 1 || !running {
		t.Fatalf("after Each returned: %d watchers, running %v; want the idle one, running", n, running)
	}
	stopIdle()
	deadline := time.Now().Add(30 * time.Second)
	for n, running := subs(); n != 0 || running; n, running = subs() {
		if time.Now().After(deadline) {
			t.Fatalf("30s after the idle stream's context ended: %d watchers, running %v", n, running)
		}
		goruntime.Gosched()
	}
}
