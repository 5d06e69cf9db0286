package table

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// testNow is the injected clock of every test.
var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(testNow.Add(-d)) }

func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

func objMeta(name string, age time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: ago(age)}
}

func ptr[T any](v T) *T { return &v }

// rowOf converts one object and returns its row.
func rowOf(t *testing.T, obj runtime.Object) metav1.TableRow {
	t.Helper()
	tbl, err := Convert([]runtime.Object{obj}, testNow, metav1.IncludeNone, false)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(tbl.Rows))
	}
	if got, want := len(tbl.Rows[0].Cells), len(tbl.ColumnDefinitions); got != want {
		t.Fatalf("got %d cells for %d columns", got, want)
	}
	return tbl.Rows[0]
}

func checkCells(t *testing.T, obj runtime.Object, want []interface{}) {
	t.Helper()
	got := rowOf(t, obj).Cells
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells\n got %#v\nwant %#v", got, want)
	}
}

// col is a column name with its priority (1 = shown only with -o wide).
type col struct {
	name     string
	priority int32
}

func TestColumns(t *testing.T) {
	w := func(name string) col { return col{name, 1} }
	n := func(name string) col { return col{name, 0} }
	tests := []struct {
		obj  runtime.Object
		want []col
	}{
		{&corev1.Pod{}, []col{n("Name"), n("Ready"), n("Status"), n("Restarts"), n("Age"), w("IP"), w("Node"), w("Nominated Node"), w("Readiness Gates")}},
		{&corev1.Service{}, []col{n("Name"), n("Type"), n("Cluster-IP"), n("External-IP"), n("Port(s)"), n("Age"), w("Selector")}},
		{&corev1.Namespace{}, []col{n("Name"), n("Status"), n("Age")}},
		{&corev1.Node{}, []col{n("Name"), n("Status"), n("Roles"), n("Age"), n("Version"), w("Internal-IP"), w("External-IP"), w("OS-Image"), w("Kernel-Version"), w("Container-Runtime")}},
		{&corev1.Secret{}, []col{n("Name"), n("Type"), n("Data"), n("Age")}},
		{&corev1.ConfigMap{}, []col{n("Name"), n("Data"), n("Age")}},
		{&corev1.PersistentVolumeClaim{}, []col{n("Name"), n("Status"), n("Volume"), n("Capacity"), n("Access Modes"), n("StorageClass"), n("VolumeAttributesClass"), n("Age"), w("VolumeMode")}},
		{&corev1.PersistentVolume{}, []col{n("Name"), n("Capacity"), n("Access Modes"), n("Reclaim Policy"), n("Status"), n("Claim"), n("StorageClass"), n("VolumeAttributesClass"), n("Reason"), n("Age"), w("VolumeMode")}},
		{&corev1.ReplicationController{}, []col{n("Name"), n("Desired"), n("Current"), n("Ready"), n("Age"), w("Containers"), w("Images"), w("Selector")}},
		{&corev1.ResourceQuota{}, []col{n("Name"), n("Request"), n("Limit"), n("Age")}},
		{&corev1.LimitRange{}, []col{n("Name"), n("Created At")}},
		{&corev1.Event{}, []col{n("Last Seen"), n("Type"), n("Reason"), n("Object"), w("Subobject"), w("Source"), n("Message"), w("First Seen"), w("Count"), w("Name")}},
		{&corev1.ServiceAccount{}, []col{n("Name"), n("Age")}},
		{&corev1.Endpoints{}, []col{n("Name"), n("Endpoints"), n("Age")}},
		{&appsv1.Deployment{}, []col{n("Name"), n("Ready"), n("Up-to-date"), n("Available"), n("Age"), w("Containers"), w("Images"), w("Selector")}},
		{&appsv1.ReplicaSet{}, []col{n("Name"), n("Desired"), n("Current"), n("Ready"), n("Age"), w("Containers"), w("Images"), w("Selector")}},
		{&appsv1.StatefulSet{}, []col{n("Name"), n("Ready"), n("Age"), w("Containers"), w("Images")}},
		{&appsv1.DaemonSet{}, []col{n("Name"), n("Desired"), n("Current"), n("Ready"), n("Up-to-date"), n("Available"), n("Node Selector"), n("Age"), w("Containers"), w("Images"), w("Selector")}},
		{&appsv1.ControllerRevision{}, []col{n("Name"), n("Controller"), n("Revision"), n("Age")}},
		{&batchv1.Job{}, []col{n("Name"), n("Status"), n("Completions"), n("Duration"), n("Age"), w("Containers"), w("Images"), w("Selector")}},
		{&batchv1.CronJob{}, []col{n("Name"), n("Schedule"), n("Timezone"), n("Suspend"), n("Active"), n("Last Schedule"), n("Age"), w("Containers"), w("Images"), w("Selector")}},
		{&schedulingv1.PriorityClass{}, []col{n("Name"), n("Value"), n("Global-Default"), n("Age"), n("PreemptionPolicy")}},
		{&storagev1.StorageClass{}, []col{n("Name"), n("Provisioner"), n("ReclaimPolicy"), n("VolumeBindingMode"), n("AllowVolumeExpansion"), n("Age")}},
		{&apiextensionsv1.CustomResourceDefinition{}, []col{n("Name"), n("Created At")}},
		{&rbacv1.Role{}, []col{n("Name"), n("Created At")}},
	}
	for _, tt := range tests {
		t.Run(reflect.TypeOf(tt.obj).Elem().Name(), func(t *testing.T) {
			tbl, err := Convert([]runtime.Object{tt.obj}, testNow, metav1.IncludeNone, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []col
			for _, c := range tbl.ColumnDefinitions {
				got = append(got, col{c.Name, c.Priority})
				if c.Description == "" {
					t.Errorf("column %q has no description", c.Name)
				}
				if (c.Name == "Name") != (c.Format == "name") {
					t.Errorf("column %q has format %q", c.Name, c.Format)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("columns\n got %v\nwant %v", got, tt.want)
			}
			if len(tbl.Rows) != 1 || len(tbl.Rows[0].Cells) != len(tbl.ColumnDefinitions) {
				t.Errorf("want 1 row with one cell per column, got %+v", tbl.Rows)
			}
		})
	}
}

// TestColumnDescriptions pins the upstream description texts that are not
// taken from swagger docs, and the swagger doc of Name and Age.
func TestColumnDescriptions(t *testing.T) {
	tbl, err := Convert([]runtime.Object{&corev1.ResourceQuota{}}, testNow, metav1.IncludeNone, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"},
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"},
	}
	if !reflect.DeepEqual(tbl.ColumnDefinitions, want) {
		t.Errorf("resource quota columns\n got %#v\nwant %#v", tbl.ColumnDefinitions, want)
	}

	fixed := []struct {
		obj         runtime.Object
		column      string
		typ         string
		description string
	}{
		{&corev1.Pod{}, "Ready", "string", "The aggregate readiness state of this pod for accepting traffic."},
		{&corev1.Pod{}, "Status", "string", "The aggregate status of the containers in this pod."},
		{&corev1.Pod{}, "Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		{&corev1.Namespace{}, "Status", "string", "The status of the namespace"},
		{&corev1.Node{}, "Status", "string", "The status of the node"},
		{&corev1.Node{}, "Roles", "string", "The roles of the node"},
		{&corev1.PersistentVolumeClaim{}, "StorageClass", "string", "StorageClass of the pvc"},
		{&appsv1.Deployment{}, "Ready", "string", "Number of the pod with ready state"},
		{&appsv1.Deployment{}, "Containers", "string", "Names of each container in the template."},
		{&appsv1.Deployment{}, "Images", "string", "Images referenced by each container in the template."},
		{&batchv1.Job{}, "Status", "string", "Status of the job."},
		{&batchv1.Job{}, "Duration", "string", "Time required to complete the job."},
		{&batchv1.CronJob{}, "Suspend", "boolean", batchSpecSuspend},
		{&schedulingv1.PriorityClass{}, "Value", "integer", schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
		{&schedulingv1.PriorityClass{}, "Global-Default", "boolean", schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
		{&corev1.Service{}, "Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{&corev1.Secret{}, "Data", "string", corev1.Secret{}.SwaggerDoc()["data"]},
		{&corev1.ReplicationController{}, "Desired", "integer", corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
	}
	for _, tt := range fixed {
		tbl, err := Convert([]runtime.Object{tt.obj}, testNow, metav1.IncludeNone, false)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range tbl.ColumnDefinitions {
			if c.Name == tt.column {
				found = true
				if c.Type != tt.typ || c.Description != tt.description {
					t.Errorf("%T %s: got type %q description %q, want %q %q", tt.obj, tt.column, c.Type, c.Description, tt.typ, tt.description)
				}
			}
		}
		if !found {
			t.Errorf("%T has no column %q", tt.obj, tt.column)
		}
	}
}

const batchSpecSuspend = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."

func TestIncludeObject(t *testing.T) {
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns", ResourceVersion: "7", UID: "u1", Labels: map[string]string{"a": "b"}, CreationTimestamp: ago(time.Minute)},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	}
	tests := []struct {
		policy metav1.IncludeObjectPolicy
		want   string // JSON of the row's object
	}{
		{"", `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"q","namespace":"ns","uid":"u1","resourceVersion":"7","creationTimestamp":"2026-03-04T05:05:07Z","labels":{"a":"b"}}}`},
		{metav1.IncludeMetadata, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"q","namespace":"ns","uid":"u1","resourceVersion":"7","creationTimestamp":"2026-03-04T05:05:07Z","labels":{"a":"b"}}}`},
		{metav1.IncludeObject, `{"kind":"ResourceQuota","apiVersion":"v1","metadata":{"name":"q","namespace":"ns","uid":"u1","resourceVersion":"7","creationTimestamp":"2026-03-04T05:05:07Z","labels":{"a":"b"}},"spec":{"hard":{"pods":"2"}},"status":{}}`},
		{metav1.IncludeNone, `null`},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			tbl, err := Convert([]runtime.Object{q}, testNow, tt.policy, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tbl.Rows[0].Object)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("row object\n got %s\nwant %s", got, tt.want)
			}
			if !q.GetObjectKind().GroupVersionKind().Empty() {
				t.Errorf("input object was changed: %v", q.GetObjectKind().GroupVersionKind())
			}
		})
	}

	t.Run("invalid", func(t *testing.T) {
		_, err := Convert([]runtime.Object{q}, testNow, "Everything", false)
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("got %v, want BadRequest", err)
		}
		if got, want := err.Error(), `unrecognized includeObject value: "Everything"`; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		_, err = ConvertCustom(nil, nil, testNow, "x", false)
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("ConvertCustom: got %v, want BadRequest", err)
		}
	})

	t.Run("object keeps its own kind", func(t *testing.T) {
		withKind := q.DeepCopy()
		withKind.APIVersion, withKind.Kind = "v1", "ResourceQuota"
		tbl, err := Convert([]runtime.Object{withKind}, testNow, metav1.IncludeObject, false)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.Rows[0].Object.Object != withKind {
			t.Errorf("want the object itself when it has apiVersion/kind")
		}
	})
}

func TestTableShape(t *testing.T) {
	pods := []runtime.Object{
		&corev1.Pod{ObjectMeta: objMeta("a", time.Second)},
		&corev1.Pod{ObjectMeta: objMeta("b", 2*time.Second)},
	}
	tbl, err := Convert(pods, testNow, metav1.IncludeNone, false)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.APIVersion != "meta.k8s.io/v1" || tbl.Kind != "Table" {
		t.Errorf("got %s %s, want meta.k8s.io/v1 Table", tbl.APIVersion, tbl.Kind)
	}
	if len(tbl.Rows) != 2 || tbl.Rows[0].Cells[0] != "a" || tbl.Rows[1].Cells[0] != "b" {
		t.Errorf("rows not in input order: %+v", tbl.Rows)
	}

	t.Run("noHeaders", func(t *testing.T) {
		tbl, err := Convert(pods, testNow, metav1.IncludeNone, true)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.ColumnDefinitions != nil {
			t.Errorf("got columns %v with noHeaders", tbl.ColumnDefinitions)
		}
		if len(tbl.Rows) != 2 || len(tbl.Rows[0].Cells) != 9 {
			t.Errorf("rows must keep every cell: %+v", tbl.Rows)
		}
	})

	t.Run("empty list of a printed kind", func(t *testing.T) {
		tbl, err := ConvertKind(schema.GroupKind{Kind: "ResourceQuota"}, nil, testNow, metav1.IncludeMetadata, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(tbl.ColumnDefinitions) != 4 || tbl.ColumnDefinitions[2].Name != "Limit" {
			t.Errorf("want the quota columns, got %v", tbl.ColumnDefinitions)
		}
		got, _ := json.Marshal(tbl)
		if !strings.Contains(string(got), `"rows":[]`) {
			t.Errorf("want rows [] as upstream's printers, got %s", got)
		}
	})

	t.Run("empty list of a default kind", func(t *testing.T) {
		tbl, err := ConvertKind(schema.GroupKind{Kind: "LimitRange"}, nil, testNow, metav1.IncludeMetadata, false)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(tbl)
		if !strings.Contains(string(got), `"rows":null`) {
			t.Errorf("want rows null as upstream's default convertor, got %s", got)
		}
	})

	t.Run("mixed kinds", func(t *testing.T) {
		_, err := Convert([]runtime.Object{&corev1.Pod{}, &corev1.Service{}}, testNow, metav1.IncludeNone, false)
		if err == nil {
			t.Fatal("want an error for objects of different kinds")
		}
	})
}

func TestDefaultConvertor(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 3, 4, 6, 7, 8, 0, time.FixedZone("X", 3600)))
	tests := []struct {
		obj  runtime.Object
		want []interface{}
	}{
		{&corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", CreationTimestamp: created}}, []interface{}{"lr", "2026-03-04T05:07:08Z"}},
		{&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "foos.example.com", CreationTimestamp: created}}, []interface{}{"foos.example.com", "2026-03-04T05:07:08Z"}},
		{&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, []interface{}{"r", "0001-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		checkCells(t, tt.obj, tt.want)
	}

	// The kind of an untyped object comes from its apiVersion/kind.
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("LimitRange")
	u.SetName("lr")
	u.SetCreationTimestamp(created)
	tbl, err := Convert([]runtime.Object{u}, testNow, metav1.IncludeObject, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := tbl.ColumnDefinitions[1].Name; got != "Created At" {
		t.Errorf("got column %q, want Created At", got)
	}
	if tbl.Rows[0].Object.Object != u {
		t.Errorf("want the unstructured object itself as the row object")
	}
}

// TestUnstructuredBuiltin: an unstructured object of a printed kind prints
// like the typed one.
func TestUnstructuredBuiltin(t *testing.T) {
	q := &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: objMeta("q", 90*time.Second),
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"limits.cpu": resource.MustParse("2"), "requests.cpu": resource.MustParse("1")},
			Used: corev1.ResourceList{"requests.cpu": resource.MustParse("500m")},
		},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(q)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	want := []interface{}{"q", "requests.cpu: 500m/1", "limits.cpu: 0/2", "90s"}
	checkCells(t, u, want)
	checkCells(t, q, want)
}
