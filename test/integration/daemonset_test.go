package integration

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/server/servertest"
)

func dsNode(t *testing.T, s *servertest.Server, name string, labels map[string]string, taints ...corev1.Taint) {
	t.Helper()
	if _, err := s.Client.CoreV1().Nodes().Create(ctxT(t), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// dsPodsByNode returns node → pod names of app=agent (the node a pod is bound to by its
// required node affinity on metadata.name).
func dsPodsByNode(ctx context.Context, s *servertest.Server, ns string) (map[string][]string, []corev1.Pod, error) {
	l, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		return nil, nil, err
	}
	out := map[string][]string{}
	for _, p := range l.Items {
		node := ""
		if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			if len(terms) == 1 && len(terms[0].MatchFields) == 1 && terms[0].MatchFields[0].Key == "metadata.name" && len(terms[0].MatchFields[0].Values) == 1 {
				node = terms[0].MatchFields[0].Values[0]
			}
		}
		out[node] = append(out[node], p.Name)
	}
	return out, l.Items, nil
}

func dsNodes(m map[string][]string) string {
	var out []string
	for n, pods := range m {
		for range pods {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func dsWait(t *testing.T, s *servertest.Server, ns, what string, cond func(*appsv1.DaemonSet, map[string][]string) bool) *appsv1.DaemonSet {
	t.Helper()
	var ds *appsv1.DaemonSet
	wlEventually(t, what, func(ctx context.Context) (bool, error) {
		if _, err := wlMakeReady(ctx, s, ns, "app=agent"); err != nil {
			return false, err
		}
		byNode, _, err := dsPodsByNode(ctx, s, ns)
		if err != nil {
			return false, err
		}
		ds, err = s.Client.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		return err == nil && ds.Status.ObservedGeneration == ds.Generation && cond(ds, byNode), err
	})
	return ds
}

// TestDaemonSetOnePodPerMatchingNode: on three Nodes, one not matching the nodeSelector
// and one tainted NoSchedule, the DaemonSet runs one pod, bound to the remaining node by
// upstream's node affinity; a toleration added to the template rolls the pod to the new
// revision and adds the tainted node; a node that stops matching loses its pod.
func TestDaemonSetOnePodPerMatchingNode(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "ds"
	mkNamespace(t, s, ns)
	dsNode(t, s, "n1", map[string]string{"role": "worker"})
	dsNode(t, s, "n2", map[string]string{"role": "worker"}, corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule})
	dsNode(t, s, "n3", map[string]string{"role": "control"})
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"role": "worker"},
			Containers:   []corev1.Container{{Name: "agent", Image: "agent:1"}},
		},
	}
	if _, err := s.Client.AppsV1().DaemonSets(ns).Create(ctxT(t), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: tmpl},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. One pod, on n1.
	ds := dsWait(t, s, ns, "one ready pod on n1", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return dsNodes(byNode) == "n1" && ds.Status.NumberReady == 1
	})
	st := ds.Status
	if st.DesiredNumberScheduled != 1 || st.CurrentNumberScheduled != 1 || st.NumberMisscheduled != 0 || st.UpdatedNumberScheduled != 1 || st.NumberAvailable != 1 || st.NumberUnavailable != 0 {
		t.Errorf("status = %+v", st)
	}
	revs, err := s.Client.AppsV1().ControllerRevisions(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 1 {
		t.Fatalf("revisions = %v, %v", revs, err)
	}
	hash := revs.Items[0].Labels["controller-revision-hash"]
	_, pods, err := dsPodsByNode(ctxT(t), s, ns)
	if err != nil {
		t.Fatal(err)
	}
	p := pods[0]
	if ds.Annotations["deprecated.daemonset.template.generation"] != "1" {
		t.Errorf("annotations = %v", ds.Annotations)
	}
	if hash == "" || revs.Items[0].Name != "agent-"+hash || p.Labels["controller-revision-hash"] != hash || p.Labels["pod-template-generation"] != "1" || !regexp.MustCompile(`^agent-[a-z0-9]{5}$`).MatchString(p.Name) {
		t.Errorf("pod %s labels %v, revision %s", p.Name, p.Labels, revs.Items[0].Name)
	}
	tolerated := map[string]bool{}
	for _, tol := range p.Spec.Tolerations {
		tolerated[tol.Key+":"+string(tol.Effect)] = tol.Operator == corev1.TolerationOpExists
	}
	for _, k := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/disk-pressure:NoSchedule",
		"node.kubernetes.io/memory-pressure:NoSchedule", "node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"} {
		if !tolerated[k] {
			t.Errorf("pod tolerations %+v lack %s", p.Spec.Tolerations, k)
		}
	}
	// 2. Tolerate the taint: a new revision, rolled onto n1, and a pod on n2.
	if _, err := s.Client.AppsV1().DaemonSets(ns).Patch(ctxT(t), "agent", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"spec":{"tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ds = dsWait(t, s, ns, "two updated pods on n1 and n2", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return dsNodes(byNode) == "n1,n2" && ds.Status.UpdatedNumberScheduled == 2 && ds.Status.NumberAvailable == 2
	})
	if ds.Status.DesiredNumberScheduled != 2 || ds.Status.CurrentNumberScheduled != 2 || ds.Annotations["deprecated.daemonset.template.generation"] != "2" {
		t.Errorf("status = %+v", ds.Status)
	}
	if _, pods, err = dsPodsByNode(ctxT(t), s, ns); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Labels["controller-revision-hash"] == hash || p.Labels["pod-template-generation"] != "2" {
			t.Errorf("pod %s labels %v: still at the first revision", p.Name, p.Labels)
		}
	}
	// 3. n1 stops matching the nodeSelector: its pod goes.
	if _, err := s.Client.CoreV1().Nodes().Patch(ctxT(t), "n1", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"role":"gone"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ds = dsWait(t, s, ns, "one pod on n2", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return dsNodes(byNode) == "n2" && ds.Status.DesiredNumberScheduled == 1 && ds.Status.CurrentNumberScheduled == 1
	})
	if ds.Status.NumberMisscheduled != 0 {
		t.Errorf("status = %+v", ds.Status)
	}
	s.CheckInvariant()
}

var dsForbidden = regexp.MustCompile(`^Error creating: pods "agent-[bcdfghjklmnpqrstvwxz2456789]{5}" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1$`)

// TestDaemonSetHeldAtPodQuota: with pods: 1 and two nodes, the second pod is refused with a
// FailedCreate event in upstream's words, and created once the quota is raised.
func TestDaemonSetHeldAtPodQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "dsq"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "1"})
	dsNode(t, s, "a", nil)
	dsNode(t, s, "b", nil)
	if _, err := s.Client.AppsV1().DaemonSets(ns).Create(ctxT(t), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: wlTemplate("agent")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "FailedCreate event", func(ctx context.Context) (bool, error) {
		evs, err := wlEvents(ctx, s, ns, "DaemonSet", "agent", "FailedCreate")
		return err == nil && len(evs) > 0, err
	})
	evs, err := wlEvents(ctxT(t), s, ns, "DaemonSet", "agent", "FailedCreate")
	if err != nil {
		t.Fatal(err)
	}
	if !dsForbidden.MatchString(evs[0].Message) || evs[0].Source.Component != "daemonset-controller" || evs[0].Type != corev1.EventTypeWarning {
		t.Errorf("event = %q from %q", evs[0].Message, evs[0].Source.Component)
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctxT(t), "pods", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("2")
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Update(ctxT(t), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	dsWait(t, s, ns, "pods on a and b", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return dsNodes(byNode) == "a,b" && ds.Status.CurrentNumberScheduled == 2
	})
	s.CheckInvariant()
}

// TestDaemonSetSurge: with maxSurge 1 and maxUnavailable 0 a template change starts a new
// pod beside one old pod, and removes the old one only once the new one is available.
func TestDaemonSetSurge(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "surge"
	mkNamespace(t, s, ns)
	dsNode(t, s, "a", nil)
	dsNode(t, s, "b", nil)
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	if _, err := s.Client.AppsV1().DaemonSets(ns).Create(ctxT(t), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: wlTemplate("agent"),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: &one, MaxUnavailable: &zero}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dsWait(t, s, ns, "two ready pods", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return dsNodes(byNode) == "a,b" && ds.Status.NumberAvailable == 2
	})
	if _, err := s.Client.AppsV1().DaemonSets(ns).Patch(ctxT(t), "agent", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// No kubelet now: one new pod surges beside an old one, and both old pods stay.
	var byNode map[string][]string
	wlEventually(t, "a surge pod", func(ctx context.Context) (bool, error) {
		var err error
		byNode, _, err = dsPodsByNode(ctx, s, ns)
		return err == nil && len(byNode["a"])+len(byNode["b"]) == 3, err
	})
	_, pods, err := dsPodsByNode(ctxT(t), s, ns)
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]int{}
	for _, p := range pods {
		images[p.Spec.Containers[0].Image]++
	}
	if images["nginx"] != 2 || images["nginx:2"] != 1 || dsNodes(byNode) != "a,a,b" && dsNodes(byNode) != "a,b,b" {
		t.Errorf("pods by node %v, images %v", byNode, images)
	}
	dsWait(t, s, ns, "two updated pods", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return dsNodes(byNode) == "a,b" && ds.Status.UpdatedNumberScheduled == 2 && ds.Status.NumberAvailable == 2
	})
	s.CheckInvariant()
}
