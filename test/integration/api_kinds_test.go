package integration

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// object is what every typed client-go object is.
type object interface {
	runtime.Object
	metav1.Object
}

// typedClient is the method set every client-go typed resource client shares.
type typedClient[T object, L runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// statusClient is implemented by typed clients of kinds with a /status subresource.
type statusClient[T object] interface {
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// scaleClient is implemented by typed clients of kinds with a /scale subresource.
type scaleClient interface {
	GetScale(ctx context.Context, name string, opts metav1.GetOptions) (*autoscalingv1.Scale, error)
	UpdateScale(ctx context.Context, name string, scale *autoscalingv1.Scale, opts metav1.UpdateOptions) (*autoscalingv1.Scale, error)
}

// kindCase describes the CRUD walk of one kind through its typed client.
type kindCase[T object, L runtime.Object] struct {
	client typedClient[T, L]
	obj    T
	// spec changes the object's spec (nil: the kind has no spec worth changing).
	spec func(T)
	// specOf and statusOf extract the parts the status split is checked on.
	specOf   func(T) interface{}
	status   func(T)
	statusOf func(T) interface{}
	// generation reports that metadata.generation tracks spec changes.
	generation bool
	// scale reports a /scale subresource with spec.replicas at replicas.
	scale    bool
	replicas func(T) int32
	// resource is the qualified resource name in upstream's messages ("deployments.apps").
	resource string
	// finalized reports that a controller's finalizer may hold a deleted object a while.
	finalized bool
}

// run walks create, get, list, update, the status split, generation, scale and delete.
func (k kindCase[T, L]) run(t *testing.T) {
	ctx := ctxT(t)
	c := k.client
	name := k.obj.GetName()
	// 1. Create: the server sets identity and timestamps.
	created, err := c.Create(ctx, k.obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("create: server-set metadata missing: uid=%q rv=%q ts=%v", created.GetUID(), created.GetResourceVersion(), created.GetCreationTimestamp())
	}
	if k.generation && created.GetGeneration() != 1 {
		t.Errorf("create: generation = %d, want 1", created.GetGeneration())
	}
	if _, err := c.Create(ctx, k.obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: err = %v, want AlreadyExists", err)
	}
	// 2. Get and list return the stored object.
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.GetUID() != created.GetUID() || got.GetName() != name {
		t.Errorf("get: uid %s, created %s", got.GetUID(), created.GetUID())
	}
	list, err := c.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if items := listItems(t, list); len(items) != 1 || items[0].GetName() != name {
		t.Errorf("list by name: %d items", len(items))
	}
	// 3. A metadata-only update changes the resourceVersion but not the generation.
	before, _, updated := k.update(t, name, func(o T) { o.SetLabels(map[string]string{"step": "update"}) }, c.Update)
	if updated.GetResourceVersion() == before.GetResourceVersion() || updated.GetLabels()["step"] != "update" {
		t.Errorf("update: rv %s → %s, labels %v", before.GetResourceVersion(), updated.GetResourceVersion(), updated.GetLabels())
	}
	if k.generation && updated.GetGeneration() != before.GetGeneration() {
		t.Errorf("label update bumped generation %d → %d", before.GetGeneration(), updated.GetGeneration())
	}
	// 4. A spec change bumps the generation.
	if k.spec != nil {
		before, sent, after := k.update(t, name, k.spec, c.Update)
		if !reflect.DeepEqual(k.specOf(after), k.specOf(sent)) {
			t.Errorf("spec update not stored:\n got %#v\nwant %#v", k.specOf(after), k.specOf(sent))
		}
		if k.generation && after.GetGeneration() != before.GetGeneration()+1 {
			t.Errorf("spec update: generation %d → %d, want +1", before.GetGeneration(), after.GetGeneration())
		}
	}
	// 5. The status split: the main resource ignores status, /status ignores spec.
	if k.status != nil {
		sc, ok := any(c).(statusClient[T])
		if !ok {
			t.Fatalf("%T has no UpdateStatus", c)
		}
		before, sent, viaMain := k.update(t, name, k.status, c.Update)
		if !reflect.DeepEqual(k.statusOf(viaMain), k.statusOf(before)) || reflect.DeepEqual(k.statusOf(viaMain), k.statusOf(sent)) {
			t.Errorf("main resource stored a status change:\n got %#v\nwant %#v", k.statusOf(viaMain), k.statusOf(before))
		}
		both := func(o T) {
			k.status(o)
			if k.spec != nil {
				k.spec(o)
			}
		}
		before, sent, viaStatus := k.update(t, name, both, sc.UpdateStatus)
		if !reflect.DeepEqual(k.statusOf(viaStatus), k.statusOf(sent)) {
			t.Errorf("/status did not store the status:\n got %#v\nwant %#v", k.statusOf(viaStatus), k.statusOf(sent))
		}
		if k.spec != nil && !reflect.DeepEqual(k.specOf(viaStatus), k.specOf(before)) {
			t.Errorf("/status stored a spec change:\n got %#v\nwant %#v", k.specOf(viaStatus), k.specOf(before))
		}
		if k.generation && viaStatus.GetGeneration() != before.GetGeneration() {
			t.Errorf("/status changed generation %d → %d", before.GetGeneration(), viaStatus.GetGeneration())
		}
	}
	// 6. /scale reads and writes spec.replicas.
	if k.scale {
		sc, ok := any(c).(scaleClient)
		if !ok {
			t.Fatalf("%T has no GetScale", c)
		}
		var cur T
		var s *autoscalingv1.Scale
		for attempt := 0; ; attempt++ {
			var err error
			if cur, err = c.Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if s, err = sc.GetScale(ctx, name, metav1.GetOptions{}); err != nil {
				t.Fatalf("get scale: %v", err)
			}
			if s.Spec.Replicas != k.replicas(cur) || s.Name != name || s.Namespace != cur.GetNamespace() || s.UID != cur.GetUID() {
				t.Errorf("scale = %+v, object replicas %d", s, k.replicas(cur))
			}
			s.Spec.Replicas = 3
			s, err = sc.UpdateScale(ctx, name, s, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) && attempt < 10 {
				continue // a controller wrote status in between
			}
			if err != nil {
				t.Fatalf("update scale: %v", err)
			}
			break
		}
		if s.Spec.Replicas != 3 {
			t.Errorf("update scale answered replicas %d", s.Spec.Replicas)
		}
		s.ResourceVersion = cur.GetResourceVersion()
		_, err := sc.UpdateScale(ctx, name, s, metav1.UpdateOptions{})
		wantConflict := fmt.Sprintf(`Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again`, k.resource, name)
		if !apierrors.IsConflict(err) || err.Error() != wantConflict {
			t.Errorf("stale scale update: err = %v, want %s", err, wantConflict)
		}
		scaled, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if k.replicas(scaled) != 3 {
			t.Errorf("after scale: replicas = %d, want 3", k.replicas(scaled))
		}
		if k.generation && scaled.GetGeneration() != cur.GetGeneration()+1 {
			t.Errorf("scale: generation %d → %d, want +1", cur.GetGeneration(), scaled.GetGeneration())
		}
	}
	// 7. Delete, then the object is gone.
	if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if k.finalized {
		waitFor(t, func() bool {
			_, err := c.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
	if _, err := c.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: err = %v, want NotFound", err)
	}
	if err := c.Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: err = %v, want NotFound", err)
	}
}

// update re-reads the object and writes mutate's change until the write does not conflict
// (controllers write status concurrently). It returns the object as read, as sent, and as
// answered.
func (k kindCase[T, L]) update(t *testing.T, name string, mutate func(T), write func(context.Context, T, metav1.UpdateOptions) (T, error)) (before, sent, after T) {
	t.Helper()
	ctx := ctxT(t)
	for attempt := 0; attempt < 10; attempt++ {
		cur, err := k.client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		next := cur.DeepCopyObject().(T)
		mutate(next)
		after, err = write(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		return cur, next, after
	}
	t.Fatalf("update: conflicts on every attempt")
	return
}

// listItems returns the items of a typed list.
func listItems(t *testing.T, list runtime.Object) []metav1.Object {
	t.Helper()
	v := reflect.ValueOf(list).Elem().FieldByName("Items")
	out := make([]metav1.Object, 0, v.Len())
	for i := 0; i < v.Len(); i++ {
		out = append(out, v.Index(i).Addr().Interface().(metav1.Object))
	}
	return out
}

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

func int32p(n int32) *int32 { return &n }

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// TestTypedCRUDEveryKind walks every served built-in kind through its typed client.
func TestTypedCRUDEveryKind(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds"
	mkNamespace(t, s, ns)
	core := s.Client.CoreV1()
	apps := s.Client.AppsV1()
	batch := s.Client.BatchV1()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"pods", kindCase[*corev1.Pod, *corev1.PodList]{
			client: core.Pods(ns), obj: &corev1.Pod{ObjectMeta: meta("p"), Spec: podTemplate("web").Spec},
			spec:       func(o *corev1.Pod) { o.Spec.Containers[0].Image = "nginx:2" },
			specOf:     func(o *corev1.Pod) interface{} { return o.Spec.Containers[0].Image },
			status:     func(o *corev1.Pod) { o.Status.Phase = corev1.PodRunning; o.Status.PodIP = "10.0.0.9" },
			statusOf:   func(o *corev1.Pod) interface{} { return [2]string{string(o.Status.Phase), o.Status.PodIP} },
			generation: true,
		}.run},
		{"services", kindCase[*corev1.Service, *corev1.ServiceList]{
			client: core.Services(ns), obj: &corev1.Service{ObjectMeta: meta("svc"), Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
			spec:   func(o *corev1.Service) { o.Spec.Ports[0].Port = 8080 },
			specOf: func(o *corev1.Service) interface{} { return o.Spec.Ports[0].Port },
			status: func(o *corev1.Service) {
				o.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Test", Message: "m", LastTransitionTime: metav1.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}}
			},
			statusOf: func(o *corev1.Service) interface{} { return len(o.Status.Conditions) },
		}.run},
		{"secrets", kindCase[*corev1.Secret, *corev1.SecretList]{
			client: core.Secrets(ns), obj: &corev1.Secret{ObjectMeta: meta("s"), StringData: map[string]string{"k": "v"}},
			spec:   func(o *corev1.Secret) { o.Data = map[string][]byte{"k": []byte("w")} },
			specOf: func(o *corev1.Secret) interface{} { return string(o.Data["k"]) },
		}.run},
		{"configmaps", kindCase[*corev1.ConfigMap, *corev1.ConfigMapList]{
			client: core.ConfigMaps(ns), obj: &corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"k": "v"}},
			spec:   func(o *corev1.ConfigMap) { o.Data["k"] = "w" },
			specOf: func(o *corev1.ConfigMap) interface{} { return o.Data["k"] },
		}.run},
		{"persistentvolumeclaims", kindCase[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]{
			client: core.PersistentVolumeClaims(ns), obj: &corev1.PersistentVolumeClaim{ObjectMeta: meta("pvc"), Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
			status:   func(o *corev1.PersistentVolumeClaim) { o.Status.Phase = corev1.ClaimBound },
			statusOf: func(o *corev1.PersistentVolumeClaim) interface{} { return o.Status.Phase },
		}.run},
		{"replicationcontrollers", kindCase[*corev1.ReplicationController, *corev1.ReplicationControllerList]{
			client: core.ReplicationControllers(ns), obj: &corev1.ReplicationController{ObjectMeta: meta("rc"), Spec: corev1.ReplicationControllerSpec{
				Replicas: int32p(0), Selector: map[string]string{"app": "web"}, Template: ptrTemplate(podTemplate("web"))}},
			spec:       func(o *corev1.ReplicationController) { o.Spec.Replicas = int32p(0); o.Spec.MinReadySeconds = 5 },
			specOf:     func(o *corev1.ReplicationController) interface{} { return o.Spec.MinReadySeconds },
			status:     func(o *corev1.ReplicationController) { o.Status.Replicas = 0; o.Status.ObservedGeneration = 7 },
			statusOf:   func(o *corev1.ReplicationController) interface{} { return o.Status.ObservedGeneration },
			generation: true, scale: true, resource: "replicationcontrollers", replicas: func(o *corev1.ReplicationController) int32 { return *o.Spec.Replicas },
		}.run},
		{"resourcequotas", kindCase[*corev1.ResourceQuota, *corev1.ResourceQuotaList]{
			client: core.ResourceQuotas(ns), obj: &corev1.ResourceQuota{ObjectMeta: meta("q"), Spec: corev1.ResourceQuotaSpec{
				Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("100")}}},
			spec: func(o *corev1.ResourceQuota) {
				o.Spec.Hard = corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("50")}
			},
			specOf: func(o *corev1.ResourceQuota) interface{} {
				return o.Spec.Hard.Name(corev1.ResourceConfigMaps, "").String()
			},
		}.run},
		{"limitranges", kindCase[*corev1.LimitRange, *corev1.LimitRangeList]{
			client: core.LimitRanges(ns), obj: &corev1.LimitRange{ObjectMeta: meta("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}},
			spec: func(o *corev1.LimitRange) {
				o.Spec.Limits[0].Max = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
			},
			specOf: func(o *corev1.LimitRange) interface{} { return o.Spec.Limits[0].Max.Cpu().String() },
		}.run},
		{"events", kindCase[*corev1.Event, *corev1.EventList]{
			client: core.Events(ns), obj: &corev1.Event{ObjectMeta: meta("ev"),
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p"}, Reason: "Started", Message: "m", Type: corev1.EventTypeNormal, Count: 1},
			spec:   func(o *corev1.Event) { o.Count = 2 },
			specOf: func(o *corev1.Event) interface{} { return o.Count },
		}.run},
		{"serviceaccounts", kindCase[*corev1.ServiceAccount, *corev1.ServiceAccountList]{
			client: core.ServiceAccounts(ns), obj: &corev1.ServiceAccount{ObjectMeta: meta("sa")},
			spec:   func(o *corev1.ServiceAccount) { o.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "reg"}} },
			specOf: func(o *corev1.ServiceAccount) interface{} { return len(o.ImagePullSecrets) },
		}.run},
		{"nodes", kindCase[*corev1.Node, *corev1.NodeList]{
			client: core.Nodes(), obj: &corev1.Node{ObjectMeta: meta("node-1")},
			spec:   func(o *corev1.Node) { o.Spec.Unschedulable = true },
			specOf: func(o *corev1.Node) interface{} { return o.Spec.Unschedulable },
			status: func(o *corev1.Node) {
				o.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}
			},
			statusOf: func(o *corev1.Node) interface{} { return o.Status.Capacity.Cpu().String() },
		}.run},
		{"deployments", kindCase[*appsv1.Deployment, *appsv1.DeploymentList]{
			client: apps.Deployments(ns), obj: &appsv1.Deployment{ObjectMeta: meta("deploy"), Spec: appsv1.DeploymentSpec{
				Replicas: int32p(0), Selector: sel, Template: podTemplate("web")}},
			spec:       func(o *appsv1.Deployment) { o.Spec.Template.Spec.Containers[0].Image = "nginx:2" },
			specOf:     func(o *appsv1.Deployment) interface{} { return o.Spec.Template.Spec.Containers[0].Image },
			status:     func(o *appsv1.Deployment) { o.Status.ObservedGeneration = 7 },
			statusOf:   func(o *appsv1.Deployment) interface{} { return o.Status.ObservedGeneration },
			generation: true, scale: true, resource: "deployments.apps", replicas: func(o *appsv1.Deployment) int32 { return *o.Spec.Replicas },
		}.run},
		{"replicasets", kindCase[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]{
			client: apps.ReplicaSets(ns), obj: &appsv1.ReplicaSet{ObjectMeta: meta("rs"), Spec: appsv1.ReplicaSetSpec{
				Replicas: int32p(0), Selector: sel, Template: podTemplate("web")}},
			spec:       func(o *appsv1.ReplicaSet) { o.Spec.MinReadySeconds = 5 },
			specOf:     func(o *appsv1.ReplicaSet) interface{} { return o.Spec.MinReadySeconds },
			status:     func(o *appsv1.ReplicaSet) { o.Status.ObservedGeneration = 7 },
			statusOf:   func(o *appsv1.ReplicaSet) interface{} { return o.Status.ObservedGeneration },
			generation: true, scale: true, resource: "replicasets.apps", replicas: func(o *appsv1.ReplicaSet) int32 { return *o.Spec.Replicas },
		}.run},
		{"statefulsets", kindCase[*appsv1.StatefulSet, *appsv1.StatefulSetList]{
			client: apps.StatefulSets(ns), obj: &appsv1.StatefulSet{ObjectMeta: meta("sts"), Spec: appsv1.StatefulSetSpec{
				Replicas: int32p(0), Selector: sel, Template: podTemplate("web"), ServiceName: "svc"}},
			spec:       func(o *appsv1.StatefulSet) { o.Spec.Template.Spec.Containers[0].Image = "nginx:2" },
			specOf:     func(o *appsv1.StatefulSet) interface{} { return o.Spec.Template.Spec.Containers[0].Image },
			status:     func(o *appsv1.StatefulSet) { o.Status.ObservedGeneration = 7 },
			statusOf:   func(o *appsv1.StatefulSet) interface{} { return o.Status.ObservedGeneration },
			generation: true, scale: true, resource: "statefulsets.apps", replicas: func(o *appsv1.StatefulSet) int32 { return *o.Spec.Replicas },
		}.run},
		{"daemonsets", kindCase[*appsv1.DaemonSet, *appsv1.DaemonSetList]{
			client: apps.DaemonSets(ns), obj: &appsv1.DaemonSet{ObjectMeta: meta("ds"), Spec: appsv1.DaemonSetSpec{
				Selector: sel, Template: podTemplate("web")}},
			spec:       func(o *appsv1.DaemonSet) { o.Spec.Template.Spec.Containers[0].Image = "nginx:2" },
			specOf:     func(o *appsv1.DaemonSet) interface{} { return o.Spec.Template.Spec.Containers[0].Image },
			status:     func(o *appsv1.DaemonSet) { o.Status.ObservedGeneration = 7 },
			statusOf:   func(o *appsv1.DaemonSet) interface{} { return o.Status.ObservedGeneration },
			generation: true,
		}.run},
		{"jobs", kindCase[*batchv1.Job, *batchv1.JobList]{
			client: batch.Jobs(ns), obj: &batchv1.Job{ObjectMeta: meta("job"), Spec: batchv1.JobSpec{
				Suspend: boolp(true), Template: jobTemplate()}},
			spec:       func(o *batchv1.Job) { o.Spec.ActiveDeadlineSeconds = int64p(600) },
			specOf:     func(o *batchv1.Job) interface{} { return fmt.Sprint(*o.Spec.ActiveDeadlineSeconds) },
			status:     func(o *batchv1.Job) { o.Status.Failed = 7 },
			statusOf:   func(o *batchv1.Job) interface{} { return o.Status.Failed },
			generation: true,
		}.runJob},
		{"cronjobs", kindCase[*batchv1.CronJob, *batchv1.CronJobList]{
			client: batch.CronJobs(ns), obj: &batchv1.CronJob{ObjectMeta: meta("cj"), Spec: batchv1.CronJobSpec{
				Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}},
			spec:   func(o *batchv1.CronJob) { o.Spec.Schedule = "*/10 * * * *" },
			specOf: func(o *batchv1.CronJob) interface{} { return o.Spec.Schedule },
			status: func(o *batchv1.CronJob) {
				ts := metav1.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
				o.Status.LastScheduleTime = &ts
			},
			statusOf:   func(o *batchv1.CronJob) interface{} { return fmt.Sprint(o.Status.LastScheduleTime) },
			generation: true,
		}.run},
		{"controllerrevisions", kindCase[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]{
			client: apps.ControllerRevisions(ns), obj: &appsv1.ControllerRevision{ObjectMeta: meta("cr"), Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}, Revision: 1},
			spec:   func(o *appsv1.ControllerRevision) { o.Revision = 2 },
			specOf: func(o *appsv1.ControllerRevision) interface{} { return o.Revision },
		}.run},
		{"priorityclasses", kindCase[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList]{
			client: s.Client.SchedulingV1().PriorityClasses(), obj: &schedulingv1.PriorityClass{ObjectMeta: meta("pc"), Value: 1000},
			spec:   func(o *schedulingv1.PriorityClass) { o.Description = "changed" },
			specOf: func(o *schedulingv1.PriorityClass) interface{} { return o.Description },
		}.run},
		{"storageclasses", kindCase[*storagev1.StorageClass, *storagev1.StorageClassList]{
			client: s.Client.StorageV1().StorageClasses(), obj: &storagev1.StorageClass{ObjectMeta: meta("sc"), Provisioner: "example.com/p"},
			spec:   func(o *storagev1.StorageClass) { o.AllowVolumeExpansion = boolp(true) },
			specOf: func(o *storagev1.StorageClass) interface{} { return fmt.Sprint(*o.AllowVolumeExpansion) },
		}.run},
		{"roles", kindCase[*rbacv1.Role, *rbacv1.RoleList]{
			client: s.Client.RbacV1().Roles(ns), obj: &rbacv1.Role{ObjectMeta: meta("role"), Rules: []rbacv1.PolicyRule{{
				Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
			spec:   func(o *rbacv1.Role) { o.Rules[0].Verbs = []string{"get", "list"} },
			specOf: func(o *rbacv1.Role) interface{} { return fmt.Sprint(o.Rules[0].Verbs) },
		}.run},
		{"rolebindings", kindCase[*rbacv1.RoleBinding, *rbacv1.RoleBindingList]{
			client: s.Client.RbacV1().RoleBindings(ns), obj: &rbacv1.RoleBinding{ObjectMeta: meta("rb"),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "role"}},
			spec: func(o *rbacv1.RoleBinding) {
				o.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}
			},
			specOf: func(o *rbacv1.RoleBinding) interface{} { return len(o.Subjects) },
		}.run},
		{"clusterroles", kindCase[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList]{
			client: s.Client.RbacV1().ClusterRoles(), obj: &rbacv1.ClusterRole{ObjectMeta: meta("crole"), Rules: []rbacv1.PolicyRule{{
				Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}},
			spec:   func(o *rbacv1.ClusterRole) { o.Rules[0].NonResourceURLs = []string{"/livez"} },
			specOf: func(o *rbacv1.ClusterRole) interface{} { return o.Rules[0].NonResourceURLs[0] },
		}.run},
		{"clusterrolebindings", kindCase[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList]{
			client: s.Client.RbacV1().ClusterRoleBindings(), obj: &rbacv1.ClusterRoleBinding{ObjectMeta: meta("crb"),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}},
			spec: func(o *rbacv1.ClusterRoleBinding) {
				o.Subjects = []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "sa"}}
			},
			specOf: func(o *rbacv1.ClusterRoleBinding) interface{} { return len(o.Subjects) },
		}.run},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// runJob walks a Job: its default delete propagation is orphan, so the walk deletes it with
// Background propagation to remove it at once.
func (k kindCase[T, L]) runJob(t *testing.T) {
	k.client = backgroundDelete[T, L]{k.client}
	k.run(t)
}

// backgroundDelete deletes with propagationPolicy=Background.
type backgroundDelete[T object, L runtime.Object] struct{ typedClient[T, L] }

func (b backgroundDelete[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	p := metav1.DeletePropagationBackground
	opts.PropagationPolicy = &p
	return b.typedClient.Delete(ctx, name, opts)
}

func (b backgroundDelete[T, L]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	return b.typedClient.(statusClient[T]).UpdateStatus(ctx, obj, opts)
}

func ptrTemplate(t corev1.PodTemplateSpec) *corev1.PodTemplateSpec { return &t }

func jobTemplate() corev1.PodTemplateSpec {
	t := podTemplate("job")
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return t
}

func boolp(b bool) *bool    { return &b }
func int64p(n int64) *int64 { return &n }
