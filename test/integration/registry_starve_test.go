package integration

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestRegistryQuotaEditsNotStarved: merge patches of a quota's spec.hard without a
// resourceVersion all land while 32 writers create and delete pods in the namespace (each
// of which charges or credits that quota), and usage stays exact.
func TestRegistryQuotaEditsNotStarved(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "busy")
	mkQuota(t, s, "busy", "q", map[string]string{"pods": "100000", "count/pods": "100000", "requests.cpu": "10000"})
	mkQuota(t, s, "busy", "doomed", map[string]string{"pods": "100000"})
	pods := s.Client.CoreV1().Pods("busy")
	quotas := s.Client.CoreV1().ResourceQuotas("busy")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var writeErrs []error
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", g, i)
				_, err := pods.Create(ctx, pod(name, "10m", "1Mi"), metav1.CreateOptions{})
				if err == nil && i%2 == 1 {
					err = pods.Delete(ctx, name, metav1.DeleteOptions{})
				}
				if err != nil {
					mu.Lock()
					writeErrs = append(writeErrs, err)
					mu.Unlock()
					return
				}
			}
		}(g)
	}
	const edits = 40
	var last string
	for i := 0; i < edits; i++ {
		last = fmt.Sprint(2000 + i)
		if i%2 == 0 {
			patch := []byte(`{"spec":{"hard":{"pods":"` + last + `"}}}`)
			if _, err := quotas.Patch(ctx, "q", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("quota edit %d (merge patch) under load: %v", i, err)
			}
			continue
		}
		// An update whose body carries no resourceVersion is unconditional too.
		q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q.ResourceVersion = ""
		q.Spec.Hard[corev1.ResourcePods] = resource.MustParse(last)
		if _, err := quotas.Update(ctx, q, metav1.UpdateOptions{}); err != nil {
			t.Errorf("quota edit %d (update) under load: %v", i, err)
		}
	}
	if err := quotas.Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Errorf("quota delete under load: %v", err)
	}
	close(stop)
	wg.Wait()
	for _, err := range writeErrs {
		t.Errorf("pod writer: %v", err)
	}
	q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Spec.Hard[corev1.ResourcePods]; got.String() != last || q.Status.Hard.Pods().String() != last {
		t.Errorf("after the edits spec.hard.pods = %s, status.hard.pods = %s, want %s", got.String(), q.Status.Hard.Pods().String(), last)
	}
	// Usage is exact (the invariant checker runs when the test ends): what is left.
	left, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := fmt.Sprint(len(left.Items))
	expectUsed(t, s, "busy", "q", map[string]string{"pods": n, "count/pods": n})
}
