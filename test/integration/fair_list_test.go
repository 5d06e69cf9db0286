package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// heldPages tells entered of each read of a later page (a start key, 500 keys) under one
// prefix, and holds the first until release is closed.
type heldPages struct {
	storage.Store
	prefix  string
	entered chan struct{}
	release chan struct{}
	held    atomic.Bool
}

func (h *heldPages) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if prefix == h.prefix && opts.Limit == 500 && opts.StartKey != "" {
		h.entered <- struct{}{}
		if h.held.CompareAndSwap(false, true) {
			select {
			case <-h.release:
			case <-ctx.Done():
			}
		}
	}
	return h.Store.List(ctx, prefix, opts)
}

// startHeld starts a server with one seat of long reads and objects config maps in ns,
// its later page reads told and the first held (h). The returned client is a user bound
// to cluster-admin but not in system:masters, whose long reads take seats.
func startHeld(t *testing.T, ctx context.Context, ns string, objects int) (*servertest.Server, *heldPages, kubernetes.Interface) {
	h := &heldPages{prefix: "/registry/configmaps/" + ns + "/", entered: make(chan struct{}, 64), release: make(chan struct{})}
	s := servertest.Start(t, func(c *server.Config) {
		c.MaxLongReads = 1
		c.WrapStorage = func(st storage.Store) storage.Store { h.Store = st; return h }
	})
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < objects; i += 100 {
		var txn storage.Txn
		for j := i; j < i+100; j++ {
			name := fmt.Sprintf("cm-%05d", j)
			v := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":"uid-%d","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"k":"v"}}`, name, ns, j)
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: h.prefix + name, Value: []byte(v)})
		}
		if _, err := h.Store.Txn(ctx, txn); err != nil {
			t.Fatal(err)
		}
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fair-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "fair-reader"}}}
	if _, err := s.Client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "fair-reader"}
	reader, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, h, reader
}

// holdSeat starts an un-paged list of ns by c and returns once it holds the only seat of
// long reads, held reading its second page (h); the list's outcome comes on the channel.
func holdSeat(t *testing.T, ctx context.Context, c kubernetes.Interface, ns string, h *heldPages) <-chan error {
	t.Helper()
	listed := make(chan error, 1)
	go func() {
		_, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		listed <- err
	}()
	select {
	case <-h.entered:
	case <-ctx.Done():
		t.Fatal("the list did not read its second page")
	}
	return listed
}

// TestFairLongWatchWaits: a watch's initial events beyond its first page are a long
// read: while a list holds the only seat, the watch sends its first page and then waits
// for the seat; once the list goes on, the watch sends every object.
func TestFairLongWatchWaits(t *testing.T) {
	t.Parallel()
	const ns, objects = "fair", 1200
	ctx := edgeCtx(t)
	s, h, reader := startHeld(t, ctx, ns, objects)
	listed := holdSeat(t, ctx, reader, ns, h)
	w, err := reader.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	seen := map[string]bool{}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !gauge(t, ctx, s, "quotad_apiserver_long_read_pages_waiting") {
		select {
		case ev := <-w.ResultChan():
			seen[ev.Object.(*corev1.ConfigMap).Name] = true
		case <-h.entered:
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the watch never waited for a seat")
		}
	}
	close(h.release)
	go func() {
		for range h.entered {
		}
	}()
	for n := 0; n < objects; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended after %d objects", n)
			}
			name := ev.Object.(*corev1.ConfigMap).Name
			if ev.Type != "ADDED" || seen[name] {
				t.Fatalf("event %s %s", ev.Type, name)
			}
			seen[name] = true
		case <-ctx.Done():
			t.Fatalf("the watch sent %d objects", len(seen))
		}
		n = 0
		for name := range seen {
			if strings.HasPrefix(name, "cm-") {
				n++
			}
		}
	}
	if err := <-listed; err != nil {
		t.Errorf("list: %v", err)
	}
}

// TestFairLongListsWait: with one seat of long reads, a second un-paged list of many
// objects waits for the seat the first holds (quotad_apiserver_long_read_pages_waiting)
// instead of reading on; cheap requests (gets, short lists, paged lists, writes) are
// served meanwhile; once the first list goes on, both lists end with every object.
func TestFairLongListsWait(t *testing.T) {
	t.Parallel()
	const (
		ns      = "fair"
		objects = 1200 // three pages
	)
	ctx := edgeCtx(t)
	s, h, reader := startHeld(t, ctx, ns, objects)
	var lists sync.WaitGroup
	counts := make([]int, 2)
	list := func(i int) {
		lists.Add(1)
		go func() {
			defer lists.Done()
			l, err := reader.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Errorf("list %d: %v", i, err)
				return
			}
			for _, cm := range l.Items {
				if strings.HasPrefix(cm.Name, "cm-") {
					counts[i]++
				}
			}
		}()
	}
	// 1. The first long list takes the seat and is held reading its second page.
	list(0)
	select {
	case <-h.entered:
	case <-ctx.Done():
		t.Fatal("the first list did not read its second page")
	}
	// 2. The second waits for the seat, without reading its second page.
	list(1)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !gauge(t, ctx, s, "quotad_apiserver_long_read_pages_waiting") {
		select {
		case <-h.entered:
			t.Fatal("a second long list read on while the first held the only seat")
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the second list never waited for a seat")
		}
	}
	// 3. Cheap requests are served meanwhile.
	if _, err := s.Client.CoreV1().ConfigMaps(ns).Get(ctx, "cm-00007", metav1.GetOptions{}); err != nil {
		t.Errorf("get: %v", err)
	}
	if l, err := s.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 10}); err != nil || len(l.Items) != 10 {
		t.Errorf("paged list: %v", err)
	}
	if _, err := s.Client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("short list: %v", err)
	}
	if _, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cheap")}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create: %v", err)
	}
	// 4. The first list goes on; both end with every object.
	close(h.release)
	go func() {
		for range h.entered {
		}
	}()
	lists.Wait()
	for i, n := range counts {
		if n != objects {
			t.Errorf("list %d: %d objects, want %d", i, n, objects)
		}
	}
}

// TestFairExemptLongReads: system:masters takes no seat of long reads, as upstream's API
// Priority and Fairness exempts it: while another user's un-paged list holds the only seat
// (held reading its second page), an administrator's un-paged list and watch of the same
// objects are served whole without waiting, as an informer's relist of a cluster component
// holding admin credentials must be.
func TestFairExemptLongReads(t *testing.T) {
	t.Parallel()
	const ns, objects = "fair", 1200
	ctx := edgeCtx(t)
	s, h, reader := startHeld(t, ctx, ns, objects)
	listed := holdSeat(t, ctx, reader, ns, h)
	go func() {
		for range h.entered {
		}
	}()
	count := func(items []corev1.ConfigMap) int {
		n := 0
		for _, cm := range items {
			if strings.HasPrefix(cm.Name, "cm-") {
				n++
			}
		}
		return n
	}
	l, err := s.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(l.Items); n != objects {
		t.Errorf("the administrator's list: %d objects, want %d", n, objects)
	}
	w, err := s.Client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for seen := map[string]bool{}; len(seen) < objects; {
		select {
		case ev := <-w.ResultChan():
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && strings.HasPrefix(cm.Name, "cm-") {
				seen[cm.Name] = true
			}
		case <-ctx.Done():
			t.Fatalf("the administrator's watch sent %d of %d objects", len(seen), objects)
		}
	}
	if gauge(t, ctx, s, "quotad_apiserver_long_read_pages_waiting") {
		t.Error("a page waits for a seat of long reads, with only the administrator's reads besides the held one")
	}
	// The reader's list still holds the seat; released, it ends whole.
	select {
	case err := <-listed:
		t.Fatalf("the reader's list ended while held: %v", err)
	default:
	}
	close(h.release)
	if err := <-listed; err != nil {
		t.Errorf("the reader's list: %v", err)
	}
}

// gauge reports whether a gauge of the server's metrics is above zero.
func gauge(t *testing.T, ctx context.Context, s *servertest.Server, name string) bool {
	t.Helper()
	resp, body := edgeDo(t, ctx, s, http.MethodGet, "/metrics", "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %d", resp.StatusCode)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v != "0"
		}
	}
	return false
}
