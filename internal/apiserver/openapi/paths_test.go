package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/handler3"
)

func methodsOf(pathItem map[string]any) []string {
	var m []string
	for k := range pathItem {
		if k != "parameters" {
			m = append(m, k)
		}
	}
	sort.Strings(m)
	return m
}

func paramNames(v any) []string {
	list, _ := v.([]any)
	var names []string
	for _, p := range list {
		names = append(names, p.(map[string]any)["name"].(string))
	}
	return names
}

func TestPaths(t *testing.T) {
	tests := []struct {
		doc, path  string
		methods    []string
		pathParams []string
		opIDs      map[string]string
	}{
		{"api/v1", "/api/v1/", []string{"get"}, nil, map[string]string{"get": "getCoreV1APIResources"}},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods", []string{"delete", "get", "post"}, []string{"namespace", "pretty"},
			map[string]string{"get": "listCoreV1NamespacedPod", "post": "createCoreV1NamespacedPod", "delete": "deleteCoreV1CollectionNamespacedPod"}},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}", []string{"delete", "get", "patch", "put"}, []string{"name", "namespace", "pretty"},
			map[string]string{"get": "readCoreV1NamespacedPod", "put": "replaceCoreV1NamespacedPod", "patch": "patchCoreV1NamespacedPod", "delete": "deleteCoreV1NamespacedPod"}},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/status", []string{"get", "patch", "put"}, []string{"name", "namespace", "pretty"},
			map[string]string{"get": "readCoreV1NamespacedPodStatus", "patch": "patchCoreV1NamespacedPodStatus"}},
		{"api/v1", "/api/v1/pods", []string{"get"},
			[]string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "pretty", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"},
			map[string]string{"get": "listCoreV1PodForAllNamespaces"}},
		{"api/v1", "/api/v1/namespaces/{namespace}/resourcequotas/{name}/status", []string{"get", "patch", "put"}, []string{"name", "namespace", "pretty"},
			map[string]string{"put": "replaceCoreV1NamespacedResourceQuotaStatus"}},
		// Namespaces serve no deletecollection.
		{"api/v1", "/api/v1/namespaces", []string{"get", "post"}, []string{"pretty"}, map[string]string{"get": "listCoreV1Namespace"}},
		{"api/v1", "/api/v1/namespaces/{name}", []string{"delete", "get", "patch", "put"}, []string{"name", "pretty"}, map[string]string{"delete": "deleteCoreV1Namespace"}},
		{"api/v1", "/api/v1/nodes", []string{"delete", "get", "post"}, []string{"pretty"}, map[string]string{"delete": "deleteCoreV1CollectionNode"}},
		{"apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", []string{"get", "patch", "put"}, []string{"name", "namespace", "pretty"},
			map[string]string{"get": "readAppsV1NamespacedDeploymentScale", "patch": "patchAppsV1NamespacedDeploymentScale"}},
		{"apis/scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1/priorityclasses/{name}", []string{"delete", "get", "patch", "put"}, []string{"name", "pretty"},
			map[string]string{"patch": "patchSchedulingV1PriorityClass"}},
		{"apis/stable.example.com/v1", "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale", []string{"get", "patch", "put"}, []string{"name", "namespace", "pretty"},
			map[string]string{"get": "readStableExampleComV1NamespacedCronTabScale"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			paths := document(t, tt.doc)["paths"].(map[string]any)
			item, ok := paths[tt.path].(map[string]any)
			if !ok {
				t.Fatalf("no path %s", tt.path)
			}
			if got := methodsOf(item); !reflect.DeepEqual(got, tt.methods) {
				t.Errorf("methods %v, want %v", got, tt.methods)
			}
			if got := paramNames(item["parameters"]); !reflect.DeepEqual(got, tt.pathParams) {
				t.Errorf("path parameters %v, want %v", got, tt.pathParams)
			}
			for method, id := range tt.opIDs {
				if got := item[method].(map[string]any)["operationId"]; got != id {
					t.Errorf("%s operationId %v, want %s", method, got, id)
				}
			}
		})
	}
}

func TestNoUnservedPaths(t *testing.T) {
	paths := document(t, "api/v1")["paths"].(map[string]any)
	for _, p := range []string{"/api/v1/namespaces/{namespace}/namespaces", "/api/v1/secrets/{name}", "/api/v1/namespaces/{namespace}/pods/{name}/scale"} {
		if _, ok := paths[p]; ok {
			t.Errorf("unexpected path %s", p)
		}
	}
}

// TestOperations checks every operation of every document: write operations take dryRun,
// fieldManager and fieldValidation (kubectl looks for fieldValidation on PATCH), deletes
// take dryRun, and every resource operation names its kind.
func TestOperations(t *testing.T) {
	wantParams := map[string][]string{
		"post":   {"dryRun", "fieldManager", "fieldValidation"},
		"put":    {"dryRun", "fieldManager", "fieldValidation"},
		"patch":  {"dryRun", "fieldManager", "fieldValidation", "force"},
		"delete": {"dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents", "propagationPolicy"},
	}
	deleteCollection := []string{"continue", "dryRun", "fieldSelector", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
		"labelSelector", "limit", "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds"}
	count := 0
	for gvPath := range mustBuild(t).Paths {
		custom := strings.Contains(gvPath, "example.com")
		for p, v := range document(t, gvPath)["paths"].(map[string]any) {
			for method, op := range v.(map[string]any) {
				if method == "parameters" {
					continue
				}
				count++
				o := op.(map[string]any)
				at := gvPath + " " + method + " " + p
				if strings.HasSuffix(p, "/") {
					continue // getAPIResources
				}
				gvk, ok := o["x-kubernetes-group-version-kind"].(map[string]any)
				if !ok || gvk["kind"] == "" {
					t.Errorf("%s: no x-kubernetes-group-version-kind", at)
				}
				want := wantParams[method]
				if o["x-kubernetes-action"] == "deletecollection" {
					want = deleteCollection
				}
				if got := paramNames(o["parameters"]); want != nil && !reflect.DeepEqual(got, want) {
					t.Errorf("%s: parameters %v, want %v", at, got, want)
				}
				if method == "patch" {
					content := o["requestBody"].(map[string]any)["content"].(map[string]any)
					_, smp := content["application/strategic-merge-patch+json"]
					if smp == custom {
						t.Errorf("%s: strategic merge patch offered=%v for custom=%v", at, smp, custom)
					}
					if _, ok := content["application/merge-patch+json"]; !ok {
						t.Errorf("%s: no merge patch", at)
					}
				}
			}
		}
	}
	if count < 100 {
		t.Fatalf("only %d operations", count)
	}
}

func TestParameterText(t *testing.T) {
	paths := document(t, "api/v1")["paths"].(map[string]any)
	op := paths["/api/v1/namespaces/{namespace}/resourcequotas/{name}"].(map[string]any)["patch"].(map[string]any)["parameters"].([]any)[2]
	got, _ := json.Marshal(op)
	want := `{"description":"fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.","in":"query","name":"fieldValidation","schema":{"type":"string","uniqueItems":true}}`
	if string(got) != want {
		t.Fatalf("fieldValidation parameter:\n got %s\nwant %s", got, want)
	}
}

// TestIndex checks the /openapi/v3 index against kube-openapi's own type: every
// group-version is listed and its hash is the uppercase hex SHA-512 of the document.
func TestIndex(t *testing.T) {
	docs := mustBuild(t)
	var index handler3.OpenAPIV3Discovery
	if err := json.Unmarshal(docs.Index, &index); err != nil {
		t.Fatal(err)
	}
	want := []string{"api/v1", "apis/apiextensions.k8s.io/v1", "apis/apps/v1", "apis/batch/v1",
		"apis/scheduling.k8s.io/v1", "apis/stable.example.com/v1", "apis/storage.k8s.io/v1"}
	var got []string
	for p := range index.Paths {
		got = append(got, p)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("index paths %v, want %v", got, want)
	}
	for p, entry := range index.Paths {
		doc := docs.Paths[p]
		sum := sha512.Sum512(doc.JSON)
		hash := strings.ToUpper(hex.EncodeToString(sum[:]))
		if doc.Hash != hash {
			t.Errorf("%s: Hash %s, want %s", p, doc.Hash, hash)
		}
		if want := "/openapi/v3/" + p + "?hash=" + hash; entry.ServerRelativeURL != want {
			t.Errorf("%s: serverRelativeURL %s, want %s", p, entry.ServerRelativeURL, want)
		}
	}
	if !strings.HasPrefix(string(docs.Index), `{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=`) {
		t.Errorf("index shape: %.80s", docs.Index)
	}
	if docs.IndexHash != Hash(docs.Index) {
		t.Error("IndexHash does not match Index")
	}
}

func TestDeterministic(t *testing.T) {
	first := mustBuild(t)
	rs := served()
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	second, err := Build(rs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Index, second.Index) {
		t.Fatal("index differs between builds")
	}
	for p, d := range first.Paths {
		if !bytes.Equal(d.JSON, second.Paths[p].JSON) {
			t.Errorf("%s differs between builds", p)
		}
	}
}

// TestCustomResourceChange checks that changing one CRD changes only its document.
func TestCustomResourceChange(t *testing.T) {
	before := mustBuild(t)
	rs := served()
	cr := &rs[len(rs)-1]
	cr.CRDSchema.Properties["spec"].Properties["schedule"] = cr.CRDSchema.Properties["spec"].Properties["cronSpec"]
	after, err := Build(rs)
	if err != nil {
		t.Fatal(err)
	}
	for p, d := range before.Paths {
		changed := d.Hash != after.Paths[p].Hash
		if changed != (p == "apis/stable.example.com/v1") {
			t.Errorf("%s: changed=%v", p, changed)
		}
	}
	if bytes.Equal(before.Index, after.Index) {
		t.Error("index did not change")
	}
}

func TestBuildErrors(t *testing.T) {
	pods := served()[2]
	tests := []struct {
		name      string
		resources []Resource
		want      string
	}{
		{"no kind", []Resource{{Plural: "x", GVK: schema.GroupVersionKind{Version: "v1"}}}, `resource "x" has no kind or version`},
		{"bad plural", []Resource{{Plural: "a/b", GVK: schema.GroupVersionKind{Version: "v1", Kind: "A"}}}, `invalid plural "a/b"`},
		{"list type missing", []Resource{{Plural: "pods", GVK: pods.GVK, Type: pods.Type}}, "needs struct Type and ListType"},
		{"twice", []Resource{pods, pods}, "listed twice"},
		{"kind twice", []Resource{pods, func() Resource { r := pods; r.Plural = "pods2"; return r }()}, "served by two resources"},
		{"subresource", []Resource{func() Resource { r := pods; r.Subresources = []string{"log"}; return r }()}, `unsupported subresource "log"`},
		{"not a struct", []Resource{{Plural: "x", GVK: corev1.SchemeGroupVersion.WithKind("X"), Type: reflect.TypeFor[string](), ListType: reflect.TypeFor[string]()}}, "needs struct Type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.resources)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		gv           schema.GroupVersion
		opGV, tag    string
		noun, prefix string
	}{
		{schema.GroupVersion{Version: "v1"}, "CoreV1", "core_v1", "Pod", " a "},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, "AppsV1", "apps_v1", "Endpoints", " "},
		{schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1beta1"}, "RbacAuthorizationV1beta1", "rbacAuthorization_v1beta1", "Ingress", " an "},
		{schema.GroupVersion{Group: "stable.example.com", Version: "v1"}, "StableExampleComV1", "stableExampleCom_v1", "Class", " a "},
	}
	for _, tt := range tests {
		p := newPathBuilder(tt.gv, &queryParams{})
		if got := p.opGV(); got != tt.opGV {
			t.Errorf("opGV(%v) = %s, want %s", tt.gv, got, tt.opGV)
		}
		if got := p.tag(); got != tt.tag {
			t.Errorf("tag(%v) = %s, want %s", tt.gv, got, tt.tag)
		}
		if got := article(tt.noun); got != tt.prefix {
			t.Errorf("article(%s) = %q, want %q", tt.noun, got, tt.prefix)
		}
	}
	if got := customResourceName(schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}); got != "com.example.stable.v1.CronTab" {
		t.Errorf("customResourceName = %s", got)
	}
}

// TestBuilderReuse checks that a Builder gives the same documents as Build and re-encodes
// only the group-versions whose resources changed.
func TestBuilderReuse(t *testing.T) {
	b := NewBuilder()
	first, err := b.Build(served())
	if err != nil {
		t.Fatal(err)
	}
	fresh := mustBuild(t)
	if !bytes.Equal(first.Index, fresh.Index) {
		t.Fatal("Builder.Build differs from Build")
	}

	// A changed CRD schema, and a new custom resource group.
	rs := served()
	cr := &rs[len(rs)-1]
	cr.CRDSchema.Properties["spec"].Properties["schedule"] = cr.CRDSchema.Properties["spec"].Properties["cronSpec"]
	widget := crontabs()
	widget.GVK = schema.GroupVersionKind{Group: "widgets.example.org", Version: "v1alpha1", Kind: "Widget"}
	widget.Plural, widget.Namespaced, widget.CRDSchema = "widgets", false, nil
	rs = append(rs, widget)
	second, err := b.Build(rs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(rs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(second.Index, again.Index) {
		t.Fatal("cached rebuild differs from a fresh Build")
	}
	for p, d := range second.Paths {
		reused := false
		if old, ok := first.Paths[p]; ok && len(old.JSON) > 0 && &old.JSON[0] == &d.JSON[0] {
			reused = true
		}
		wantReused := !strings.Contains(p, "example.")
		if reused != wantReused {
			t.Errorf("%s: reused=%v, want %v", p, reused, wantReused)
		}
	}
	if _, ok := second.Paths["apis/widgets.example.org/v1alpha1"]; !ok {
		t.Error("new group missing")
	}

	// Removing the group drops its document.
	third, err := b.Build(rs[:len(rs)-1])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := third.Paths["apis/widgets.example.org/v1alpha1"]; ok {
		t.Error("removed group still served")
	}
}
