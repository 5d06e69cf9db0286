package integration

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/jsonpatch"
	"github.com/quotad/quotad/internal/server/servertest"
)

// heapNow is the test process's live heap (the server runs in it) after a collection.
func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestExpensiveRequestsBounded sends each shape of request whose work used to grow with
// what it asked for, not with what it sent: each gets upstream's answer (or quotad's
// bound, documented in docs/security.md), changes nothing it should not, and the heap
// is back near where it started once it is answered.
//
// Not parallel: the heap and goroutines it counts are the whole test process's, so it runs
// alone, before the parallel tests start.
func TestExpensiveRequestsBounded(t *testing.T) {
	s := servertest.Start(t)
	ctx := edgeCtx(t)
	cms := s.Client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("target"), Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if _, err := s.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := heapNow()
	goroutines := runtime.NumGoroutine()

	// 1. The copy bomb: 40 copies of the annotations into themselves would make 2^40 KB;
	// the copies stop at 3 MiB with the library's text, as kube-apiserver's.
	bomb := jsonpatch.CopyBomb(`{"k":"`+strings.Repeat("v", 1000)+`"}`, 40)
	resp, body := edgeDo(t, ctx, s, http.MethodPatch, "/api/v1/namespaces/default/configmaps/target", "application/json-patch+json", bomb)
	// (kube-apiserver words a failed JSON patch as its generic 422.)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `"reason":"Invalid"`) {
		t.Errorf("copy bomb: %d %s", resp.StatusCode, body)
	}

	// 2. More than 10,000 operations: kube-apiserver's 413.
	ops := strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/k","value":"v"},`, 10001), ",")
	resp, body = edgeDo(t, ctx, s, http.MethodPatch, "/api/v1/namespaces/default/configmaps/target", "application/json-patch+json", "["+ops+"]")
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"message":"Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"`) {
		t.Errorf("10,001 operations: %d %s", resp.StatusCode, body)
	}

	// 3. A strategic merge patch whose lists would take minutes to merge (40,000
	// containers ordered by $setElementOrder): refused before it runs.
	var smp strings.Builder
	smp.WriteString(`{"spec":{"$setElementOrder/containers":[`)
	for i := range 40000 {
		if i > 0 {
			smp.WriteString(",")
		}
		fmt.Fprintf(&smp, `{"name":"c%d"}`, i)
	}
	smp.WriteString(`]}}`)
	resp, body = edgeDo(t, ctx, s, http.MethodPatch, "/api/v1/namespaces/default/pods/p", "application/strategic-merge-patch+json", smp.String())
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "comparisons to merge, more than the limit 4000000") {
		t.Errorf("strategic merge patch of 40,000 elements: %d %.300s", resp.StatusCode, body)
	}
	// An ordinary one still merges.
	resp, body = edgeDo(t, ctx, s, http.MethodPatch, "/api/v1/namespaces/default/pods/p", "application/strategic-merge-patch+json",
		`{"metadata":{"labels":{"b":"1"}},"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"name":"c","image":"nginx:2"}]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("ordinary strategic merge patch: %d %s", resp.StatusCode, body)
	}

	// 4. A patch whose request ends while it runs stops there: 10,000 insertions at the
	// head of an array of 200,000 (each copies the array) with a 1 s deadline gets the
	// 504 (or, on a machine fast enough, the failed test's 422), and its work stops at its
	// next operation.
	var big strings.Builder
	big.WriteString(`[{"op":"add","path":"/metadata/finalizers","value":[`)
	for i := range 200000 {
		if i > 0 {
			big.WriteString(",")
		}
		big.WriteString(`"a"`)
	}
	big.WriteString(`]}`)
	big.WriteString(strings.Repeat(`,{"op":"add","path":"/metadata/finalizers/0","value":"b"}`, 9998))
	// Were it to finish, its last operation fails, so it changes nothing either way.
	big.WriteString(`,{"op":"test","path":"/data/k","value":"not v"}]`)
	resp, body = edgeDo(t, ctx, s, http.MethodPatch, "/api/v1/namespaces/default/configmaps/target?timeout=1s", "application/json-patch+json", big.String())
	if resp.StatusCode != http.StatusGatewayTimeout && resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("long patch with a 1 s deadline: %d %.300s", resp.StatusCode, body)
	}

	// 5. An 890 KB label selector (100,000 values) lists what it selects.
	var sel strings.Builder
	sel.WriteString("app in (x")
	for i := 0; sel.Len() < 890_000; i++ {
		fmt.Fprintf(&sel, ",v%d", i)
	}
	sel.WriteString(")")
	resp, body = edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/pods?labelSelector="+strings.ReplaceAll(sel.String(), " ", "%20"), "", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"p"`) {
		t.Errorf("890 KB selector: %d %.300s", resp.StatusCode, body)
	}

	// Nothing changed what it should not.
	cm, err := cms.Get(ctx, "target", metav1.GetOptions{})
	if err != nil || len(cm.Annotations) != 0 || len(cm.Finalizers) != 0 || cm.Data["k"] != "v" {
		t.Errorf("the ConfigMap after the refused patches: %v %v", cm, err)
	}
	// The work ended with the requests: the handlers' goroutines are gone and their
	// memory with them.
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > goroutines+20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+20 {
		t.Errorf("%d goroutines after the requests, %d before", n, goroutines)
	}
	if end := heapNow(); end > start+64<<20 {
		t.Errorf("heap %d MiB after the requests, %d MiB before", end>>20, start>>20)
	}
}
