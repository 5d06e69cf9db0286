package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mkNamespace creates a namespace and waits, with a watch, until the namespace controller
// has published its kube-root-ca.crt ConfigMap (as upstream clients wait for it), so object
// counts in tests do not depend on timing.
func mkNamespace(t *testing.T, s *servertest.Server, name string) {
	t.Helper()
	ctx := ctxT(t)
	w, err := s.Client.CoreV1().ConfigMaps(name).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			return
		}
	}
	t.Fatalf("namespace %s: kube-root-ca.crt never appeared", name)
}

func pod(name string, cpu, mem string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if cpu != "" || mem != "" {
		rl := corev1.ResourceList{}
		if cpu != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	}
	return p
}

func TestBootstrapNamespaces(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	for _, n := range []string{"default", "kube-system", "kube-public"} {
		ns, err := s.Client.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace %s: %v", n, err)
		}
		if ns.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s phase = %q", n, ns.Status.Phase)
		}
	}
}

func TestPodCRUD(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	pods := s.Client.CoreV1().Pods("default")
	created, err := pods.Create(ctx, pod("p1", "", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("server-set metadata missing: %+v", created.ObjectMeta)
	}
	if created.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %q, want Pending", created.Status.Phase)
	}
	if created.Spec.RestartPolicy != corev1.RestartPolicyAlways || created.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("defaults not applied: %+v", created.Spec)
	}
	got, err := pods.Get(ctx, "p1", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get: %v rv %s vs %s", err, got.ResourceVersion, created.ResourceVersion)
	}
	// Update with the current resourceVersion, then a stale one → 409.
	got.Labels = map[string]string{"a": "b"}
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == got.ResourceVersion {
		t.Fatal("resourceVersion did not change on update")
	}
	got.Labels = map[string]string{"a": "c"}
	_, err = pods.Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: err = %v, want Conflict", err)
	}
	want := `Operation cannot be fulfilled on pods "p1": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Errorf("conflict text:\n got %s\nwant %s", err, want)
	}
	// Patches of every type.
	for _, tc := range []struct {
		pt    types.PatchType
		patch string
		label string
	}{
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/j","value":"1"}]`, "j"},
		{types.MergePatchType, `{"metadata":{"labels":{"m":"1"}}}`, "m"},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"s":"1"}}}`, "s"},
	} {
		p, err := pods.Patch(ctx, "p1", tc.pt, []byte(tc.patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.pt, err)
		}
		if p.Labels[tc.label] != "1" {
			t.Errorf("%s: labels = %v", tc.pt, p.Labels)
		}
	}
	// dryRun create stores nothing.
	if _, err := pods.Create(ctx, pod("dry", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry-run pod stored: %v", err)
	}
	// Delete.
	if err := pods.Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "p1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
}

func TestListSelectorsAndPagination(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	cms := s.Client.CoreV1().ConfigMaps("default")
	for i := 0; i < 7; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"parity": fmt.Sprint(i % 2)}}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "parity=1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 3 {
		t.Errorf("label selector: %d items, want 3", len(l.Items))
	}
	l, err = cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=cm-4"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "cm-4" {
		t.Fatalf("field selector: %v %v", err, l)
	}
	var names []string
	opts := metav1.ListOptions{Limit: 3, LabelSelector: "parity"}
	for {
		l, err := cms.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			names = append(names, it.Name)
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if len(names) != 7 {
		t.Errorf("paginated names = %v, want 7", names)
	}
	b, _ := json.Marshal(names)
	if string(b) != `["cm-0","cm-1","cm-2","cm-3","cm-4","cm-5","cm-6"]` {
		t.Errorf("pagination order = %s", b)
	}
}
