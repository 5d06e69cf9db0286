package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/quotad/quotad/internal/storage"
)

// TestTwoProcessesShareOneEtcd: 50 parallel pod creates against pods: 10, spread over two
// quotad processes sharing one etcd, store exactly 10 pods and used pods == 10.
func TestTwoProcessesShareOneEtcd(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	etcd, err := storage.StartEmbedded(context.Background(), t.TempDir(), nil, storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	files := etcd.ClientTLS()
	flags := []string{"--etcd-servers", strings.Join(etcd.Endpoints(), ","),
		"--etcd-cafile", files.CAFile, "--etcd-certfile", files.CertFile, "--etcd-keyfile", files.KeyFile}
	a := start(t, flags...)
	b := start(t, flags...)
	ca, cb := a.client(), b.client()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a.must("create", "namespace", "race")
	b.must("create", "quota", "pods", "--hard=pods=10", "-n", "race")
	var mu sync.Mutex
	admitted, refused := 0, 0
	var other []error
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cs := []kubernetes.Interface{ca, cb}[i%2]
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
			_, err := cs.CoreV1().Pods("race").Create(ctx, p, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
			case apierrors.IsForbidden(err):
				refused++
			default:
				other = append(other, err)
			}
		}(i)
	}
	wg.Wait()
	if admitted != 10 || refused != 40 || len(other) > 0 {
		t.Fatalf("admitted %d refused %d other %v", admitted, refused, other)
	}
	pods, err := ca.CoreV1().Pods("race").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 10 {
		t.Fatalf("stored %d pods (%v)", len(pods.Items), err)
	}
	q, err := cb.CoreV1().ResourceQuotas("race").Get(ctx, "pods", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := q.Status.Used[corev1.ResourcePods]; used.Cmp(resource.MustParse("10")) != 0 {
		t.Fatalf("used pods %s", used.String())
	}
	golden(t, "two-processes-describe-quota.txt", a.must("describe", "quota", "pods", "-n", "race"))
}
