package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	kubeproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/util/proto/validation"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// builtV2 caches one BuildV2 of the fixture for the read-only tests.
var builtV2 = sync.OnceValues(func() (*V2, error) { return BuildV2(served()) })

func mustBuildV2(t testing.TB) *V2 {
	t.Helper()
	d, err := builtV2()
	if err != nil {
		t.Fatalf("BuildV2: %v", err)
	}
	return d
}

// v2Document returns the parsed JSON of the fixture's /openapi/v2.
func v2Document(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustBuildV2(t).JSON, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	defs   = "definitions/"
	coreV2 = defs + "io.k8s.api.core.v1."
	metaV2 = defs + "io.k8s.apimachinery.pkg.apis.meta.v1."
	refV2  = "#/definitions/"
)

func TestV2Document(t *testing.T) {
	const (
		pcs  = "paths/~/apis/scheduling.k8s.io/v1/priorityclasses"
		pc   = "paths/~/apis/scheduling.k8s.io/v1/priorityclasses/{name}"
		pods = "paths/~/api/v1/namespaces/{namespace}/pods"
		pod  = "paths/~/api/v1/namespaces/{namespace}/pods/{name}"
		ct   = "paths/~/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"
	)
	tests := []struct {
		name string
		path string
		want string // JSON; empty means the path must be absent
	}{
		{"swagger version", "swagger", `"2.0"`},
		{"security", "security", `[{"BearerToken":[]}]`},
		{"security definition", "securityDefinitions/BearerToken",
			`{"description":"Bearer Token authentication","in":"header","name":"authorization","type":"apiKey"}`},

		// Definitions: the v3 walk in the Swagger 2.0 dialect.
		{"ref with description beside it", defs + "io.k8s.api.scheduling.v1.PriorityClass/properties/metadata",
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta","description":"metadata is the standard object metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}`},
		{"no enforced default", defs + "io.k8s.api.scheduling.v1.PriorityClass/properties/value",
			`{"description":"value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.","format":"int32","type":"integer"}`},
		{"value is optional (+optional marker)", defs + "io.k8s.api.scheduling.v1.PriorityClass/required", ``},
		{"kind gvk", defs + "io.k8s.api.scheduling.v1.PriorityClass/x-kubernetes-group-version-kind",
			`[{"group":"scheduling.k8s.io","kind":"PriorityClass","version":"v1"}]`},
		{"list gvk", defs + "io.k8s.api.scheduling.v1.PriorityClassList/x-kubernetes-group-version-kind",
			`[{"group":"scheduling.k8s.io","kind":"PriorityClassList","version":"v1"}]`},
		{"containers items are a plain ref", coreV2 + "PodSpec/properties/containers/items", `{"$ref":"#/definitions/io.k8s.api.core.v1.Container"}`},
		{"containers merge strategy", coreV2 + "PodSpec/properties/containers/x-kubernetes-patch-strategy", `"merge"`},
		{"containers merge key", coreV2 + "PodSpec/properties/containers/x-kubernetes-patch-merge-key", `"name"`},
		{"containers list type", coreV2 + "PodSpec/properties/containers/x-kubernetes-list-type", `"map"`},
		{"retainKeys beside a ref", defs + "io.k8s.api.apps.v1.DeploymentSpec/properties/strategy",
			`{"$ref":"#/definitions/io.k8s.api.apps.v1.DeploymentStrategy","description":"The deployment strategy to use to replace existing pods with new ones.","x-kubernetes-patch-strategy":"retainKeys"}`},
		{"Quantity is a string", defs + "io.k8s.apimachinery.pkg.api.resource.Quantity/type", `"string"`},
		{"Quantity has no oneOf", defs + "io.k8s.apimachinery.pkg.api.resource.Quantity/oneOf", ``},
		{"IntOrString", defs + "io.k8s.apimachinery.pkg.util.intstr.IntOrString", `{"format":"int-or-string","type":"string"}`},
		{"quota hard", coreV2 + "ResourceQuotaSpec/properties/hard/additionalProperties", `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}`},
		{"Time", metaV2 + "Time", `{"format":"date-time","type":"string"}`},
		{"labels values have no default", metaV2 + "ObjectMeta/properties/labels/additionalProperties", `{"type":"string"}`},
		{"container name required", coreV2 + "Container/required", `["name"]`},
		{"serviceName optional (+optional marker)", defs + "io.k8s.api.apps.v1.StatefulSetSpec/required", `["selector","template"]`},
		{"deployment spec required (+required marker)", defs + "io.k8s.api.apps.v1.Deployment/required", `["spec"]`},
		{"DeleteOptions gvk", metaV2 + "DeleteOptions/x-kubernetes-group-version-kind/0", `{"group":"","kind":"DeleteOptions","version":"v1"}`},
		{"JSON is any value", defs + "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON", `{}`},

		// Custom resources, reduced as the apiextensions-apiserver does for v2.
		{"CR metadata", defs + "com.example.stable.v1.CronTab/properties/metadata",
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta","description":"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}`},
		{"CR int-or-string loses anyOf", defs + "com.example.stable.v1.CronTab/properties/spec/properties/size", `{"x-kubernetes-int-or-string":true}`},
		{"CR preserved status loses its type", defs + "com.example.stable.v1.CronTab/properties/status", `{"x-kubernetes-preserve-unknown-fields":true}`},
		{"CR list keys kept", defs + "com.example.stable.v1.CronTab/properties/spec/properties/ports/x-kubernetes-list-map-keys", `["name"]`},
		{"CR gvk", defs + "com.example.stable.v1.CronTab/x-kubernetes-group-version-kind", `[{"group":"stable.example.com","kind":"CronTab","version":"v1"}]`},
		{"CR list items", defs + "com.example.stable.v1.CronTabList/properties/items/items", `{"$ref":"#/definitions/com.example.stable.v1.CronTab"}`},
		{"CR list metadata", defs + "com.example.stable.v1.CronTabList/properties/metadata",
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta","description":"Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}`},

		// Paths: the v3 operations in Swagger 2.0 form.
		{"create consumes", pcs + "/post/consumes", `["*/*"]`},
		{"create produces", pcs + "/post/produces", `["application/json","application/yaml"]`},
		{"create schemes", pcs + "/post/schemes", `["https"]`},
		{"create body first", pcs + "/post/parameters/0",
			`{"in":"body","name":"body","required":true,"schema":{"$ref":"#/definitions/io.k8s.api.scheduling.v1.PriorityClass"}}`},
		{"create fieldValidation", pcs + "/post/parameters/3/name", `"fieldValidation"`},
		{"create fieldValidation is a query string", pcs + "/post/parameters/3/type", `"string"`},
		{"create responses", pcs + "/post/responses/201",
			`{"description":"Created","schema":{"$ref":"#/definitions/io.k8s.api.scheduling.v1.PriorityClass"}}`},
		{"unauthorized", pcs + "/post/responses/401", `{"description":"Unauthorized"}`},
		{"create gvk", pcs + "/post/x-kubernetes-group-version-kind", `{"group":"scheduling.k8s.io","kind":"PriorityClass","version":"v1"}`},
		{"create action", pcs + "/post/x-kubernetes-action", `"post"`},
		{"create operation", pcs + "/post/operationId", `"createSchedulingV1PriorityClass"`},
		{"list produces watch", pcs + "/get/produces", `["application/json","application/yaml","application/json;stream=watch"]`},
		{"path parameter", pc + "/parameters/0",
			`{"description":"name of the PriorityClass","in":"path","name":"name","required":true,"type":"string","uniqueItems":true}`},
		{"pretty", pc + "/parameters/1/name", `"pretty"`},
		{"delete body is optional", pc + "/delete/parameters/0",
			`{"in":"body","name":"body","schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"}}`},
		{"namespace parameter", pods + "/parameters/0",
			`{"description":"object name and auth scope, such as for teams and projects","in":"path","name":"namespace","required":true,"type":"string","uniqueItems":true}`},
		{"built-in patch consumes", pod + "/patch/consumes",
			`["application/json-patch+json","application/merge-patch+json","application/strategic-merge-patch+json","application/apply-patch+yaml"]`},
		{"patch body", pod + "/patch/parameters/0",
			`{"in":"body","name":"body","required":true,"schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}`},
		{"custom resource patch consumes", ct + "/patch/consumes",
			`["application/json-patch+json","application/merge-patch+json","application/apply-patch+yaml"]`},
		{"scale", ct + "/scale/get/responses/200/schema", `{"$ref":"#/definitions/io.k8s.api.autoscaling.v1.Scale"}`},
		{"discovery consumes what it produces", "paths/~/apis/apps/v1//get/consumes", `["application/json","application/yaml"]`},
	}
	doc := v2Document(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := lookupV2(doc, tt.path)
			expectAt(t, tt.path, got, ok, tt.want)
		})
	}
}

// lookupV2 is lookup where a "~" segment means: the rest, up to the next segment naming
// an HTTP method or "parameters", is one key (a URL path).
func lookupV2(doc map[string]any, path string) (any, bool) {
	before, rest, ok := strings.Cut(path, "/~")
	if !ok {
		return lookup(doc, path)
	}
	v, ok := lookup(doc, before)
	if !ok {
		return nil, false
	}
	segs := strings.Split(rest, "/")
	end := len(segs)
	for i := 1; i < len(segs); i++ {
		switch segs[i] {
		case "get", "post", "put", "patch", "delete", "parameters":
			if i+1 < len(segs) || segs[i] == "parameters" {
				end = i
			}
		}
		if end != len(segs) {
			break
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if v, ok = m[strings.Join(segs[:end], "/")]; !ok {
		return nil, false
	}
	if end == len(segs) {
		return v, true
	}
	return lookup(v, strings.Join(segs[end:], "/"))
}

// TestV2MatchesV3 checks that /openapi/v2 has exactly the operations, parameters and
// response schemas of the /openapi/v3 documents, and every schema they have.
func TestV2MatchesV3(t *testing.T) {
	v2 := v2Document(t)
	v2Paths := v2["paths"].(map[string]any)
	v2Defs := v2["definitions"].(map[string]any)
	seen := map[string]bool{}
	for gvPath := range mustBuild(t).Paths {
		v3 := document(t, gvPath)
		for name := range v3["components"].(map[string]any)["schemas"].(map[string]any) {
			if _, ok := v2Defs[name]; !ok {
				t.Errorf("%s: schema %s is not in /openapi/v2", gvPath, name)
			}
		}
		for p, item := range v3["paths"].(map[string]any) {
			seen[p] = true
			item2, ok := v2Paths[p].(map[string]any)
			if !ok {
				t.Errorf("path %s is not in /openapi/v2", p)
				continue
			}
			item := item.(map[string]any)
			if len(item) != len(item2) {
				t.Errorf("%s: v3 has %d entries, v2 %d", p, len(item), len(item2))
			}
			if got, want := paramKeys(item2["parameters"], false), paramKeys(item["parameters"], false); got != want {
				t.Errorf("%s: path parameters %s, v3 has %s", p, got, want)
			}
			for method, op := range item {
				if method == "parameters" {
					continue
				}
				op := op.(map[string]any)
				op2, ok := item2[method].(map[string]any)
				if !ok {
					t.Errorf("%s %s is not in /openapi/v2", method, p)
					continue
				}
				for _, k := range []string{"operationId", "description", "tags", "x-kubernetes-action", "x-kubernetes-group-version-kind"} {
					if !reflect.DeepEqual(op[k], op2[k]) {
						t.Errorf("%s %s: %s %v, v3 has %v", method, p, k, op2[k], op[k])
					}
				}
				want := paramKeys(op["parameters"], op["requestBody"] != nil)
				if got := paramKeys(op2["parameters"], false); got != want {
					t.Errorf("%s %s: parameters %s, v3 has %s", method, p, got, want)
				}
				for code, res := range op["responses"].(map[string]any) {
					res2, ok := op2["responses"].(map[string]any)[code].(map[string]any)
					if !ok {
						t.Errorf("%s %s: no response %s", method, p, code)
						continue
					}
					want := ""
					if content, ok := res.(map[string]any)["content"].(map[string]any); ok {
						for _, mt := range content {
							want = strings.Replace(mt.(map[string]any)["schema"].(map[string]any)["$ref"].(string), refPrefix, refV2, 1)
						}
					}
					got, _ := lookup(res2, "schema/$ref")
					if got == nil {
						got = ""
					}
					if got != want {
						t.Errorf("%s %s %s: schema %v, want %s", method, p, code, got, want)
					}
				}
			}
		}
	}
	for p := range v2Paths {
		if !seen[p] {
			t.Errorf("path %s is only in /openapi/v2", p)
		}
	}
}

// paramKeys lists "in:name" of parameters, with the body first when body is set.
func paramKeys(params any, body bool) string {
	var names []string
	if body {
		names = append(names, "body:body")
	}
	list, _ := params.([]any)
	for _, p := range list {
		p := p.(map[string]any)
		names = append(names, p["in"].(string)+":"+p["name"].(string))
	}
	return strings.Join(names, ",")
}

// TestV2References checks that every reference resolves and none uses the v3 prefix, and
// that no v3-only keyword is left in a definition.
func TestV2References(t *testing.T) {
	doc := v2Document(t)
	definitions := doc["definitions"].(map[string]any)
	refs := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch {
				case k == "$ref" && !strings.HasSuffix(path, "/properties"):
					refs++
					name, ok := strings.CutPrefix(x.(string), refV2)
					if _, found := definitions[name]; !ok || !found {
						t.Errorf("%s: dangling reference %v", path, x)
					}
				case strings.HasPrefix(path, "/definitions/") && !strings.HasSuffix(path, "/properties") &&
					(k == "oneOf" || k == "anyOf" || k == "allOf" || k == "nullable" || k == "default"):
					t.Errorf("%s: v3 keyword %s", path, k)
				}
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(path+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("", doc)
	if refs < 1000 {
		t.Errorf("only %d references", refs)
	}
	if bytes.Contains(mustBuildV2(t).JSON, []byte("#/components/")) {
		t.Error("a v3 reference is left")
	}
}

// TestV2Proto checks the protobuf encoding: it is the JSON document as gnostic reads it,
// and client-go's discovery client fetches and decodes it from the handler.
func TestV2Proto(t *testing.T) {
	d := mustBuildV2(t)
	want, err := openapi_v2.ParseDocument(d.JSON)
	if err != nil {
		t.Fatal(err)
	}
	var got openapi_v2.Document
	if err := proto.Unmarshal(d.Proto, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Fatal("the protobuf document differs from the JSON document")
	}
	again, err := BuildV2(served())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.JSON, d.JSON) || !bytes.Equal(again.Proto, d.Proto) || again.Hash != d.Hash {
		t.Fatal("BuildV2 is not deterministic")
	}
	if d.Hash != Hash(d.JSON) {
		t.Fatal("Hash is not the hash of JSON")
	}
}

// discoveredModels fetches /openapi/v2 with client-go from a server running the handler
// and parses it as kubectl does, returning the models and the model of every kind.
func discoveredModels(t *testing.T, d *V2) (kubeproto.Models, map[schema.GroupVersionKind]string) {
	t.Helper()
	var accept []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi/v2" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		accept = append(accept, r.Header.Get("Accept"))
		mu.Unlock()
		d.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	if len(accept) != 1 || accept[0] != ProtoV2MediaType {
		t.Fatalf("client-go sent Accept %q", accept)
	}
	if doc.GetSwagger() != "2.0" || len(doc.GetDefinitions().GetAdditionalProperties()) == 0 {
		t.Fatalf("decoded document: swagger %q with %d definitions", doc.GetSwagger(), len(doc.GetDefinitions().GetAdditionalProperties()))
	}
	models, err := kubeproto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kubectl's parser refuses the document: %v", err)
	}
	kinds := map[schema.GroupVersionKind]string{}
	for _, name := range models.ListModels() {
		ext, _ := models.LookupModel(name).GetExtensions()[extGVK].([]any)
		for _, e := range ext {
			m, ok := e.(map[any]any)
			if !ok {
				t.Fatalf("%s: gvk extension entry %T", name, e)
			}
			gvk := schema.GroupVersionKind{Group: m["group"].(string), Version: m["version"].(string), Kind: m["kind"].(string)}
			kinds[gvk] = name
		}
	}
	return models, kinds
}

func TestV2ClientGoDiscovery(t *testing.T) {
	_, kinds := discoveredModels(t, mustBuildV2(t))
	rs, err := resolve(served())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		obj, list := r.names()
		if kinds[r.gvk] != obj || kinds[r.listGVK] != list {
			t.Errorf("%v: models %q and %q, want %q and %q", r.gvk, kinds[r.gvk], kinds[r.listGVK], obj, list)
		}
	}
}

// TestV2Validation validates objects with kubectl's validator (kube-openapi's
// proto/validation on the document client-go decoded), as kubectl create does for the
// items of a kind: List.
func TestV2Validation(t *testing.T) {
	models, kinds := discoveredModels(t, mustBuildV2(t))
	tests := []struct {
		name string
		obj  string // YAML
		want []string
	}{
		{name: "priority class", obj: `{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000000}`},
		{name: "priority class without value", obj: `{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, globalDefault: false, description: x, preemptionPolicy: Never}`},
		{name: "priority class unknown field", obj: `{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1, valeu: 2}`,
			want: []string{`ValidationError(PriorityClass): unknown field "valeu" in io.k8s.api.scheduling.v1.PriorityClass`}},
		{name: "priority class wrong type", obj: `{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: high}`,
			want: []string{`ValidationError(PriorityClass.value): invalid type for io.k8s.api.scheduling.v1.PriorityClass.value: got "string", expected "integer"`}},
		{name: "scoped quota", obj: `
apiVersion: v1
kind: ResourceQuota
metadata: {name: pods-high}
spec:
  hard: {cpu: "1000", memory: 200Gi, pods: "10", requests.nvidia.com/gpu: 4}
  scopeSelector:
    matchExpressions:
    - {operator: In, scopeName: PriorityClass, values: ["high"]}
  scopes: [NotTerminating]`},
		{name: "quota selector requirement without operator", obj: `
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {scopeSelector: {matchExpressions: [{scopeName: PriorityClass, values: ["high"]}]}}`,
			want: []string{`ValidationError(ResourceQuota.spec.scopeSelector.matchExpressions[0]): missing required field "operator" in io.k8s.api.core.v1.ScopedResourceSelectorRequirement`}},
		{name: "quota unknown spec field", obj: `{apiVersion: v1, kind: ResourceQuota, metadata: {name: q}, spec: {hrad: {pods: "1"}}}`,
			want: []string{`ValidationError(ResourceQuota.spec): unknown field "hrad" in io.k8s.api.core.v1.ResourceQuotaSpec`}},
		{name: "limit range", obj: `
apiVersion: v1
kind: LimitRange
metadata: {name: l}
spec: {limits: [{type: Container, default: {cpu: 500m}, defaultRequest: {memory: 1Gi}, max: {cpu: 2}}]}`},
		{name: "pod", obj: `
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: a}, annotations: {x: y}}
spec:
  priorityClassName: high
  containers:
  - name: c
    image: nginx
    ports: [{containerPort: 80, protocol: TCP}]
    resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: "500m"}}
    env: [{name: A, value: b}, {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    readinessProbe: {httpGet: {port: 80, path: /}, periodSeconds: 5}
  tolerations: [{key: k, operator: Exists, effect: NoSchedule}]`},
		{name: "pod container without name", obj: `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{image: nginx}]}}`,
			want: []string{`ValidationError(Pod.spec.containers[0]): missing required field "name" in io.k8s.api.core.v1.Container`}},
		{name: "deployment with int-or-string", obj: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 2
  selector: {matchLabels: {app: d}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}}
  template:
    metadata: {labels: {app: d}}
    spec: {containers: [{name: n, image: nginx}]}`},
		{name: "statefulset without serviceName", obj: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  selector: {matchLabels: {app: s}}
  template: {metadata: {labels: {app: s}}, spec: {containers: [{name: n, image: nginx}]}}`},
		{name: "job", obj: `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {backoffLimit: 2, template: {spec: {restartPolicy: Never, containers: [{name: n, image: busybox, command: [sh, -c, "true"]}]}}}`},
		{name: "custom resource", obj: `
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: c}
spec: {cronSpec: "* * * * *", replicas: 2, size: 50%, ports: [{name: a, port: 1}]}
status: {anything: [1, 2], goes: {here: true}}`},
		{name: "custom resource unknown field", obj: `{apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: c}, spec: {cronSpec: x, image: y}}`,
			want: []string{`ValidationError(CronTab.spec): unknown field "image" in com.example.stable.v1.CronTab.spec`}},
		{name: "custom resource missing required", obj: `{apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: c}, spec: {ports: [{port: 1}]}}`,
			want: []string{`ValidationError(CronTab.spec.ports[0]): missing required field "name" in com.example.stable.v1.CronTab.spec.ports`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(tt.obj), &obj); err != nil {
				t.Fatal(err)
			}
			gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
			if err != nil {
				t.Fatal(err)
			}
			gvk := gv.WithKind(obj["kind"].(string))
			model := models.LookupModel(kinds[gvk])
			if model == nil {
				t.Fatalf("no model for %v", gvk)
			}
			var got []string
			for _, err := range validation.ValidateModel(obj, model, gvk.Kind) {
				got = append(got, err.Error())
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestV2ServeHTTP(t *testing.T) {
	d := mustBuildV2(t)
	etag := strconv.Quote(d.Hash)
	tests := []struct {
		name       string
		method     string
		header     map[string]string
		code       int
		body       []byte
		wantHeader map[string]string
	}{
		{name: "json by default", code: 200, body: d.JSON,
			wantHeader: map[string]string{"Content-Type": "application/json", "Etag": etag, "Vary": "Accept"}},
		{name: "protobuf for client-go", header: map[string]string{"Accept": ProtoV2MediaType}, code: 200, body: d.Proto,
			wantHeader: map[string]string{"Content-Type": ProtoV2ContentType, "Etag": etag, "Vary": "Accept"}},
		{name: "protobuf, dotted spelling", header: map[string]string{"Accept": ProtoV2ContentType}, code: 200, body: d.Proto,
			wantHeader: map[string]string{"Content-Type": ProtoV2ContentType}},
		{name: "json", header: map[string]string{"Accept": "application/json"}, code: 200, body: d.JSON},
		{name: "wildcard", header: map[string]string{"Accept": "*/*"}, code: 200, body: d.JSON},
		{name: "application wildcard", header: map[string]string{"Accept": "application/*"}, code: 200, body: d.JSON},
		{name: "preference by quality", header: map[string]string{"Accept": "application/json;q=0.5, " + ProtoV2MediaType}, code: 200, body: d.Proto},
		{name: "specific before wildcard", header: map[string]string{"Accept": "*/*, " + ProtoV2MediaType}, code: 200, body: d.Proto},
		{name: "refusal", header: map[string]string{"Accept": ProtoV2MediaType + ";q=0, application/json"}, code: 200, body: d.JSON},
		{name: "unacceptable", header: map[string]string{"Accept": "text/html"}, code: 406, body: []byte{}},
		{name: "v3 protobuf is not served", header: map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, code: 406},
		{name: "etag revalidation", header: map[string]string{"If-None-Match": etag}, code: 304},
		{name: "protobuf revalidation", header: map[string]string{"Accept": ProtoV2MediaType, "If-None-Match": etag}, code: 304},
		{name: "stale etag", header: map[string]string{"If-None-Match": `"OUTDATED"`}, code: 200, body: d.JSON},
		{name: "head", method: "HEAD", code: 200, body: []byte{}, wantHeader: map[string]string{"Content-Length": strconv.Itoa(len(d.JSON))}},
		{name: "post", method: "POST", code: 405, wantHeader: map[string]string{"Allow": "GET, HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, "/openapi/v2", nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			d.ServeHTTP(rec, req)
			if rec.Code != tt.code {
				t.Fatalf("code %d, want %d (%s)", rec.Code, tt.code, rec.Body.String())
			}
			if tt.body != nil && !bytes.Equal(rec.Body.Bytes(), tt.body) {
				t.Errorf("body differs (%d bytes, want %d)", rec.Body.Len(), len(tt.body))
			}
			for k, v := range tt.wantHeader {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestV2BuilderCache checks that a Builder reuses its /openapi/v2 document until a
// resource changes, and that the rebuilt document has the change.
func TestV2BuilderCache(t *testing.T) {
	b := NewBuilder()
	first, err := b.BuildV2(served())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Build(served()); err != nil { // v3 builds share the Builder
		t.Fatal(err)
	}
	same, err := b.BuildV2(served())
	if err != nil {
		t.Fatal(err)
	}
	if same != first {
		t.Fatal("unchanged resources rebuilt the document")
	}
	changed := served()
	ct := &changed[len(changed)-1]
	ct.CRDSchema.Properties["spec"].Properties["image"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	rebuilt, err := b.BuildV2(changed)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt == first || rebuilt.Hash == first.Hash {
		t.Fatal("a changed custom resource did not rebuild the document")
	}
	if !bytes.Contains(rebuilt.JSON, []byte(`"image":{"type":"string"}`)) {
		t.Fatal("the rebuilt document lacks the new field")
	}
	if want, _ := BuildV2(changed); !bytes.Equal(want.JSON, rebuilt.JSON) {
		t.Fatal("the cached Builder's document differs from BuildV2")
	}
	withoutCR, err := b.BuildV2(changed[:len(changed)-1])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(withoutCR.JSON, []byte("com.example.stable.v1.CronTab")) {
		t.Fatal("a removed custom resource is still in the document")
	}
}

// TestToSwaggerSchema pins the reduction of CRD schemas for /openapi/v2.
func TestToSwaggerSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"junctors dropped",
			`{"type":"object","anyOf":[{"required":["a"]}],"oneOf":[{}],"allOf":[{}],"not":{},"properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"int-or-string",
			`{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}`,
			`{"x-kubernetes-int-or-string":true}`},
		{"nullable loses type, items and properties",
			`{"type":"object","nullable":true,"description":"d","properties":{"a":{"type":"string"}}}`,
			`{"description":"d"}`},
		{"nullable property is not required",
			`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","nullable":true},"b":{"type":"string"}}}`,
			`{"type":"object","required":["b"],"properties":{"a":{},"b":{"type":"string"}}}`},
		{"nullable additionalProperties clears required",
			`{"type":"object","required":["a"],"additionalProperties":{"type":"string","nullable":true}}`,
			`{"type":"object","additionalProperties":{}}`},
		{"preserve unknown object",
			`{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}}`,
			`{"x-kubernetes-preserve-unknown-fields":true}`},
		{"preserve unknown array",
			`{"type":"array","x-kubernetes-preserve-unknown-fields":true,"items":{"type":"string"}}`,
			`{"x-kubernetes-preserve-unknown-fields":true}`},
		{"nested",
			`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","nullable":true}},"required":["n"]}},"m":{"type":"object","additionalProperties":{"anyOf":[{}],"type":"string"}}}}`,
			`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"n":{}}}},"m":{"type":"object","additionalProperties":{"type":"string"}}}}`},
		{"validations and list types kept",
			`{"type":"array","maxItems":3,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"x-kubernetes-validations":[{"rule":"true"}],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","enum":["a","b"],"default":"a","pattern":"^a"}}}}`,
			`{"type":"array","maxItems":3,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"x-kubernetes-validations":[{"rule":"true"}],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string","enum":["a","b"],"default":"a","pattern":"^a"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in, want map[string]any
			if err := json.Unmarshal([]byte(tt.in), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			toSwaggerSchema(in)
			if !reflect.DeepEqual(in, want) {
				got, _ := json.Marshal(in)
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestV2CustomResourceWithoutSchema checks that a custom resource without a schema, or
// preserving unknown fields at its root, is published as a bare object, so kubectl's v2
// validation accepts any field.
func TestV2CustomResourceWithoutSchema(t *testing.T) {
	noSchema := crontabs()
	noSchema.CRDSchema = nil
	preserving := crontabs()
	preserving.CRDSchema = &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true),
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}}}
	for name, r := range map[string]Resource{"no schema": noSchema, "preserving": preserving} {
		t.Run(name, func(t *testing.T) {
			d, err := BuildV2([]Resource{r})
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(d.JSON, &doc); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(doc["definitions"].(map[string]any)["com.example.stable.v1.CronTab"])
			want := `{"type":"object","x-kubernetes-group-version-kind":[{"group":"stable.example.com","kind":"CronTab","version":"v1"}]}`
			if string(got) != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestV2Golden pins the scheduling.k8s.io and stable.example.com parts of /openapi/v2
// (their paths and definitions, indented for review). Run with -update after an intended
// change.
func TestV2Golden(t *testing.T) {
	doc := v2Document(t)
	part := map[string]any{"paths": map[string]any{}, "definitions": map[string]any{}}
	for p, item := range doc["paths"].(map[string]any) {
		if strings.HasPrefix(p, "/apis/scheduling.k8s.io/") || strings.HasPrefix(p, "/apis/stable.example.com/") {
			part["paths"].(map[string]any)[p] = item
		}
	}
	for name, s := range doc["definitions"].(map[string]any) {
		if strings.HasPrefix(name, "io.k8s.api.scheduling.") || strings.HasPrefix(name, "com.example.stable.") {
			part["definitions"].(map[string]any)[name] = s
		}
	}
	for k, v := range doc {
		if k != "paths" && k != "definitions" {
			part[k] = v
		}
	}
	got, err := json.MarshalIndent(part, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	quotatest.GoldenFile(t, "openapi_v2_part.json", string(got))
}

// TestEmbeddedResource checks the properties a custom resource's embedded resources get in
// both dialects, and that kubectl's v2 validation accepts an embedded object.
func TestEmbeddedResource(t *testing.T) {
	r := crontabs()
	r.CRDSchema.Properties["spec"].Properties["template"] = apiextensionsv1.JSONSchemaProps{
		Type: "object", XEmbeddedResource: true, Required: []string{"spec"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptr(true)}},
	}
	r.CRDSchema.Properties["spec"].Properties["raw"] = apiextensionsv1.JSONSchemaProps{
		Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr(true),
	}
	const (
		apiVersion = `{"description":"apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources","type":"string"}`
		metaDesc   = `"description":"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"`
	)
	v3, err := Build([]Resource{r})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := BuildV2([]Resource{r})
	if err != nil {
		t.Fatal(err)
	}
	var v3Doc, v2Doc map[string]any
	if err := json.Unmarshal(v3.Paths["apis/stable.example.com/v1"].JSON, &v3Doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v2.JSON, &v2Doc); err != nil {
		t.Fatal(err)
	}
	const (
		v3Spec = "components/schemas/com.example.stable.v1.CronTab/properties/spec/properties/"
		v2Spec = "definitions/com.example.stable.v1.CronTab/properties/spec/properties/"
	)
	tests := []struct {
		name string
		doc  map[string]any
		path string
		want string // JSON; empty means absent
	}{
		{"v3 apiVersion", v3Doc, v3Spec + "template/properties/apiVersion", apiVersion},
		{"v3 metadata", v3Doc, v3Spec + "template/properties/metadata",
			`{"allOf":[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],` + metaDesc + `}`},
		{"v3 required", v3Doc, v3Spec + "template/required", `["spec","kind","apiVersion"]`},
		{"v3 preserving embedded resource", v3Doc, v3Spec + "raw/properties/kind/type", `"string"`},
		{"v2 metadata", v2Doc, v2Spec + "template/properties/metadata",
			`{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",` + metaDesc + `}`},
		{"v2 required", v2Doc, v2Spec + "template/required", `["spec","kind","apiVersion"]`},
		{"v2 preserving embedded resource untouched", v2Doc, v2Spec + "raw",
			`{"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := lookup(tt.doc, tt.path)
			if !ok {
				t.Fatalf("%s: absent", tt.path)
			}
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Fatalf("%s:\n got %s\nwant %s", tt.path, g, tt.want)
			}
		})
	}

	models, kinds := discoveredModels(t, v2)
	model := models.LookupModel(kinds[r.GVK])
	for obj, want := range map[string]string{
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"x":1}},"raw":{"any":"thing"}}}`: "",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"template":{"apiVersion":"v1","spec":{}}}}`:                                                                 `ValidationError(CronTab.spec.template): missing required field "kind" in com.example.stable.v1.CronTab.spec.template`,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(obj), &m); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, err := range validation.ValidateModel(m, model, "CronTab") {
			got = append(got, err.Error())
		}
		if strings.Join(got, "\n") != want {
			t.Errorf("%s:\n got %q\nwant %q", obj, got, want)
		}
	}
}
