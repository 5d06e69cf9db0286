package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// gatedStore holds the first transaction that puts a key under hold until release is
// closed, and records the size of every combined request.
type gatedStore struct {
	storage.Store
	hold    string
	held    chan struct{}
	release chan struct{}
	once    sync.Once

	mu       sync.Mutex
	combined []int
}

func (g *gatedStore) Txn(ctx context.Context, txn storage.Txn) (storage.TxnResult, error) {
	for _, op := range txn.Ops {
		if g.hold != "" && strings.HasPrefix(op.Key, g.hold) {
			first := false
			g.once.Do(func() { first = true })
			if first {
				close(g.held)
				<-g.release
			}
		}
	}
	return g.Store.Txn(ctx, txn)
}

func (g *gatedStore) Txns(ctx context.Context, txns []storage.Txn) ([]storage.TxnOutcome, error) {
	g.mu.Lock()
	g.combined = append(g.combined, len(txns))
	g.mu.Unlock()
	return g.Store.Txns(ctx, txns)
}

// TestNamespacesShareEtcdRequests: writes of different namespaces that wait while an etcd
// request is in flight commit together in the next one, at one revision, each by its own
// guards: a namespace whose quota changed underneath is evaluated again without failing
// the others.
func TestNamespacesShareEtcdRequests(t *testing.T) {
	t.Parallel()
	g := &gatedStore{held: make(chan struct{}), release: make(chan struct{})}
	var raw storage.Store
	s := servertest.Start(t, func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store {
			raw = st
			g.Store = st
			return g
		}
	})
	ctx := ctxT(t)
	const n = 6
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("share-%d", i)
		mkNamespace(t, s, ns)
		mkQuota(t, s, ns, "q", map[string]string{"pods": "10", "requests.cpu": "1"})
		settle(t, s, ns) // the namespace controller's writes are done
	}
	// 1. The first namespace's create holds the only etcd request in flight (what the
	// setup's writes combined is not this test's concern).
	g.mu.Lock()
	g.combined = nil
	g.mu.Unlock()
	g.hold = "/registry/pods/share-0/"
	errs := make(chan error, n)
	go func() {
		_, err := s.Client.CoreV1().Pods("share-0").Create(ctx, pod("p", "100m", ""), metav1.CreateOptions{})
		errs <- err
	}()
	<-g.held
	// 2. The others queue for the next request.
	pods := make(chan *corev1.Pod, n)
	for i := 1; i < n; i++ {
		go func(i int) {
			p, err := s.Client.CoreV1().Pods(fmt.Sprintf("share-%d", i)).Create(ctx, pod("p", "100m", ""), metav1.CreateOptions{})
			if err == nil {
				pods <- p
			}
			errs <- err
		}(i)
	}
	waitFor(t, func() bool { return s.Store.QueuedTxns() == n-1 })
	// 3. Namespace share-3's quota changes underneath its queued transaction (an
	// annotation, written straight to storage): its guard fails, the others' hold.
	key := "/registry/resourcequotas/share-3/q"
	kv, err := raw.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(kv.Value), `"metadata":{`, `"metadata":{"annotations":{"edited":"underneath"},`, 1)
	if _, err := raw.Txn(ctx, storage.Txn{
		Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: key, Revision: kv.ModRevision}},
		Ops:      []storage.Op{{Type: storage.OpPut, Key: key, Value: []byte(edited)}},
	}); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	close(pods)
	// 4. Four of the five shared one request and one revision; share-3 committed after.
	g.mu.Lock()
	combined := append([]int(nil), g.combined...)
	g.mu.Unlock()
	if len(combined) == 0 || combined[0] != n-1 {
		t.Fatalf("combined requests %v, want the first to carry %d transactions", combined, n-1)
	}
	revs := map[string]int{}
	for p := range pods {
		revs[p.ResourceVersion]++
	}
	if len(revs) != 2 {
		t.Fatalf("pods committed at revisions %v, want the four combined at one and share-3 at another", revs)
	}
	for i := 0; i < n; i++ {
		expectUsed(t, s, fmt.Sprintf("share-%d", i), "q", map[string]string{"pods": "1", "requests.cpu": "100m"})
	}
	q, err := s.Client.CoreV1().ResourceQuotas("share-3").Get(ctx, "q", metav1.GetOptions{})
	if err != nil || q.Annotations["edited"] != "underneath" {
		t.Fatalf("share-3's quota lost the edit made underneath: %v %v", q.Annotations, err)
	}
}

// waitFor polls cond until it holds (or fails the test after a minute).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("condition not reached within a minute")
		}
	}
}

// txnRecorder records every transaction, combined or not.
type txnRecorder struct {
	storage.Store
	mu   sync.Mutex
	txns []storage.Txn
}

func (r *txnRecorder) Txn(ctx context.Context, txn storage.Txn) (storage.TxnResult, error) {
	r.mu.Lock()
	r.txns = append(r.txns, txn)
	r.mu.Unlock()
	return r.Store.Txn(ctx, txn)
}

func (r *txnRecorder) Txns(ctx context.Context, txns []storage.Txn) ([]storage.TxnOutcome, error) {
	r.mu.Lock()
	r.txns = append(r.txns, txns...)
	r.mu.Unlock()
	return r.Store.Txns(ctx, txns)
}

// putting returns the recorded transactions that put key.
func (r *txnRecorder) putting(key string) []storage.Txn {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []storage.Txn
	for _, txn := range r.txns {
		for _, op := range txn.Ops {
			if op.Type == storage.OpPut && op.Key == key {
				out = append(out, txn)
			}
		}
	}
	return out
}

// TestChargesGuardQuotaByRevision: a batch planned on the quota state the previous batch
// left guards the quota by the revision that batch committed at, not by the quota's bytes
// (which etcd would carry and compare in full): each create's transaction compares the
// quota's mod revision with the previous create's resourceVersion.
func TestChargesGuardQuotaByRevision(t *testing.T) {
	t.Parallel()
	rec := &txnRecorder{}
	s := servertest.Start(t, func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store {
			rec.Store = st
			return rec
		}
	})
	ctx := ctxT(t)
	mkNamespace(t, s, "guards")
	mkQuota(t, s, "guards", "q", map[string]string{"pods": "10"})
	settle(t, s, "guards")
	const quotaKey = "/registry/resourcequotas/guards/q"
	var prevRV string
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("p%d", i)
		p, err := s.Client.CoreV1().Pods("guards").Create(ctx, pod(name, "", ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		txns := rec.putting("/registry/pods/guards/" + name)
		if len(txns) != 1 {
			t.Fatalf("%s: %d transactions put it, want 1", name, len(txns))
		}
		var guards []string
		for _, c := range txns[0].Compares {
			if c.Key == quotaKey {
				guards = append(guards, fmt.Sprintf("target=%d rev=%d value=%dB", c.Target, c.Revision, len(c.Value)))
				if c.Target != storage.ModRevisionEquals {
					t.Errorf("%s: quota guarded by %s, want its mod revision", name, guards[len(guards)-1])
				}
				if prevRV != "" && fmt.Sprint(c.Revision) != prevRV {
					t.Errorf("%s: quota guarded at revision %d, want the previous create's %s", name, c.Revision, prevRV)
				}
			}
		}
		if len(guards) != 1 {
			t.Fatalf("%s: quota guards %v, want exactly one", name, guards)
		}
		prevRV = p.ResourceVersion
	}
	expectUsed(t, s, "guards", "q", map[string]string{"pods": "4"})
}
