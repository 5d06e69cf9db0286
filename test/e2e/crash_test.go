package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func (c *cluster) client() kubernetes.Interface {
	c.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		c.t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// TestCrashDuringCreates SIGKILLs quotad during a burst of creates; after a restart on the
// same data dir every quota equals what is stored: no phantom usage, nothing over hard.
func TestCrashDuringCreates(t *testing.T) {
	t.Parallel()
	c := start(t)
	cs := c.client()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "burst"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("150"), corev1.ResourceRequestsCPU: resource.MustParse("100")}
	if _, err := cs.CoreV1().ResourceQuotas("burst").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. A burst of creates from 8 clients; kill the server once 40 have been admitted.
	var admitted atomic.Int64
	killed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d-%d", w, i)}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				}}}}
				if _, err := cs.CoreV1().Pods("burst").Create(ctx, p, metav1.CreateOptions{}); err == nil && admitted.Add(1) == 40 {
					once.Do(func() {
						_ = c.cmd.Process.Kill()
						_ = c.cmd.Wait()
						c.cmd = nil
						close(killed)
					})
				}
			}
		}(w)
	}
	wg.Wait()
	// 2. Restart on the same data dir and compare every quota with what is stored.
	c.launch()
	cs = c.client()
	pods, err := cs.CoreV1().Pods("burst").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu := resource.MustParse("0")
	for _, p := range pods.Items {
		cpu.Add(p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU])
	}
	q, err := cs.CoreV1().ResourceQuotas("burst").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	usedPods, usedCPU := q.Status.Used[corev1.ResourcePods], q.Status.Used[corev1.ResourceRequestsCPU]
	if usedPods.Value() != int64(len(pods.Items)) || usedCPU.Cmp(cpu) != 0 {
		t.Fatalf("after crash: stored %d pods (cpu %s), quota used pods=%s requests.cpu=%s", len(pods.Items), cpu.String(), usedPods.String(), usedCPU.String())
	}
	if len(pods.Items) < 40 || len(pods.Items) > 150 {
		t.Fatalf("stored %d pods, want between 40 and 150", len(pods.Items))
	}
	t.Logf("admitted before the kill: >= %d, stored after restart: %d", admitted.Load(), len(pods.Items))
}
