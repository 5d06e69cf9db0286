package integration

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestSelectionsOfStoredObjects: lists and watches with selectors, which evaluate them on a
// pruned copy of each stored object, give exactly the matching objects, each as a GET of it
// gives it: JSON lists and lists as tables, a watch of every bound pod from resourceVersion
// 0 (KWOK's) with the pods bound after it, and a Job's status.successful (read from
// status.succeeded).
func TestSelectionsOfStoredObjects(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "selstored"
	mkNamespace(t, s, ns)
	pods := s.Client.CoreV1().Pods(ns)
	for _, p := range []struct{ name, node, app string }{
		{"a1", "n1", "a"}, {"a2", "n2", "a"}, {"a3", "", "a"}, {"b1", "n1", "b"}, {"b2", "", "b"},
	} {
		pod := podWith(p.name, nil, nil)
		pod.Labels = map[string]string{"app": p.app}
		pod.Spec.NodeName = p.node
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(items []corev1.Pod) []string {
		var out []string
		for _, p := range items {
			out = append(out, p.Name)
			got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Kind, p.APIVersion, got.Kind, got.APIVersion = "", "", "", ""
			if !reflect.DeepEqual(&p, got) {
				t.Errorf("listed %s differs from its GET:\n%+v\n%+v", p.Name, p, got)
			}
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		label, field string
		want         []string
	}{
		{"app=a", "spec.nodeName!=", []string{"a1", "a2"}},
		{"", "spec.nodeName=n1", []string{"a1", "b1"}},
		{"app in (a,b)", "spec.nodeName=,metadata.name!=a3", []string{"b2"}},
		{"app=c", "", nil},
		{"", "status.phase=Pending,spec.restartPolicy=Always", []string{"a1", "a2", "a3", "b1", "b2"}},
	} {
		opts := metav1.ListOptions{LabelSelector: c.label, FieldSelector: c.field}
		l, err := pods.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(l.Items); !reflect.DeepEqual(got, c.want) {
			t.Errorf("list %q %q: %v, want %v", c.label, c.field, got, c.want)
		}
		// As a table (kubectl get), the rows of the same pods.
		table := podTable(t, s, ns, c.label, c.field)
		var rows []string
		for _, r := range table.Rows {
			rows = append(rows, r.Cells[0].(string))
		}
		sort.Strings(rows)
		if !reflect.DeepEqual(rows, c.want) {
			t.Errorf("table %q %q: %v, want %v", c.label, c.field, rows, c.want)
		}
	}

	// Every bound pod from resourceVersion 0, then a pod bound after.
	w, err := s.Client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "spec.nodeName!=", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	late := podWith("c1", nil, nil)
	late.Spec.NodeName = "n3"
	if _, err := pods.Create(ctx, late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen []corev1.Pod
	for len(seen) < 4 {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("watch closed after %d pods", len(seen))
		}
		if ev.Type == watch.Bookmark {
			continue
		}
		if ev.Type != watch.Added {
			t.Fatalf("event %s %+v", ev.Type, ev.Object)
		}
		seen = append(seen, *ev.Object.(*corev1.Pod))
	}
	if got := names(seen); !reflect.DeepEqual(got, []string{"a1", "a2", "b1", "c1"}) {
		t.Errorf("watched %v", got)
	}

	// A Job's status.successful is its status.succeeded: the job whose pod succeeded is
	// selected, by a watch (from the job controller's status write) and by a list.
	jobs := s.Client.BatchV1().Jobs(ns)
	for _, name := range []string{"j1", "j2"} {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
		if _, err := jobs.Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	jw, err := jobs.Watch(ctx, metav1.ListOptions{FieldSelector: "status.successful=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer jw.Stop()
	pw, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=j2"})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	ev := <-pw.ResultChan()
	jobPod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		t.Fatalf("job pod event %s %+v", ev.Type, ev.Object)
	}
	jobPod.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, jobPod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = <-jw.ResultChan()
	if j, ok := ev.Object.(*batchv1.Job); !ok || ev.Type != watch.Added || j.Name != "j2" || j.Status.Succeeded != 1 {
		t.Fatalf("jobs watch: %s %+v", ev.Type, ev.Object)
	}
	jl, err := jobs.List(ctx, metav1.ListOptions{FieldSelector: "status.successful=1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jl.Items) != 1 || jl.Items[0].Name != "j2" {
		t.Errorf("jobs with status.successful=1: %d items", len(jl.Items))
	}
}

// podTable is the list of pods of ns ("" for all) as kubectl get asks for it: a Table.
func podTable(t *testing.T, s *servertest.Server, ns, label, field string) metav1.Table {
	t.Helper()
	raw, err := s.Client.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").
		Param("labelSelector", label).Param("fieldSelector", field).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	return table
}
