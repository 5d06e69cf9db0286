package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// namespaceFixtures returns one object of every namespaced kind quotad serves, keyed by
// "<resource>.<group>", the widgets.example.com custom resource included. The
// ResourceQuota is the one counting them all (hard).
func namespaceFixtures(hard corev1.ResourceList) map[string]runtime.Object {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	one := int32p(1)
	return map[string]runtime.Object{
		"pods.": &corev1.Pod{ObjectMeta: meta("p"), Spec: podTemplate("solo").Spec},
		"services.": &corev1.Service{ObjectMeta: meta("svc"), Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
		"secrets.":    &corev1.Secret{ObjectMeta: meta("s"), StringData: map[string]string{"k": "v"}},
		"configmaps.": &corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"k": "v"}},
		"persistentvolumeclaims.": &corev1.PersistentVolumeClaim{ObjectMeta: meta("pvc"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		"replicationcontrollers.": &corev1.ReplicationController{ObjectMeta: meta("rc"), Spec: corev1.ReplicationControllerSpec{
			Replicas: one, Selector: map[string]string{"app": "rc"}, Template: ptrTemplate(podTemplate("rc"))}},
		"resourcequotas.": &corev1.ResourceQuota{ObjectMeta: meta("everything"), Spec: corev1.ResourceQuotaSpec{Hard: hard}},
		"limitranges.": &corev1.LimitRange{ObjectMeta: meta("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}}}}},
		"events.": &corev1.Event{ObjectMeta: meta("ev"),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "every", Name: "p"}, Reason: "Started", Message: "m", Type: corev1.EventTypeNormal, Count: 1},
		"serviceaccounts.": &corev1.ServiceAccount{ObjectMeta: meta("sa")},
		"deployments.apps": &appsv1.Deployment{ObjectMeta: meta("deploy"), Spec: appsv1.DeploymentSpec{
			Replicas: one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "deploy"}}, Template: podTemplate("deploy")}},
		"replicasets.apps": &appsv1.ReplicaSet{ObjectMeta: meta("rs"), Spec: appsv1.ReplicaSetSpec{
			Replicas: one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rs"}}, Template: podTemplate("rs")}},
		"statefulsets.apps": &appsv1.StatefulSet{ObjectMeta: meta("sts"), Spec: appsv1.StatefulSetSpec{
			Replicas: one, Selector: sel, Template: podTemplate("web"), ServiceName: "svc"}},
		"daemonsets.apps": &appsv1.DaemonSet{ObjectMeta: meta("ds"), Spec: appsv1.DaemonSetSpec{
			Selector: sel, Template: podTemplate("web")}},
		"controllerrevisions.apps": &appsv1.ControllerRevision{ObjectMeta: meta("cr"), Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: 1},
		"jobs.batch":               &batchv1.Job{ObjectMeta: meta("job"), Spec: batchv1.JobSpec{Template: jobTemplate()}},
		"cronjobs.batch": &batchv1.CronJob{ObjectMeta: meta("cj"), Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}},
		"widgets.example.com": cr("Widget", "w", map[string]interface{}{"size": int64(1)}),
		"roles.rbac.authorization.k8s.io": &rbacv1.Role{ObjectMeta: meta("role"), Rules: []rbacv1.PolicyRule{{
			Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
		"rolebindings.rbac.authorization.k8s.io": &rbacv1.RoleBinding{ObjectMeta: meta("rb"),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "role"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}},
		"endpoints.":                                 &corev1.Endpoints{ObjectMeta: meta("ep")},
		"endpointslices.discovery.k8s.io":            &discoveryv1.EndpointSlice{ObjectMeta: meta("es"), AddressType: discoveryv1.AddressTypeIPv4},
		"poddisruptionbudgets.policy":                &policyv1.PodDisruptionBudget{ObjectMeta: meta("pdb"), Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}},
		"csistoragecapacities.storage.k8s.io":        &storagev1.CSIStorageCapacity{ObjectMeta: meta("cap"), StorageClassName: "fast"},
		"podcertificaterequests.certificates.k8s.io": newPCR("pcr", "example.com/pods", fixedStubRequest()),
		"podtemplates.":                              &corev1.PodTemplate{ObjectMeta: meta("pt"), Template: podTemplate("pt")},
		"resourceclaims.resource.k8s.io":             exactClaim("claim", "gpu", 1),
		"resourceclaimtemplates.resource.k8s.io": &resourcev1.ResourceClaimTemplate{ObjectMeta: meta("claim-tpl"), Spec: resourcev1.ResourceClaimTemplateSpec{
			Spec: exactClaim("tpl", "gpu", 1).Spec}},
		"leases.coordination.k8s.io":           &coordinationv1.Lease{ObjectMeta: meta("lease")},
		"networkpolicies.networking.k8s.io":    &networkingv1.NetworkPolicy{ObjectMeta: meta("np")},
		"ingresses.networking.k8s.io":          webIngress("ing"),
		"horizontalpodautoscalers.autoscaling": webHPA("hpa"),
		"events.events.k8s.io": &eventsv1.Event{ObjectMeta: meta("ev2"), EventTime: metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			ReportingController: "example.com/c", ReportingInstance: "c-1", Action: "Act", Reason: "Why", Type: corev1.EventTypeNormal,
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "every", Name: "p"}},
	}
}

// countResource is the object count quota resource of a group-resource.
func countResource(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// servedNamespacedResources lists, through discovery, every namespaced resource clients
// can create (preferred versions, subresources left out).
func servedNamespacedResources(t *testing.T, s *servertest.Server) []schema.GroupVersionResource {
	t.Helper()
	lists, err := s.Client.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			// Create-only kinds (LocalSubjectAccessReview) are never stored: nothing to delete.
			if strings.Contains(r.Name, "/") || !containsString(r.Verbs, "create") || !containsString(r.Verbs, "list") {
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// mkWidgetCRD serves the namespaced widgets.example.com custom resource.
func mkWidgetCRD(t *testing.T, s *servertest.Server) {
	t.Helper()
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctxT(t), widgetCRD("widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// deleteNamespaceAndWait deletes ns and waits, with a watch, until it is gone; it
// returns every state of ns the watch saw on the way.
func deleteNamespaceAndWait(t *testing.T, s *servertest.Server, ns string) []*corev1.Namespace {
	t.Helper()
	ctx := ctxT(t)
	w := watchNamespace(t, s, ns)
	defer w.Stop()
	if err := s.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return untilNamespaceGone(t, w)
}

func watchNamespace(t *testing.T, s *servertest.Server, ns string) watch.Interface {
	t.Helper()
	w, err := s.Client.CoreV1().Namespaces().Watch(ctxT(t), metav1.ListOptions{FieldSelector: "metadata.name=" + ns})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// untilNamespaceGone reads w until its namespace is deleted, returning the states seen.
func untilNamespaceGone(t *testing.T, w watch.Interface) []*corev1.Namespace {
	t.Helper()
	var seen []*corev1.Namespace
	for {
		ev := nextEvent(t, w)
		ns, ok := ev.Object.(*corev1.Namespace)
		if !ok {
			t.Fatalf("watch event %s %T", ev.Type, ev.Object)
		}
		seen = append(seen, ns)
		if ev.Type == watch.Deleted {
			return seen
		}
	}
}

// storedKeysOf returns every etcd key of namespace ns (its objects and the namespace).
func storedKeysOf(t *testing.T, s *servertest.Server, ns string) []string {
	t.Helper()
	lr, err := s.Store.Storage().List(ctxT(t), "/registry/", storage.ListOptions{KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range lr.KVs {
		if strings.Contains(kv.Key, "/"+ns+"/") || strings.HasSuffix(kv.Key, "/namespaces/"+ns) {
			out = append(out, kv.Key)
		}
	}
	sort.Strings(out)
	return out
}

// controllerPanics reads quotad_controller_panics_total from /metrics, summed over
// controllers.
func controllerPanics(t *testing.T, s *servertest.Server) float64 {
	t.Helper()
	tr, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, s.URL+"/metrics", nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "quotad_controller_panics_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		if v != 0 {
			t.Errorf("controller panic counted: %s", line)
		}
		total += v
	}
	return total
}

// TestNamespaceDeletionEveryKind fills a namespace with one object of every namespaced
// kind discovery lists (a kind without a fixture fails the test), custom resources
// included, under a quota counting each of them, then deletes the namespace: it goes
// away, nothing of it is left in storage, and no controller panicked.
func TestNamespaceDeletionEveryKind(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "every"
	mkWidgetCRD(t, s)
	mkNamespace(t, s, ns)

	// 1. A quota counting every served namespaced kind, and the basic resource names.
	served := servedNamespacedResources(t, s)
	hard := corev1.ResourceList{}
	for _, gvr := range served {
		hard[countResource(gvr.GroupResource())] = resource.MustParse("100")
	}
	for _, name := range []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceServices, corev1.ResourceSecrets,
		corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims, corev1.ResourceReplicationControllers,
		corev1.ResourceQuotas, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers} {
		hard[name] = resource.MustParse("100")
	}
	hard[corev1.ResourceRequestsStorage] = resource.MustParse("100Gi")
	fixtures := namespaceFixtures(hard)

	// 2. One object of each, the quota first so that it counts the others.
	order := append([]schema.GroupVersionResource(nil), served...)
	sort.SliceStable(order, func(i, j int) bool {
		return order[i].Resource == "resourcequotas" && order[j].Resource != "resourcequotas"
	})
	for _, gvr := range order {
		key := gvr.Resource + "." + gvr.Group
		obj, ok := fixtures[key]
		if !ok {
			t.Errorf("no fixture for served namespaced resource %s: add one to namespaceFixtures", key)
			continue
		}
		u, err := toUnstructured(obj, gvr, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", key, err)
		}
	}
	if t.Failed() {
		return
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "everything", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, gvr := range served {
		if gvr.Resource == "events" && (gvr.Group == "" || gvr.Group == "events.k8s.io") {
			continue // as upstream, quota does not count events
		}
		if u := q.Status.Used[countResource(gvr.GroupResource())]; u.Value() < 1 {
			t.Errorf("quota counts %s: %s, want at least 1", countResource(gvr.GroupResource()), u.String())
		}
	}

	// 2b. An un-paged list answered from the stored bytes is, item for item, what the
	// decoded objects encode to (a limited list's page).
	for _, gvr := range served {
		path := "/apis/" + gvr.Group + "/" + gvr.Version
		if gvr.Group == "" {
			path = "/api/" + gvr.Version
		}
		path += "/namespaces/" + ns + "/" + gvr.Resource
		unpaged, paged := listItemsRaw(t, s, path, ""), listItemsRaw(t, s, path, "1000")
		if len(unpaged) == 0 || len(unpaged) != len(paged) {
			t.Errorf("%s: %d items un-paged, %d paged", path, len(unpaged), len(paged))
			continue
		}
		for i := range unpaged {
			if string(unpaged[i]) != string(paged[i]) {
				t.Errorf("%s: item %d un-paged differs from the decoded object's encoding:\n got %s\nwant %s", path, i, unpaged[i], paged[i])
			}
		}
	}

	// And every cluster-scoped kind, whatever it holds (the bootstrap objects, a cluster
	// quota whose entries are completed as they are read).
	mkClusterQuotaForList(t, s)
	lists, err := s.Client.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lists {
		for _, r := range l.APIResources {
			if r.Namespaced || strings.Contains(r.Name, "/") || !containsString(r.Verbs, "list") {
				continue
			}
			path := "/apis/" + l.GroupVersion + "/" + r.Name
			if l.GroupVersion == "v1" {
				path = "/api/v1/" + r.Name
			}
			unpaged, paged := listItemsRaw(t, s, path, ""), listItemsRaw(t, s, path, "100000")
			if len(unpaged) != len(paged) {
				t.Errorf("%s: %d items un-paged, %d paged", path, len(unpaged), len(paged))
				continue
			}
			for i := range unpaged {
				if string(unpaged[i]) != string(paged[i]) {
					t.Errorf("%s: item %d un-paged differs from the decoded object's encoding:\n got %s\nwant %s", path, i, unpaged[i], paged[i])
				}
			}
		}
	}

	// 3. Delete the namespace: everything goes, through the registry.
	deleteNamespaceAndWait(t, s, ns)
	if left := storedKeysOf(t, s, ns); len(left) > 0 {
		t.Errorf("left in storage after the namespace was deleted:\n%s", strings.Join(left, "\n"))
	}
	if _, err := s.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("server not serving after the deletion: %v", err)
	}
	if n := controllerPanics(t, s); n != 0 {
		t.Errorf("controller panics = %v, want 0", n)
	}

	// 4. A namespace of the same name starts afresh, quota accounting included.
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "again", map[string]string{"configmaps": "5"})
	if _, err := s.Client.CoreV1().ConfigMaps(ns).Create(ctx, mkConfigMap(&metav1.ObjectMeta{Name: "again"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, ns, "again", map[string]string{"configmaps": "2"})
}

// mkClusterQuotaForList creates a cluster quota selecting the namespace "every", and
// charges it.
func mkClusterQuotaForList(t *testing.T, s *servertest.Server) {
	t.Helper()
	body := `{"apiVersion":"quota.openshift.io/v1","kind":"ClusterResourceQuota","metadata":{"name":"every"},
		"spec":{"selector":{"labels":{"matchLabels":{"kubernetes.io/metadata.name":"every"}}},"quota":{"hard":{"configmaps":"10"}}}}`
	res := s.Client.CoreV1().RESTClient().Post().AbsPath("/apis/quota.openshift.io/v1/clusterresourcequotas").
		Body([]byte(body)).SetHeader("Content-Type", "application/json").Do(ctxT(t))
	if err := res.Error(); err != nil {
		t.Fatal(err)
	}
	// A charge, so that the quota is stored as charges store it.
	if _, err := s.Client.CoreV1().ConfigMaps("every").Create(ctxT(t), mkConfigMap(&metav1.ObjectMeta{Name: "charged"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// listItemsRaw returns the items of a JSON list at path as sent, with limit when set.
func listItemsRaw(t *testing.T, s *servertest.Server, path, limit string) []json.RawMessage {
	t.Helper()
	req := s.Client.Discovery().RESTClient().Get().AbsPath(path)
	if limit != "" {
		req = req.Param("limit", limit)
	}
	b, err := req.DoRaw(ctxT(t))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return l.Items
}

// toUnstructured turns a fixture into the dynamic client's form for gvr.
func toUnstructured(obj runtime.Object, gvr schema.GroupVersionResource, s *servertest.Server) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(s.Store.Catalogue().Get(gvr).GVK())
	return u, nil
}

// conditionsOf returns a namespace's conditions by type.
func conditionsOf(ns *corev1.Namespace) map[corev1.NamespaceConditionType]corev1.NamespaceCondition {
	out := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	for _, c := range ns.Status.Conditions {
		out[c.Type] = c
	}
	return out
}

// deletionConditionsOK are upstream's False variants: type → reason, message.
var deletionConditionsOK = map[corev1.NamespaceConditionType][2]string{
	corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
	corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
	corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
	corev1.NamespaceFinalizersRemaining:      {"ContentRemoved", "All content successfully removed"},
}

// heldConditions are the True conditions of a namespace held by one pod and one widget,
// each with the finalizer example.com/x.
var heldConditions = map[corev1.NamespaceConditionType][2]string{
	corev1.NamespaceContentRemaining:    {"SomeResourcesRemain", "Some resources are remaining: pods. has 1 resource instances, widgets.example.com has 1 resource instances"},
	corev1.NamespaceFinalizersRemaining: {"SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: example.com/x in 2 resource instances"},
}

// hasConditions reports whether ns carries every deletion condition, True with the
// reason and message of trueOnes for those listed there, else upstream's False variant.
func hasConditions(ns *corev1.Namespace, trueOnes map[corev1.NamespaceConditionType][2]string) bool {
	got := conditionsOf(ns)
	for typ, ok := range deletionConditionsOK {
		want, status := ok, corev1.ConditionFalse
		if w, isTrue := trueOnes[typ]; isTrue {
			want, status = w, corev1.ConditionTrue
		}
		c, found := got[typ]
		if !found || c.Status != status || c.Reason != want[0] || c.Message != want[1] {
			return false
		}
	}
	return true
}

// holdNamespace creates a pod and a widget in ns, each held by the finalizer example.com/x.
func holdNamespace(t *testing.T, s *servertest.Server, ns string) {
	t.Helper()
	ctx := ctxT(t)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/x"}}, Spec: podTemplate("held").Spec}
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w := cr("Widget", "held", map[string]interface{}{"size": int64(1)})
	w.SetFinalizers([]string{"example.com/x"})
	if _, err := s.Dynamic.Resource(widgetGVR).Namespace(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// releaseNamespace removes the finalizers holdNamespace set.
func releaseNamespace(t *testing.T, s *servertest.Server, ns string) {
	t.Helper()
	ctx := ctxT(t)
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := s.Client.CoreV1().Pods(ns).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dynamic.Resource(widgetGVR).Namespace(ns).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// untilConditions reads w until its namespace carries the deletion conditions trueOnes
// asks for (see hasConditions), and returns that state.
func untilConditions(t *testing.T, w watch.Interface, trueOnes map[corev1.NamespaceConditionType][2]string) *corev1.Namespace {
	t.Helper()
	for {
		ev := nextEvent(t, w)
		ns, ok := ev.Object.(*corev1.Namespace)
		if !ok || ev.Type == watch.Deleted {
			t.Fatalf("namespace %s (%T) before its deletion conditions were reported", ev.Type, ev.Object)
		}
		if hasConditions(ns, trueOnes) {
			return ns
		}
	}
}

// TestNamespaceDeletionConditions: a namespace held by content with finalizers reports
// upstream's deletion conditions (NamespaceContentRemaining, NamespaceFinalizersRemaining
// True with upstream's texts, the others False), which kubectl describe shows; once the
// finalizers are removed the conditions turn False and the namespace goes away.
func TestNamespaceDeletionConditions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "held"
	mkWidgetCRD(t, s)
	mkNamespace(t, s, ns)
	holdNamespace(t, s, ns)

	w := watchNamespace(t, s, ns)
	defer w.Stop()
	if err := s.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held := untilConditions(t, w, heldConditions)
	if held.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("phase %s, want Terminating", held.Status.Phase)
	}
	// Everything not held is gone already.
	cms, err := s.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(cms.Items) != 0 {
		t.Errorf("config maps of the terminating namespace: %v %v", cms, err)
	}

	t.Run("kubectl describe", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("kubectl not installed")
		}
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Kubeconfig, "describe", "namespace", ns).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl describe namespace: %v\n%s", err, out)
		}
		for _, want := range []string{"Status:       Terminating", "Conditions:", "NamespaceContentRemaining", "SomeResourcesRemain",
			"Some resources are remaining: pods. has 1 resource instances,", "NamespaceFinalizersRemaining", "SomeFinalizersRemain",
			"Some content in the namespace has finalizers remaining: example.com/x in 2 resource instances", "NamespaceDeletionDiscoveryFailure"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("kubectl describe namespace lacks %q:\n%s", want, out)
			}
		}
	})

	// Released: the conditions turn False, then the namespace is deleted.
	releaseNamespace(t, s, ns)
	seen := untilNamespaceGone(t, w)
	cleared := false
	for _, n := range seen {
		if hasConditions(n, nil) {
			cleared = true
		}
	}
	if !cleared {
		t.Errorf("the namespace went away without its conditions turning False first")
	}
	if left := storedKeysOf(t, s, ns); len(left) > 0 {
		t.Errorf("left in storage:\n%s", strings.Join(left, "\n"))
	}
	if n := controllerPanics(t, s); n != 0 {
		t.Errorf("controller panics = %v, want 0", n)
	}
}

// TestNamespaceTerminatingSurvivesRestart: a data dir holding a Terminating namespace with
// a custom resource (held by a finalizer) restarts cleanly, and the namespace finishes
// deleting once the finalizer is removed.
func TestNamespaceTerminatingSurvivesRestart(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "restart"
	mkWidgetCRD(t, s)
	mkNamespace(t, s, ns)
	holdNamespace(t, s, ns)
	w := watchNamespace(t, s, ns)
	if err := s.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	untilConditions(t, w, heldConditions)
	w.Stop()

	s = s.Restart(t)
	got, err := s.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.NamespaceTerminating || !hasConditions(got, heldConditions) {
		t.Errorf("after restart: phase %s, conditions %+v", got.Status.Phase, got.Status.Conditions)
	}
	w = watchNamespace(t, s, ns)
	defer w.Stop()
	releaseNamespace(t, s, ns)
	untilNamespaceGone(t, w)
	if left := storedKeysOf(t, s, ns); len(left) > 0 {
		t.Errorf("left in storage:\n%s", strings.Join(left, "\n"))
	}
	if n := controllerPanics(t, s); n != 0 {
		t.Errorf("controller panics = %v, want 0", n)
	}
}
