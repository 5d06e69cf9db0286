package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestConformanceVersion: /version, read by client-go's discovery as kubectl does, reports
// the emulated Kubernetes v1.37 in apimachinery's version.Info shape.
func TestConformanceVersion(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	v, err := s.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "37" || v.EmulationMajor != "1" || v.EmulationMinor != "37" ||
		v.MinCompatibilityMajor != "1" || v.MinCompatibilityMinor != "36" ||
		v.GitVersion != "v1.37.0+quotad" || v.BuildDate == "" || v.GoVersion == "" || v.Compiler != "gc" || v.Platform == "" {
		t.Fatalf("version: %+v", v)
	}
}

// TestConformanceQuotaStatusWrite: a /status write of a ResourceQuota is stored as written
// (its answer and a watch show the written status.hard, as upstream's conformance spec
// expects), then quotad restores the exact status at once: the next event and every read
// after the write returns show status.hard = spec.hard with exact usage, and admission
// judges on spec.hard.
func TestConformanceQuotaStatusWrite(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rq"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := mkQuota(t, s, "rq", "q", map[string]string{"cpu": "1", "memory": "1Gi", "pods": "1"})
	rqs := s.Client.CoreV1().ResourceQuotas("rq")
	w, err := rqs.Watch(ctx, metav1.ListOptions{ResourceVersion: q.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// 1. A status write keeps what it wrote in the answer.
	patched, err := rqs.Patch(ctx, "q", types.StrategicMergePatchType, []byte(`{"status":{"hard":{"cpu":"2","memory":"2Gi","pods":"5"}}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if !equalRL(patched.Status.Hard, rl("cpu", "2", "memory", "2Gi", "pods", "5")) || !equalRL(patched.Spec.Hard, rl("cpu", "1", "memory", "1Gi", "pods", "1")) {
		t.Fatalf("status write answered spec %v status %v", patched.Spec.Hard, patched.Status.Hard)
	}
	// 2. The watch shows the written status, then the restored one.
	for sawWritten, restored := false, false; !restored; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			got := ev.Object.(*corev1.ResourceQuota)
			switch {
			case equalRL(got.Status.Hard, rl("cpu", "2", "memory", "2Gi", "pods", "5")):
				sawWritten = true
			case sawWritten && equalRL(got.Status.Hard, got.Spec.Hard):
				if !equalRL(got.Status.Used, rl("cpu", "0", "memory", "0", "pods", "0")) {
					t.Fatalf("restored used %v", got.Status.Used)
				}
				restored = true
			}
		case <-ctx.Done():
			t.Fatalf("no written then restored status in the watch (written seen: %v)", sawWritten)
		}
	}
	// 3. Once the write has answered, reads show the exact status.
	cur, err := rqs.Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalRL(cur.Status.Hard, cur.Spec.Hard) {
		t.Fatalf("status not restored after the write: %v", cur.Status.Hard)
	}
	// 4. An update of the status sending only hard (as client-go's UpdateStatus in the spec)
	// is answered with the server's exact used.
	cur.Status = corev1.ResourceQuotaStatus{Hard: rl("cpu", "1", "memory", "1Gi", "pods", "1")}
	upd, err := rqs.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalRL(upd.Status.Used, rl("cpu", "0", "memory", "0", "pods", "0")) {
		t.Fatalf("UpdateStatus answered used %v", upd.Status.Used)
	}
	// 5. Admission judges on spec.hard: one pod, not five.
	if _, err := rqs.Patch(ctx, "q", types.StrategicMergePatchType, []byte(`{"status":{"hard":{"pods":"5"}}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	pod := podWith("p1", rl("cpu", "100m", "memory", "10Mi"), nil)
	if _, err := s.Client.CoreV1().Pods("rq").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod.Name = "p2"
	_, err = s.Client.CoreV1().Pods("rq").Create(ctx, pod, metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`)
	expectUsed(t, s, "rq", "q", map[string]string{"pods": "1", "cpu": "100m", "memory": "10Mi"})
}

// TestConformanceNamespaceStatusPatch: a namespace's /status patch applies the metadata it
// carries (upstream's namespace status strategy keeps only the spec), as the conformance
// spec "should apply changes to a namespace status" expects, and so does a
// PersistentVolumeClaim's (its upstream status strategy too resets only the spec; the kinds
// whose strategy resets the metadata are in TestStatusWritesApplyMetadataAsUpstream).
func TestConformanceNamespaceStatusPatch(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nss"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patched, err := s.Client.CoreV1().Namespaces().Patch(ctx, "nss", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"e2e-patched-ns-status":"nss"}},"status":{"conditions":[{"type":"StatusPatch","status":"True","reason":"E2E","message":"Patched by an e2e test"}]}}`),
		metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if patched.Annotations["e2e-patched-ns-status"] != "nss" || len(patched.Status.Conditions) == 0 || patched.Status.Conditions[len(patched.Status.Conditions)-1].Reason != "E2E" {
		t.Fatalf("patched namespace: annotations %v conditions %v", patched.Annotations, patched.Status.Conditions)
	}
	got, err := s.Client.CoreV1().Namespaces().Get(ctx, "nss", metav1.GetOptions{})
	if err != nil || got.Annotations["e2e-patched-ns-status"] != "nss" {
		t.Fatalf("stored namespace annotations %v (%v)", got.Annotations, err)
	}
	if _, err := s.Client.CoreV1().PersistentVolumeClaims("nss").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc, err := s.Client.CoreV1().PersistentVolumeClaims("nss").Patch(ctx, "c", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"a":"b"}},"status":{"phase":"Bound"}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Annotations["a"] != "b" || pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("pvc status patch: annotations %v phase %s", pvc.Annotations, pvc.Status.Phase)
	}
}

func equalRL(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// TestConformanceCustomResourceDefaults: a custom resource gets its schema's defaults on
// create, and one stored before a default was added gets it on every read (get, list,
// watch), as upstream's spec "custom resource defaulting for requests and from storage
// works" expects; removing a default keeps the values stored with it.
func TestConformanceCustomResourceDefaults(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	crd := widgetCRD("widgets", "Widget", apiextensionsv1.ClusterScoped)
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	props["a"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	props["b"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
	waitFor(t, func() bool { _, err := c.List(ctx, metav1.ListOptions{}); return err == nil })
	if _, err := c.Create(ctx, cr("Widget", "cr-1", map[string]interface{}{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Patch(ctx, crd.Name, types.JSONPatchType, []byte(`[
		{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/a/default","value":"A"},
		{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color/default","value":"red"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	field := func(u *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	waitFor(t, func() bool {
		u, err := c.Get(ctx, "cr-1", metav1.GetOptions{})
		return err == nil && field(u, "a") == "A"
	})
	u1, err := c.Get(ctx, "cr-1", metav1.GetOptions{})
	if err != nil || field(u1, "spec", "color") != "red" {
		t.Fatalf("nested default on read: %v %v", u1, err)
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || field(&l.Items[0], "a") != "A" {
		t.Fatalf("list: %v %v", l, err)
	}
	u2, err := c.Create(ctx, cr("Widget", "cr-2", map[string]interface{}{"size": int64(1)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if field(u2, "a") != "A" || field(u2, "spec", "color") != "red" {
		t.Fatalf("create answered %v", u2.Object)
	}
	if _, err := crds.Patch(ctx, crd.Name, types.JSONPatchType, []byte(`[
		{"op":"remove","path":"/spec/versions/0/schema/openAPIV3Schema/properties/a/default"},
		{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/b/default","value":"B"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		u, err := c.Get(ctx, "cr-2", metav1.GetOptions{})
		return err == nil && field(u, "b") == "B"
	})
	if u, err := c.Get(ctx, "cr-2", metav1.GetOptions{}); err != nil || field(u, "a") != "A" {
		t.Fatalf("cr-2 lost a stored with it: %v %v", u, err)
	}
	if u, err := c.Get(ctx, "cr-1", metav1.GetOptions{}); err != nil || field(u, "a") != "" || field(u, "b") != "B" {
		t.Fatalf("cr-1 (stored without a): %v %v", u, err)
	}
}

// TestConformanceTableForNoMetadata: a Table asked of an endpoint whose objects have no
// metadata (a SelfSubjectAccessReview) is upstream's 406; asked with a plain fallback, the
// review is answered.
func TestConformanceTableForNoMetadata(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/", Verb: "get"}}}
	table := &metav1.Table{}
	err := s.Client.AuthorizationV1().RESTClient().Post().Resource("selfsubjectaccessreviews").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Body(sar).Do(ctx).Into(table)
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != 406 {
		t.Fatalf("Table of a SelfSubjectAccessReview: %v, want 406", err)
	}
	out := &authorizationv1.SelfSubjectAccessReview{}
	err = s.Client.AuthorizationV1().RESTClient().Post().Resource("selfsubjectaccessreviews").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json").Body(sar).Do(ctx).Into(out)
	if err != nil || !out.Status.Allowed {
		t.Fatalf("with a JSON fallback: %v %+v", err, out.Status)
	}
}

// TestConformanceGarbageCollectorCycle: pods owning each other in a cycle, each reference
// blocking its owner's deletion, are all collected after one of them is deleted in
// foreground, as upstream's spec "should not be blocked by dependency circle" expects.
func TestConformanceGarbageCollectorCycle(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gc"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := s.Client.CoreV1().Pods("gc")
	var made []*corev1.Pod
	for _, name := range []string{"pod1", "pod2", "pod3"} {
		p, err := pods.Create(ctx, podWith(name, nil, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, p)
	}
	// pod1 is owned by pod3, pod2 by pod1, pod3 by pod2.
	for i, p := range made {
		owner := made[(i+2)%3]
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":true}]}}`, owner.Name, owner.UID)
		if _, err := pods.Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fg := metav1.DeletePropagationForeground
	if err := pods.Delete(ctx, "pod1", metav1.DeleteOptions{PropagationPolicy: &fg, Preconditions: metav1.NewUIDPreconditions(string(made[0].UID))}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 0 {
			return
		}
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed with %d pods left", len(l.Items))
			}
		case <-ctx.Done():
			t.Fatalf("pods left: %d", len(l.Items))
		}
	}
}

// TestConformanceApplyFieldValidation: server-side apply of a custom resource reports
// unknown fields as the field manager words them (root, metadata and embedded resources, all
// in one answer) and, under fieldValidation=Strict, duplicate YAML keys by line; a create
// reports duplicate and unknown fields (metadata and embedded metadata included) in one
// strict decoding error; as upstream's FieldValidation conformance specs expect.
func TestConformanceApplyFieldValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	var v apiextensionsv1.CustomResourceValidation
	if err := json.Unmarshal([]byte(`{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{
		"template":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"metadata":{"type":"object","properties":{"name":{"type":"string"}}}}},
		"foo":{"type":"string"},"cronSpec":{"type":"string"}}}}}}`), &v); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "noxus.example.com"}, Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.ClusterScoped,
		Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "noxus", Kind: "Noxu", ListKind: "NoxuList"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true, Schema: &v}}}}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := s.Client.Discovery().RESTClient()
	apply := func(body string) (int, string) {
		var code int
		res, _ := rc.Patch(types.ApplyPatchType).AbsPath("/apis/example.com/v1/noxus").Name("mytest").
			Param("fieldManager", "m").Param("fieldValidation", "Strict").Body([]byte(body)).Do(ctx).StatusCode(&code).Raw()
		return code, string(res)
	}
	for _, tc := range []struct {
		body string
		code int
		msg  string
	}{
		{"apiVersion: example.com/v1\nkind: Noxu\nmetadata:\n  name: mytest\nunknownField: unknown\nspec:\n  foo: foo1\n",
			500, `"message":"failed to create typed patch object (/mytest; example.com/v1, Kind=Noxu): .unknownField: field not declared in schema"`},
		{"apiVersion: example.com/v1\nkind: Noxu\nmetadata:\n  name: mytest\n  unknownMeta: unknown\nspec:\n  template:\n    apiVersion: foo/v1\n    kind: Sub\n    metadata:\n      unknownSubMeta: unknown\n      name: subobject\n  foo: foo1\n",
			500, `.metadata.unknownMeta: field not declared in schema`},
		// The field manager's errors come in no fixed order: each is checked on its own.
		{"apiVersion: example.com/v1\nkind: Noxu\nmetadata:\n  name: mytest\n  unknownMeta: unknown\nspec:\n  template:\n    apiVersion: foo/v1\n    kind: Sub\n    metadata:\n      unknownSubMeta: unknown\n      name: subobject\n  foo: foo1\n",
			500, `.spec.template.metadata.unknownSubMeta: field not declared in schema`},
		{"apiVersion: example.com/v1\nkind: Noxu\nmetadata:\n  name: mytest\nspec:\n  foo: foo1\n  foo: foo2\n  cronSpec: x\n",
			400, `"message":"error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"foo\" already set in map"`},
	} {
		code, res := apply(tc.body)
		if code != tc.code || !strings.Contains(res, tc.msg) { // res is the raw JSON Status
			t.Errorf("apply %q:\n got %d %s\nwant %d containing %s", tc.body, code, res, tc.code, tc.msg)
		}
	}
	if _, err := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "noxus"}).Get(ctx, "mytest", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused apply created the object: %v", err)
	}
	body := `{"apiVersion":"example.com/v1","kind":"Noxu","metadata":{"name":"j","unknownMeta":"x"},"spec":{"foo":"a","foo":"b","unknown":"u","template":{"apiVersion":"v1","kind":"Sub","metadata":{"name":"s","unknownSubMeta":"y"}}}}`
	err = rc.Post().AbsPath("/apis/example.com/v1/noxus").Param("fieldValidation", "Strict").Body([]byte(body)).Do(ctx).Error()
	const want = `Noxu in version "v1" cannot be handled as a Noxu: strict decoding error: duplicate field "spec.foo", unknown field "metadata.unknownMeta", unknown field "spec.template.metadata.unknownSubMeta", unknown field "spec.unknown"`
	if !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("strict create:\n got %v\nwant %s", err, want)
	}
}
