package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/quotad/quotad/internal/server/servertest"
)

// revision returns the store's current etcd revision.
func revision(t *testing.T, s *servertest.Server) int64 {
	t.Helper()
	rev, err := s.Store.Storage().Revision(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// compact compacts the embedded etcd's history up to the current revision.
func compact(t *testing.T, s *servertest.Server) int64 {
	t.Helper()
	c, ok := s.Store.Storage().(interface {
		Compact(ctx context.Context, rev int64) error
	})
	if !ok {
		t.Fatalf("storage %T cannot compact", s.Store.Storage())
	}
	rev := revision(t, s)
	if err := c.Compact(ctxT(t), rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

// nextEvent returns the next watch event or fails after a minute.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no watch event within a minute")
	}
	return watch.Event{}
}

// TestInformerStaysInSync runs a SharedInformerFactory through creates, updates and
// deletes and checks its cache against the server after each.
func TestInformerStaysInSync(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "inf")
	cms := s.Client.CoreV1().ConfigMaps("inf")
	// Objects that exist before the informer starts.
	for i := 0; i < 3; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled(fmt.Sprintf("pre-%d", i), "inf")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The namespace controller publishes kube-root-ca.crt asynchronously: watch only ours.
	factory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0, informers.WithNamespace("inf"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "t=inf" }))
	inf := factory.Core().V1().ConfigMaps()
	events := make(chan string, 100)
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o interface{}) { events <- "add " + o.(*corev1.ConfigMap).Name },
		UpdateFunc: func(old, o interface{}) {
			if old.(*corev1.ConfigMap).ResourceVersion != o.(*corev1.ConfigMap).ResourceVersion {
				events <- "update " + o.(*corev1.ConfigMap).Name
			}
		},
		DeleteFunc: func(o interface{}) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			events <- "delete " + o.(*corev1.ConfigMap).Name
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		var got []string
		for range want {
			select {
			case e := <-events:
				got = append(got, e)
			case <-time.After(time.Minute):
				t.Fatalf("informer events: got %v, want %v", got, want)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("informer events: got %v, want %v", got, want)
		}
		// The cache holds exactly what the server lists, at the same resourceVersions.
		l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "t=inf"})
		if err != nil {
			t.Fatal(err)
		}
		cached, err := inf.Lister().ConfigMaps("inf").List(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		srv := map[string]string{}
		for _, c := range l.Items {
			srv[c.Name] = c.ResourceVersion
		}
		local := map[string]string{}
		for _, c := range cached {
			local[c.Name] = c.ResourceVersion
		}
		if fmt.Sprint(srv) != fmt.Sprint(local) {
			t.Fatalf("informer cache %v, server %v", local, srv)
		}
	}
	expect("add pre-0", "add pre-1", "add pre-2")
	for i := 0; i < 5; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled(fmt.Sprintf("cm-%d", i), "inf")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("add cm-0", "add cm-1", "add cm-2", "add cm-3", "add cm-4")
	for _, n := range []string{"cm-1", "pre-2"} {
		if _, err := cms.Patch(ctx, n, types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("update cm-1", "update pre-2")
	for _, n := range []string{"cm-3", "pre-0"} {
		if err := cms.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("delete cm-3", "delete pre-0")
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "t=inf"}); err != nil {
		t.Fatal(err)
	}
	expect("delete cm-0", "delete cm-1", "delete cm-2", "delete cm-4", "delete pre-1", "delete pre-2")
}

// TestEveryPatchType patches a Deployment with JSON, merge, strategic merge and apply patches.
func TestEveryPatchType(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "patch")
	deps := s.Client.AppsV1().Deployments("patch")
	d := &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{
		Replicas: int32p(0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: podTemplate("web")}}
	if _, err := deps.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	images := func(d *appsv1.Deployment) string {
		var out []string
		for _, c := range d.Spec.Template.Spec.Containers {
			out = append(out, c.Name+"="+c.Image)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name  string
		pt    types.PatchType
		patch string
		opts  metav1.PatchOptions
		want  string
	}{
		{"json", types.JSONPatchType, `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1"}]`, metav1.PatchOptions{}, "c=nginx:1"},
		// A merge patch replaces lists whole.
		{"merge", types.MergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"m","image":"busybox"}]}}}}`, metav1.PatchOptions{}, "m=busybox"},
		// A strategic merge patch merges containers by name.
		{"strategic", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"s","image":"redis"}]}}}}`, metav1.PatchOptions{}, "s=redis,m=busybox"},
		{"apply", types.ApplyPatchType, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"name":"s","image":"redis:7"}]}}}}`,
			metav1.PatchOptions{FieldManager: "test", Force: boolp(true)}, "s=redis:7,m=busybox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := deps.Patch(ctx, "web", tc.pt, []byte(tc.patch), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if images(got) != tc.want {
				t.Errorf("containers = %s, want %s", images(got), tc.want)
			}
			if got.Generation < 2 {
				t.Errorf("generation = %d after a template change", got.Generation)
			}
		})
	}
	// A JSON patch test op that fails is 422 and changes nothing; a malformed patch is 400.
	cms := s.Client.CoreV1().ConfigMaps("patch")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"n": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := cms.Get(ctx, "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cms.Patch(ctx, "cm", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/n","value":"2"}]`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != "the server rejected our request due to an error in our request" {
		t.Errorf("failed test op: err = %v, want 422", err)
	}
	_, err = cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":`), metav1.PatchOptions{})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("malformed merge patch: err = %v, want 400", err)
	}
	_, err = cms.Patch(ctx, "cm", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`), metav1.PatchOptions{})
	if want := `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("apply without fieldManager:\n got %v\nwant %s", err, want)
	}
	// As upstream: the patched object is the patch's invalid value, with the decoder's error.
	_, err = cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"n":1}}`), metav1.PatchOptions{})
	if want := `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`; !apierrors.IsInvalid(err) ||
		!strings.HasPrefix(err.Error(), ` "" is invalid: patch: Invalid value: "{`) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("merge patch to a wrong type: err = %v, want 422 ending %s", err, want)
	}
	_, err = deps.Patch(ctx, "missing", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `deployments.apps "missing" not found` {
		t.Errorf("patch of a missing object: %v", err)
	}
	if after, _ := cms.Get(ctx, "cm", metav1.GetOptions{}); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("failed patches wrote: resourceVersion %s → %s", before.ResourceVersion, after.ResourceVersion)
	}
	// Apply creates a missing object.
	created, err := cms.Patch(ctx, "applied", types.ApplyPatchType, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: b\n"), metav1.PatchOptions{FieldManager: "test"})
	if err != nil || created.Data["a"] != "b" || created.UID == "" {
		t.Errorf("apply of a missing object: %v %+v", err, created)
	}
}

// TestDryRunEveryWrite sends every write with dryRun=All: the answers look like the real
// ones and storage does not change.
func TestDryRunEveryWrite(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "dry")
	settle(t, s, "dry")
	cms := s.Client.CoreV1().ConfigMaps("dry")
	real, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("real"), Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dry := []string{metav1.DryRunAll}
	before := revision(t, s)

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("new")}, metav1.CreateOptions{DryRun: dry})
	if err != nil || created.Name != "new" || created.UID == "" || created.CreationTimestamp.Time.IsZero() {
		t.Errorf("dry-run create: %v %+v", err, created)
	}
	gen, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{DryRun: dry})
	if err != nil || !strings.HasPrefix(gen.Name, "gen-") || len(gen.Name) != len("gen-")+5 {
		t.Errorf("dry-run create with generateName: %v %q", err, gen.Name)
	}
	up := real.DeepCopy()
	up.Data["k"] = "changed"
	updated, err := cms.Update(ctx, up, metav1.UpdateOptions{DryRun: dry})
	if err != nil || updated.Data["k"] != "changed" {
		t.Errorf("dry-run update: %v %v", err, updated.Data)
	}
	patched, err := cms.Patch(ctx, "real", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{DryRun: dry})
	if err != nil || patched.Data["p"] != "1" {
		t.Errorf("dry-run patch: %v %v", err, patched.Data)
	}
	if err := cms.Delete(ctx, "real", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Errorf("dry-run delete: %v", err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"}); err != nil {
		t.Errorf("dry-run deletecollection: %v", err)
	}
	if after := revision(t, s); after != before {
		t.Errorf("dry-run writes changed storage: revision %d → %d", before, after)
	}
	// Subresources: /status and /scale.
	p, err := s.Client.CoreV1().Pods("dry").Create(ctx, pod("p", "", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A StatefulSet of no replicas, once its controller has recorded its revision and
	// status (it writes nothing more).
	sts := s.Client.AppsV1().StatefulSets("dry")
	if _, err := sts.Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta("rs"), Spec: appsv1.StatefulSetSpec{
		Replicas: int32p(0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rs"}}, Template: podTemplate("rs")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "statefulset status", func(ctx context.Context) (bool, error) {
		set, err := sts.Get(ctx, "rs", metav1.GetOptions{})
		return err == nil && set.Status.UpdateRevision != "" && set.Status.ObservedGeneration == set.Generation, err
	})
	before = revision(t, s)
	p.Status.Phase = corev1.PodRunning
	if st, err := s.Client.CoreV1().Pods("dry").UpdateStatus(ctx, p, metav1.UpdateOptions{DryRun: dry}); err != nil || st.Status.Phase != corev1.PodRunning {
		t.Errorf("dry-run status update: %v", err)
	}
	sc, err := sts.GetScale(ctx, "rs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec.Replicas = 4
	if sc2, err := sts.UpdateScale(ctx, "rs", sc, metav1.UpdateOptions{DryRun: dry}); err != nil || sc2.Spec.Replicas != 4 {
		t.Errorf("dry-run scale: %v %v", err, sc2)
	}
	if err := s.Client.CoreV1().Pods("dry").Delete(ctx, "p", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Errorf("dry-run pod delete: %v", err)
	}
	if after := revision(t, s); after != before {
		t.Errorf("dry-run subresource writes changed storage: revision %d → %d", before, after)
	}
	if got, _ := sts.Get(ctx, "rs", metav1.GetOptions{}); *got.Spec.Replicas != 0 {
		t.Errorf("dry-run scale stored replicas %d", *got.Spec.Replicas)
	}
	// Dry-run errors are the real errors.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("real")}, metav1.CreateOptions{DryRun: dry}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("dry-run create of an existing name: %v", err)
	}
	if err := cms.Delete(ctx, "missing", metav1.DeleteOptions{DryRun: dry}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run delete of a missing name: %v", err)
	}
	if after := revision(t, s); after != before {
		t.Errorf("dry-run writes changed storage: revision %d → %d", before, after)
	}
	got, err := cms.Get(ctx, "real", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != real.ResourceVersion || len(got.Data) != 1 {
		t.Errorf("after dry runs: %v %+v", err, got)
	}
	l, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	if err != nil || len(l.Items) != 1 {
		t.Errorf("after dry runs: %v, %d configmaps", err, len(l.Items))
	}
	// An unknown dryRun value is 400.
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("x")}, metav1.CreateOptions{DryRun: []string{"Some"}})
	if !apierrors.IsInvalid(err) || err.Error() != `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"` {
		t.Errorf("dryRun=Some: %v", err)
	}
}

// TestStaleWritesConflict: updates and patches carrying an old resourceVersion, and deletes
// with a stale precondition, are 409 with upstream's text.
func TestStaleWritesConflict(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	settle(t, s, "default")
	cms := s.Client.CoreV1().ConfigMaps("default")
	v1, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("c")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "c", types.MergePatchType, []byte(`{"data":{"a":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	const modified = `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`
	before := revision(t, s)
	stale := v1.DeepCopy()
	stale.Data = map[string]string{"b": "2"}
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) || err.Error() != modified {
		t.Errorf("stale update: %v", err)
	}
	_, err = cms.Patch(ctx, "c", types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"b":"2"}}`, v1.ResourceVersion)), metav1.PatchOptions{})
	if !apierrors.IsConflict(err) || err.Error() != modified {
		t.Errorf("stale patch: %v", err)
	}
	err = cms.Delete(ctx, "c", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &v1.ResourceVersion}})
	cur, _ := cms.Get(ctx, "c", metav1.GetOptions{})
	want := fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "c": the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified`, v1.ResourceVersion, cur.ResourceVersion)
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("stale delete precondition:\n got %v\nwant %s", err, want)
	}
	uid := types.UID("other")
	err = cms.Delete(ctx, "c", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	want = fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition (other) does not match the UID in record (%s). The object might have been deleted and then recreated`, cur.UID)
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("uid precondition:\n got %v\nwant %s", err, want)
	}
	if after := revision(t, s); after != before {
		t.Errorf("conflicting writes changed storage: revision %d → %d", before, after)
	}
	// An update without a resourceVersion is unconditional.
	stale.ResourceVersion = ""
	if _, err := cms.Update(ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Errorf("unconditional update: %v", err)
	}
}

// TestFieldAndLabelSelectors lists and watches with upstream's field selectors.
func TestFieldAndLabelSelectors(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "sel")
	pods := s.Client.CoreV1().Pods("sel")
	for i, node := range []string{"n1", "n2", "", "n1"} {
		p := pod(fmt.Sprintf("p%d", i), "", "")
		p.Spec.NodeName = node
		p.Labels = map[string]string{"tier": []string{"web", "db"}[i%2]}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	setPhase := func(name string, phase corev1.PodPhase) {
		t.Helper()
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = phase
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPhase("p1", corev1.PodRunning)
	setPhase("p2", corev1.PodRunning)
	// Watch: entering the selection is ADDED, leaving it is DELETED.
	for _, want := range []string{"ADDED p1", "ADDED p2"} {
		ev := nextEvent(t, w)
		if got := fmt.Sprintf("%s %s", ev.Type, ev.Object.(*corev1.Pod).Name); got != want {
			t.Errorf("watch event %s, want %s", got, want)
		}
	}
	setPhase("p2", corev1.PodSucceeded)
	if ev := nextEvent(t, w); ev.Type != watch.Deleted || ev.Object.(*corev1.Pod).Name != "p2" {
		t.Errorf("watch event %s %v, want DELETED p2", ev.Type, ev.Object)
	}
	names := func(opts metav1.ListOptions) string {
		t.Helper()
		l, err := pods.List(ctx, opts)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		var n []string
		for _, p := range l.Items {
			n = append(n, p.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct {
		opts metav1.ListOptions
		want string
	}{
		{metav1.ListOptions{FieldSelector: "status.phase=Running"}, "p1"},
		{metav1.ListOptions{FieldSelector: "status.phase!=Pending"}, "p1,p2"},
		{metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}, "p0,p3"},
		{metav1.ListOptions{FieldSelector: "spec.nodeName="}, "p2"},
		{metav1.ListOptions{FieldSelector: "spec.nodeName=n1,status.phase=Pending"}, "p0,p3"},
		{metav1.ListOptions{FieldSelector: "spec.nodeName=n1", LabelSelector: "tier=db"}, "p3"},
		{metav1.ListOptions{LabelSelector: "tier in (web)"}, "p0,p2"},
		{metav1.ListOptions{LabelSelector: "!tier"}, ""},
		{metav1.ListOptions{FieldSelector: "metadata.namespace=sel,metadata.name=p2"}, "p2"},
	} {
		if got := names(tc.opts); got != tc.want {
			t.Errorf("list %+v = %q, want %q", tc.opts, got, tc.want)
		}
	}
	// Across namespaces.
	all, err := s.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n2"})
	if err != nil || len(all.Items) != 1 || all.Items[0].Name != "p1" {
		t.Errorf("all-namespace field selector: %v %v", err, all)
	}
	// Events by involvedObject.
	evs := s.Client.CoreV1().Events("sel")
	for i, io := range []corev1.ObjectReference{
		{Kind: "Pod", Namespace: "sel", Name: "p0", UID: "u0"},
		{Kind: "Pod", Namespace: "sel", Name: "p1", UID: "u1"},
		{Kind: "ResourceQuota", Namespace: "sel", Name: "q", UID: "u2"},
	} {
		if _, err := evs.Create(ctx, &corev1.Event{ObjectMeta: meta(fmt.Sprintf("e%d", i)), InvolvedObject: io, Reason: "R", Message: "m", Type: corev1.EventTypeNormal}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ sel, want string }{
		{"involvedObject.kind=Pod", "e0,e1"},
		{"involvedObject.name=p1", "e1"},
		{"involvedObject.kind=Pod,involvedObject.name=p0,involvedObject.namespace=sel", "e0"},
		{"involvedObject.uid=u2", "e2"},
		{"involvedObject.kind!=Pod", "e2"},
	} {
		l, err := evs.List(ctx, metav1.ListOptions{FieldSelector: tc.sel})
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		var n []string
		for _, e := range l.Items {
			n = append(n, e.Name)
		}
		if got := strings.Join(n, ","); got != tc.want {
			t.Errorf("events %s = %q, want %q", tc.sel, got, tc.want)
		}
	}
	// Unknown field labels are 400 with upstream's text.
	_, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.foo=bar"})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: spec.foo" {
		t.Errorf("unknown field selector: %v", err)
	}
	_, err = pods.List(ctx, metav1.ListOptions{LabelSelector: "a in (b"})
	if !apierrors.IsBadRequest(err) || err.Error() != "unable to parse requirement: found '', expected: ',' or ')'" {
		t.Errorf("malformed label selector: %v", err)
	}
	_, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "a"})
	if !apierrors.IsBadRequest(err) || err.Error() != "invalid selector: 'a'; can't understand 'a'" {
		t.Errorf("malformed field selector: %v", err)
	}
}

// TestPaginationLimitContinue pages through a list, at the first page's snapshot.
func TestPaginationLimitContinue(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "page")
	settle(t, s, "page") // kube-root-ca.crt is the list's last item
	cms := s.Client.CoreV1().ConfigMaps("page")
	for i := 0; i < 10; i++ {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(fmt.Sprintf("cm-%02d", i))}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 4 || first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 7 {
		t.Fatalf("first page: %d items, continue %q, remaining %v", len(first.Items), first.Continue, first.RemainingItemCount)
	}
	// Changes after the first page are not seen by the rest of the list.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cm-99")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm-08", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, c := range first.Items {
		names = append(names, c.Name)
	}
	cont := first.Continue
	for cont != "" {
		page, err := cms.List(ctx, metav1.ListOptions{Limit: 4, Continue: cont})
		if err != nil {
			t.Fatal(err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Errorf("page resourceVersion %s, first page %s", page.ResourceVersion, first.ResourceVersion)
		}
		for _, c := range page.Items {
			names = append(names, c.Name)
		}
		cont = page.Continue
	}
	if got := strings.Join(names, ","); got != "cm-00,cm-01,cm-02,cm-03,cm-04,cm-05,cm-06,cm-07,cm-08,cm-09,kube-root-ca.crt" {
		t.Errorf("paged names = %s", got)
	}
	// A continue token past compaction is 410 with upstream's text.
	compact(t, s)
	_, err = cms.List(ctx, metav1.ListOptions{Limit: 4, Continue: first.Continue})
	const inconsistent = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
	if !apierrors.IsResourceExpired(err) || err.Error() != inconsistent {
		t.Fatalf("expired continue: %v", err)
	}
	// The token in the 410 continues the list at the latest revision.
	var se *apierrors.StatusError
	if !asStatus(err, &se) || se.ErrStatus.ListMeta.Continue == "" {
		t.Fatalf("410 carries no continue token: %#v", err)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 100, Continue: se.ErrStatus.ListMeta.Continue})
	if err != nil {
		t.Fatal(err)
	}
	var restNames []string
	for _, c := range rest.Items {
		restNames = append(restNames, c.Name)
	}
	if got := strings.Join(restNames, ","); got != "cm-04,cm-05,cm-06,cm-07,cm-09,cm-99,kube-root-ca.crt" {
		t.Errorf("continued at the latest revision: %s", got)
	}
	// A malformed token is 400.
	_, err = cms.List(ctx, metav1.ListOptions{Limit: 4, Continue: "!!"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("malformed continue: %v", err)
	}
	// A list at a compacted exact resourceVersion is 410.
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) || err.Error() != "The resourceVersion for the provided list is too old." {
		t.Errorf("list at a compacted revision: %v", err)
	}
}

func asStatus(err error, se **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	*se = s
	return ok
}

// TestWatchFromResourceVersionAndGone watches from a list's resourceVersion, then from a
// compacted one.
func TestWatchFromResourceVersionAndGone(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "w")
	cms := s.Client.CoreV1().ConfigMaps("w")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("before")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("a")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Data = map[string]string{"k": "v"}
	a2, err := cms.Update(ctx, a, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Every change after the list's resourceVersion, in order, with its resourceVersion.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 3; i++ {
		ev := nextEvent(t, w)
		cm := ev.Object.(*corev1.ConfigMap)
		got = append(got, fmt.Sprintf("%s %s %v", ev.Type, cm.Name, cm.Data))
		if i == 1 && cm.ResourceVersion != a2.ResourceVersion {
			t.Errorf("MODIFIED resourceVersion %s, update answered %s", cm.ResourceVersion, a2.ResourceVersion)
		}
	}
	w.Stop()
	if want := "ADDED a map[],MODIFIED a map[k:v],DELETED a map[k:v]"; strings.Join(got, ",") != want {
		t.Errorf("watch events %q, want %q", strings.Join(got, ","), want)
	}
	// resourceVersion=0 and unset start with the current objects as ADDED.
	w, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "before" {
		t.Errorf("rv=0 watch first event %s %v", ev.Type, ev.Object)
	}
	w.Stop()
	// Past compaction: an ERROR event with a 410 Status, then the watch ends.
	compacted := compact(t, s)
	w, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("watch from a compacted revision: %v", err)
		}
		return
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	if ev.Type != watch.Error {
		t.Fatalf("watch from a compacted revision: %s event", ev.Type)
	}
	err = apierrors.FromObject(ev.Object)
	want := fmt.Sprintf("too old resource version: %s (%d)", l.ResourceVersion, compacted)
	if !apierrors.IsResourceExpired(err) || err.Error() != want {
		t.Errorf("compacted watch error %v, want 410 %q", err, want)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Errorf("watch went on after its ERROR event")
	}
}

// warnings collects the Warning headers client-go receives.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// TestFieldValidation sends unknown and duplicate fields with Strict, Warn and Ignore.
func TestFieldValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "fv")
	settle(t, s, "fv")
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := client.CoreV1().RESTClient()
	podJSON := func(name, extra string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{%s"containers":[{"name":"c","image":"nginx"}]}}`, name, extra))
	}
	const unknown = `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"`
	for _, tc := range []struct {
		fv       string
		wantErr  string
		wantWarn string
	}{
		{"Strict", unknown, ""},
		{"Warn", "", `unknown field "spec.foo"`},
		{"", "", `unknown field "spec.foo"`}, // Warn is the default
		{"Ignore", "", ""},
	} {
		t.Run("create "+tc.fv, func(t *testing.T) {
			name := "p-" + strings.ToLower(tc.fv) + "x"
			req := rc.Post().Namespace("fv").Resource("pods").Body(podJSON(name, `"foo":1,`)).SetHeader("Content-Type", "application/json")
			if tc.fv != "" {
				req = req.Param("fieldValidation", tc.fv)
			}
			err := req.Do(ctx).Error()
			checkFV(t, err, ws.take(), tc.wantErr, tc.wantWarn)
			if tc.wantErr != "" {
				return
			}
			// Update and patch with the same directive.
			cur, err := client.CoreV1().Pods("fv").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The spec as admitted (service account, its volume, tolerations): pod specs are immutable.
			spec, err := json.Marshal(cur.Spec)
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"resourceVersion":%q,"labels":{"u":"1"}},"spec":{"foo":1,%s}`, name, cur.ResourceVersion, spec[1:])
			req = rc.Put().Namespace("fv").Resource("pods").Name(name).Body([]byte(body)).SetHeader("Content-Type", "application/json")
			if tc.fv != "" {
				req = req.Param("fieldValidation", tc.fv)
			}
			checkFV(t, req.Do(ctx).Error(), ws.take(), "", tc.wantWarn)
			req = rc.Patch(types.MergePatchType).Namespace("fv").Resource("pods").Name(name).Body([]byte(`{"spec":{"foo":1}}`))
			if tc.fv != "" {
				req = req.Param("fieldValidation", tc.fv)
			}
			checkFV(t, req.Do(ctx).Error(), ws.take(), "", tc.wantWarn)
		})
	}
	// Strict on update and patch.
	if _, err := client.CoreV1().Pods("fv").Create(ctx, pod("strict", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ws.take()
	before := revision(t, s)
	err = rc.Put().Namespace("fv").Resource("pods").Name("strict").Param("fieldValidation", "Strict").
		Body(podJSON("strict", `"foo":1,`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	checkFV(t, err, ws.take(), unknown, "")
	for _, pt := range []types.PatchType{types.MergePatchType, types.StrategicMergePatchType} {
		err = rc.Patch(pt).Namespace("fv").Resource("pods").Name("strict").Param("fieldValidation", "Strict").Body([]byte(`{"spec":{"foo":1}}`)).Do(ctx).Error()
		checkFV(t, err, ws.take(), unknown, "")
	}
	err = rc.Patch(types.JSONPatchType).Namespace("fv").Resource("pods").Name("strict").Param("fieldValidation", "Strict").Body([]byte(`[{"op":"add","path":"/spec/foo","value":1}]`)).Do(ctx).Error()
	checkFV(t, err, ws.take(), unknown, "")
	// Duplicate fields.
	dup := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dup","name":"dup"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	err = rc.Post().Namespace("fv").Resource("pods").Param("fieldValidation", "Strict").Body(dup).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	checkFV(t, err, ws.take(), `Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name"`, "")
	if after := revision(t, s); after != before {
		t.Errorf("strict refusals changed storage: revision %d → %d", before, after)
	}
	err = rc.Post().Namespace("fv").Resource("pods").Param("fieldValidation", "Warn").Body(dup).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	checkFV(t, err, ws.take(), "", `duplicate field "metadata.name"`)
	// Duplicate YAML keys: the last one wins, and Strict and Warn report them.
	dupYAML := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  name: y1\ndata:\n  k: v\n")
	const yamlDup = "yaml: unmarshal errors:\n  line 5: key \"name\" already set in map"
	err = rc.Post().Namespace("fv").Resource("configmaps").Param("fieldValidation", "Strict").Body(dupYAML).SetHeader("Content-Type", "application/yaml").Do(ctx).Error()
	checkFV(t, err, ws.take(), `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: `+yamlDup, "")
	for i, fv := range []string{"Warn", "Ignore"} {
		body := bytes.Replace(dupYAML, []byte("y1"), []byte(fmt.Sprintf("y%d", i+2)), 1)
		err = rc.Post().Namespace("fv").Resource("configmaps").Param("fieldValidation", fv).Body(body).SetHeader("Content-Type", "application/yaml").Do(ctx).Error()
		// Under Warn the YAML error holds a newline: upstream's Warning header refuses control
		// characters and drops it, so neither directive warns.
		checkFV(t, err, ws.take(), "", "")
		if _, err := client.CoreV1().ConfigMaps("fv").Get(ctx, fmt.Sprintf("y%d", i+2), metav1.GetOptions{}); err != nil {
			t.Errorf("%s: the last duplicate key does not win: %v", fv, err)
		}
	}
	// An unknown directive is 422 on the verb's options.
	err = rc.Post().Namespace("fv").Resource("pods").Param("fieldValidation", "Loud").Body(podJSON("x", "")).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	if !apierrors.IsInvalid(err) || err.Error() != `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"` {
		t.Errorf("fieldValidation=Loud: %v", err)
	}
	err = rc.Patch(types.MergePatchType).Namespace("fv").Resource("pods").Name("strict").Param("fieldValidation", "Loud").Param("force", "true").Body([]byte(`{}`)).Do(ctx).Error()
	if want := `PatchOptions.meta.k8s.io "" is invalid: [force: Forbidden: may not be specified for non-apply patch, fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"]`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("patch options:\n got %v\nwant %s", err, want)
	}
}

func checkFV(t *testing.T, err error, warns []string, wantErr, wantWarn string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("unexpected error: %v", err)
	case wantErr != "" && (!apierrors.IsBadRequest(err) || err.Error() != wantErr):
		t.Errorf("error:\n got %v\nwant 400 %s", err, wantErr)
	}
	got := strings.Join(warns, "|")
	if got != wantWarn {
		t.Errorf("warnings %q, want %q", got, wantWarn)
	}
}

// TestGenerateName creates objects from generateName.
func TestGenerateName(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		cm, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(cm.Name, "web-") || len(cm.Name) != 9 || cm.GenerateName != "web-" || seen[cm.Name] {
			t.Errorf("generated name %q (generateName %q)", cm.Name, cm.GenerateName)
		}
		seen[cm.Name] = true
		if _, err := s.Client.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("generated object not stored: %v", err)
		}
	}
	// Neither name nor generateName is 422.
	_, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required` {
		t.Errorf("no name: %v", err)
	}
}

// TestFinalizersAndDeletionTimestamp: a finalizer holds a deleted object until removed.
func TestFinalizersAndDeletionTimestamp(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	cms := s.Client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("held object gone: %v", err)
	}
	if held.DeletionTimestamp == nil || held.DeletionGracePeriodSeconds == nil || *held.DeletionGracePeriodSeconds != 0 {
		t.Errorf("deletionTimestamp %v grace %v", held.DeletionTimestamp, held.DeletionGracePeriodSeconds)
	}
	// A second delete changes nothing.
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, _ := cms.Get(ctx, "held", metav1.GetOptions{})
	if again.ResourceVersion != held.ResourceVersion || !again.DeletionTimestamp.Equal(held.DeletionTimestamp) {
		t.Errorf("second delete changed the object: rv %s → %s", held.ResourceVersion, again.ResourceVersion)
	}
	// No new finalizers while deleting.
	add := again.DeepCopy()
	add.Finalizers = append(add.Finalizers, "example.com/other")
	_, err = cms.Update(ctx, add, metav1.UpdateOptions{})
	want := `ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("adding a finalizer while deleting:\n got %v\nwant %s", err, want)
	}
	// Removing the last finalizer deletes it.
	if _, err := cms.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the last finalizer: %v", err)
	}
}

// TestPropagationPolicy deletes a ReplicaSet with each propagation policy.
func TestPropagationPolicy(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "prop")
	rss := s.Client.AppsV1().ReplicaSets("prop")
	for _, tc := range []struct {
		policy    metav1.DeletionPropagation
		finalizer string
	}{
		{metav1.DeletePropagationOrphan, metav1.FinalizerOrphanDependents},
		{metav1.DeletePropagationForeground, metav1.FinalizerDeleteDependents},
		{metav1.DeletePropagationBackground, ""},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			name := "rs-" + strings.ToLower(string(tc.policy))
			rs := &appsv1.ReplicaSet{ObjectMeta: meta(name), Spec: appsv1.ReplicaSetSpec{
				Replicas: int32p(0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: podTemplate(name)}}
			if _, err := rss.Create(ctx, rs, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			w, err := rss.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			p := tc.policy
			if err := rss.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
				t.Fatal(err)
			}
			// The object either goes at once (Background) or first shows the policy's finalizer
			// with a deletionTimestamp; the garbage collector then removes it.
			sawFinalizer := false
			for {
				ev := nextEvent(t, w)
				if ev.Type == watch.Deleted {
					break
				}
				o := ev.Object.(*appsv1.ReplicaSet)
				if o.DeletionTimestamp != nil {
					for _, f := range o.Finalizers {
						if f == tc.finalizer {
							sawFinalizer = true
						}
					}
				}
			}
			if tc.finalizer != "" && !sawFinalizer {
				t.Errorf("never saw the %s finalizer", tc.finalizer)
			}
		})
	}
	// An unknown policy is 400 with upstream's text.
	bad := metav1.DeletionPropagation("Sideways")
	err := rss.Delete(ctx, "any", metav1.DeleteOptions{PropagationPolicy: &bad})
	want := `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("unknown policy:\n got %v\nwant 422 %s", err, want)
	}
}

// TestNamespaceDeletion: the namespace turns Terminating, refuses new content, loses its
// contents, then goes.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "doomed")
	core := s.Client.CoreV1()
	if _, err := core.ConfigMaps("doomed").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("cm")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Pods("doomed").Create(ctx, pod("p", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Secrets("doomed").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := core.Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "doomed").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sw, err := core.Secrets("doomed").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	if err := core.Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := core.Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace gone at once: %v", err)
	}
	if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Errorf("deleted namespace: phase %q deletionTimestamp %v", ns.Status.Phase, ns.DeletionTimestamp)
	}
	_, err = core.ConfigMaps("doomed").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("late")}, metav1.CreateOptions{})
	want := `configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("create in a terminating namespace:\n got %v\nwant %s", err, want)
	}
	// The namespace controller deletes the contents; the held secret keeps the namespace
	// until its finalizer goes.
	for {
		ev := nextEvent(t, sw)
		if sec := ev.Object.(*corev1.Secret); ev.Type == watch.Modified && sec.DeletionTimestamp != nil {
			break
		}
	}
	if _, err := core.Namespaces().Get(ctx, "doomed", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace went while a secret was held: %v", err)
	}
	if _, err := core.Secrets("doomed").Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		if ev := nextEvent(t, w); ev.Type == watch.Deleted {
			break
		}
	}
	if _, err := core.Namespaces().Get(ctx, "doomed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace after deletion: %v", err)
	}
	for _, l := range []func() (int, error){
		func() (int, error) {
			l, err := core.ConfigMaps("doomed").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := core.Pods("doomed").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := core.Secrets("doomed").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
	} {
		if n, err := l(); err != nil || n != 0 {
			t.Errorf("contents after namespace deletion: %d (%v)", n, err)
		}
	}
	// The system namespaces may not be deleted.
	err = core.Namespaces().Delete(ctx, "default", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != `namespaces "default" is forbidden: this namespace may not be deleted` {
		t.Errorf("delete default: %v", err)
	}
}

// labelled is ObjectMeta with the label t=value.
func labelled(name, value string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{"t": value}}
}

// settle waits until the namespace controller has published the default ServiceAccount and
// root CA ConfigMap of the bootstrap namespaces and of ns, so that storage only changes
// through the test.
func settle(t *testing.T, s *servertest.Server, ns string) {
	t.Helper()
	ctx := ctxT(t)
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease", ns} {
		cms := s.Client.CoreV1().ConfigMaps(name)
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-root-ca.crt"})
		if err != nil {
			t.Fatal(err)
		}
		nextEvent(t, w)
		w.Stop()
	}
}

// TestWatchList streams the initial objects then a bookmark ending them (the protocol
// client-go's WatchList informers speak), then changes.
func TestWatchList(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "wl")
	cms := s.Client.CoreV1().ConfigMaps("wl")
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled(n, "wl")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "t=wl", SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for {
		ev := nextEvent(t, w)
		cm := ev.Object.(*corev1.ConfigMap)
		if ev.Type == watch.Bookmark {
			if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || cm.ResourceVersion == "" {
				t.Errorf("bookmark %+v", cm.ObjectMeta)
			}
			break
		}
		got = append(got, fmt.Sprintf("%s %s", ev.Type, cm.Name))
	}
	if strings.Join(got, ",") != "ADDED a,ADDED b" {
		t.Errorf("initial events %v", got)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: labelled("c", "wl")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := nextEvent(t, w)
		if ev.Type == watch.Bookmark {
			continue
		}
		if cm := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || cm.Name != "c" {
			t.Errorf("after the initial events: %s %s", ev.Type, cm.Name)
		}
		break
	}
}
