package integration

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// TestFairQueuingServesUsersInTurn: with the one read seat held by alice and three more of
// her reads waiting, bob's read, queued after them, is served second, not fourth: a seat
// set free goes to each waiting user in turn (quotad_apiserver_queued_requests shows the
// waiting requests). Every queued read is answered.
func TestFairQueuingServesUsersInTurn(t *testing.T) {
	t.Parallel()
	entered := make(chan string, 8)
	release := make(chan struct{})
	s := rbacServerWith(t, withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
		i := strings.LastIndex(key, "/hold-")
		if i < 0 {
			return false, storage.KV{}, nil
		}
		entered <- key[i+len("/hold-"):]
		select {
		case <-release:
		case <-ctx.Done():
		}
		return true, storage.KV{}, storage.ErrNotFound
	}), func(c *server.Config) { c.MaxRequestsInflight = 1 })
	ctx := edgeCtx(t)
	grantAll(t, s, "alice", "bob")
	alice, bob := clientFor(t, configAs(s, "alice-token")), clientFor(t, configAs(s, "bob-token"))
	var answered sync.WaitGroup
	read := func(c interface {
		Get(context.Context, string, metav1.GetOptions) (*corev1.ConfigMap, error)
	}, name string) {
		answered.Add(1)
		go func() {
			defer answered.Done()
			if _, err := c.Get(ctx, "hold-"+name, metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("read %s: %v, want its 404", name, err)
			}
		}()
	}
	read(alice.CoreV1().ConfigMaps("default"), "a0")
	if got := <-entered; got != "a0" {
		t.Fatalf("first read served: %s", got)
	}
	for i, name := range []string{"a1", "a2", "a3"} {
		read(alice.CoreV1().ConfigMaps("default"), name)
		waitForMetrics(t, s, "quotad_apiserver_queued_requests "+string(rune('1'+i)))
	}
	read(bob.CoreV1().ConfigMaps("default"), "b1")
	waitForMetrics(t, s, "quotad_apiserver_queued_requests 4")
	var order []string
	for i := 0; i < 4; i++ {
		release <- struct{}{}
		order = append(order, <-entered)
	}
	close(release)
	answered.Wait()
	if got := strings.Join(order, ","); got != "a1,b1,a2,a3" {
		t.Errorf("served in the order %s, want a1,b1,a2,a3", got)
	}
	waitForMetrics(t, s, "quotad_apiserver_queued_requests 0")
}

// TestPenaltySlowsRefusedClients: a client whose requests keep being refused as malformed
// or unauthenticated is held before its next requests once its budget is spent
// (quotad_apiserver_penalized_requests_total), and nobody else is: not another user from
// the same address, not the address's authenticated users when bad credentials came from
// it, never system:masters. The budget does not refill here (the clock stands still).
func TestPenaltySlowsRefusedClients(t *testing.T) {
	t.Parallel()
	still := clocktesting.NewFakePassiveClock(time.Unix(1_000_000, 0))
	s := rbacServerWith(t, func(c *server.Config) {
		c.Penalties = apiserver.Penalties{Burst: 3, Rate: 1, MaxDelay: 10 * time.Millisecond, MaxWaiting: 64,
			Clock: still}
	})
	ctx := edgeCtx(t)
	grantAll(t, s, "alice", "bob")
	penalized := func(n int) {
		t.Helper()
		waitForMetrics(t, s, "quotad_apiserver_penalized_requests_total "+string(rune('0'+n)))
	}
	// 1. Bad credentials: four 401s spend the address's budget; the fifth waits first.
	forged := clientFor(t, configAs(s, "forged-token"))
	for i := 0; i < 5; i++ {
		if _, err := forged.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Fatalf("forged token: %v", err)
		}
	}
	penalized(1)
	// The address's authenticated users are not held.
	alice := clientFor(t, configAs(s, "alice-token"))
	if _, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	penalized(1)
	// 2. alice sends four invalid objects (422s): her next request, a good one, waits and
	// is then served; bob is not held.
	for i := 0; i < 4; i++ {
		_, err := alice.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "Invalid value") {
			t.Fatalf("invalid create: %v", err)
		}
	}
	if _, err := alice.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("alice-ok")}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice's good create after her refusals: %v", err)
	}
	penalized(2)
	bob := clientFor(t, configAs(s, "bob-token"))
	if _, err := bob.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("bob-ok")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	penalized(2)
	// 3. The administrators are never held.
	for i := 0; i < 6; i++ {
		if _, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}, metav1.CreateOptions{}); err == nil {
			t.Fatal("invalid create admitted")
		}
	}
	if _, err := s.Client.CoreV1().ConfigMaps("default").Get(ctx, "alice-ok", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	penalized(2)
	// Nothing invalid was stored.
	cms, err := s.Client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if cm.Name == "Not_A_Name" {
			t.Error("an invalid ConfigMap was stored")
		}
	}
}

// grantAll binds users to cluster-admin (which, unlike system:masters, is not exempt
// from fairness or penalties).
func grantAll(t *testing.T, s *servertest.Server, users ...string) {
	t.Helper()
	for _, u := range users {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "all-" + u},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: u}},
		}
		if _, err := s.Client.RbacV1().ClusterRoleBindings().Create(ctxT(t), crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The index learns the bindings from its watch: wait until the last user may list.
	c := clientFor(t, configAs(s, users[len(users)-1]+"-token"))
	waitAnswer(t, ctxT(t), "the bindings to take effect", func() bool {
		_, err := c.CoreV1().ConfigMaps("default").List(ctxT(t), metav1.ListOptions{Limit: 1})
		return err == nil
	})
}

// TestWatchesPerUserBound: past --max-watches-per-user open watches, a user's next watch
// gets the in-flight 429; other users and system:masters are not limited, and once one of
// the user's watches ends, the user may watch again.
func TestWatchesPerUserBound(t *testing.T) {
	t.Parallel()
	s := rbacServerWith(t, func(c *server.Config) { c.MaxWatchesPerUser = 2 })
	ctx := edgeCtx(t)
	grantAll(t, s, "alice", "bob")
	alice, bob := clientFor(t, configAs(s, "alice-token")), clientFor(t, configAs(s, "bob-token"))
	var open []watch.Interface
	for i := 0; i < 2; i++ {
		w, err := alice.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("alice's watch %d: %v", i, err)
		}
		open = append(open, w)
	}
	_, err := alice.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("alice's third watch: %v, want a 429", err)
	}
	for _, c := range []kubernetes.Interface{bob, s.Client, s.Client, s.Client} {
		w, err := c.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("another user's watch: %v", err)
		}
		defer w.Stop()
	}
	open[0].Stop()
	waitAnswer(t, ctx, "alice may watch again once a watch ended", func() bool {
		w, err := alice.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsTooManyRequests(err) {
				t.Fatalf("alice's watch after one ended: %v", err)
			}
			return false
		}
		w.Stop()
		return true
	})
	open[1].Stop()
}
