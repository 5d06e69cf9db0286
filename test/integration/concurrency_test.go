package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// sharedEtcd starts an embedded etcd for several quotad replicas of one test.
func sharedEtcd(t *testing.T) *storage.Embedded {
	t.Helper()
	etcd, err := storage.StartEmbedded(context.Background(), t.TempDir(), nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	return etcd
}

// twoReplicas starts two quotad processes sharing one etcd.
func twoReplicas(t *testing.T) (a, b *servertest.Server) {
	t.Helper()
	etcd := sharedEtcd(t)
	return servertest.Start(t, servertest.WithEtcd(etcd)), servertest.Start(t, servertest.WithEtcd(etcd))
}

// acrossReplicas runs write(i, replica) for i in [0, n) at once, even i on a and odd on b,
// hands each result to record (called under a lock, in no particular order) and waits.
func acrossReplicas(n int, a, b *servertest.Server, write func(i int, s *servertest.Server) error, record func(i int, err error)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			err := write(i, s)
			mu.Lock()
			defer mu.Unlock()
			record(i, err)
		}(i)
	}
	wg.Wait()
}

// TestParallelCreatesAcrossTwoReplicas: 50 parallel pod creates against pods: 10, spread over
// two quotad processes sharing one etcd, store exactly 10 pods and used pods == 10.
func TestParallelCreatesAcrossTwoReplicas(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	ctx := ctxT(t)
	mkNamespace(t, a, "race")
	_, err := a.Client.CoreV1().ResourceQuotas("race").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admitted, refused := 0, 0
	var other []error
	acrossReplicas(50, a, b, func(i int, s *servertest.Server) error {
		_, err := s.Client.CoreV1().Pods("race").Create(ctx, pod(fmt.Sprintf("p-%d", i), "", ""), metav1.CreateOptions{})
		return err
	}, func(_ int, err error) {
		switch {
		case err == nil:
			admitted++
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: pods, requested: pods=1, used: pods=10, limited: pods=10"):
			refused++
		default:
			other = append(other, err)
		}
	})
	if admitted != 10 || refused != 40 || len(other) > 0 {
		t.Fatalf("admitted %d, refused %d, other errors %v", admitted, refused, other)
	}
	pods, err := b.Client.CoreV1().Pods("race").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 10 {
		t.Fatalf("stored pods: %d (%v)", len(pods.Items), err)
	}
	q, err := b.Client.CoreV1().ResourceQuotas("race").Get(ctx, "pods", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := q.Status.Used[corev1.ResourcePods]; used.Value() != 10 {
		t.Fatalf("used pods = %s, want 10", used.String())
	}
}

// TestContendedNamespaceAcrossReplicas: three replicas group-committing to one namespace's
// quota at once (32 writers, 40 creates each, spread over the replicas) keep failing each
// other's guards; every create must still land (none refused with "too many concurrent
// changes"), and used pods equals the pods stored.
//
// The replicas run an embedded three-member cluster (--cluster-init, --join): each commits
// through its own member, so a guard's window is a raft round, as in production.
func TestContendedNamespaceAcrossReplicas(t *testing.T) {
	t.Parallel()
	ports := storagetest.FreePorts(t, 6)
	a := servertest.Start(t, func(c *server.Config) { c.ClusterInit = true }, etcdPorts(ports[0], ports[1]))
	replicas := []*servertest.Server{a,
		servertest.Start(t, joinWith(a, a.JoinToken), etcdPorts(ports[2], ports[3])),
		servertest.Start(t, joinWith(a, a.JoinToken), etcdPorts(ports[4], ports[5])),
	}
	ctx := ctxT(t)
	c := replicas[0].Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100000")}}}
	if _, err := c.CoreV1().ResourceQuotas("hot").Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 32, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := replicas[w%len(replicas)].Client
			for i := range each {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d-%d", w, i)}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
				if _, err := cs.CoreV1().Pods("hot").Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Errorf("create refused: %v", err)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d creates failed", n, writers*each)
	}
	got, err := c.CoreV1().ResourceQuotas("hot").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := got.Status.Used[corev1.ResourcePods]; used.Value() != writers*each {
		t.Fatalf("used pods %s, want %d", used.String(), writers*each)
	}
	// The invariant while the cluster has its quorum; then stop the replicas here (a
	// cleanup's check on the last one would find its member alone).
	a.CheckInvariant()
	for i := len(replicas) - 1; i >= 0; i-- {
		replicas[i].Stop()
	}
}
