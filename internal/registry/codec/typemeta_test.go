package codec

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// customKind is a custom resource's version as registry.Resource describes it to the
// codec: unstructured objects, a schema keeping unknown fields.
type customKind struct {
	gvr  schema.GroupVersionResource
	kind string
}

func (c customKind) GVK() schema.GroupVersionKind        { return c.gvr.GroupVersion().WithKind(c.kind) }
func (c customKind) GroupResource() schema.GroupResource { return c.gvr.GroupResource() }
func (c customKind) New() runtime.Object                 { return &unstructured.Unstructured{} }
func (c customKind) GoType() reflect.Type                { return nil }
func (c customKind) CustomSchema() (*apiextensionsv1.JSONSchemaProps, bool) {
	yes := true
	return &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}, true
}

// TestTypeMetaGolden: bodies whose apiVersion or kind are not the resource's, or that are
// not JSON objects, get kube-apiserver's answers, byte for byte (each taken from
// kube-apiserver v1.37.2 answering the same body as a dry-run create); those its defaults
// make the resource's are decoded.
func TestTypeMetaGolden(t *testing.T) {
	pods := builtinKind(corev1.SchemeGroupVersion.WithResource("pods"), "Pod", corev1.Pod{})
	deployments := builtinKind(appsv1.SchemeGroupVersion.WithResource("deployments"), "Deployment", appsv1.Deployment{})
	widgets := customKind{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget"}
	const pod = `"metadata":{"name":"avp"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	const deployment = `"metadata":{"name":"avd"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	const widget = `"metadata":{"name":"w"}}`
	const unknownConv = " cannot be handled as a Pod: converting "
	for _, tc := range []struct {
		kind Kind
		body string
		yaml bool
		code int32  // 0: decoded
		want string // the message
	}{
		// Built-in kinds: upstream's defaults.
		{kind: pods, body: `{"apiVersion":"/v1","kind":"Pod",` + pod},
		{kind: pods, body: `{"apiVersion":"","kind":"Pod",` + pod},
		{kind: pods, body: `{"apiVersion":"v1","kind":"",` + pod},
		{kind: pods, body: `{` + pod},
		{kind: deployments, body: `{"apiVersion":"apps/","kind":"Deployment",` + deployment},
		{kind: deployments, body: `{"apiVersion":"apps/v1","kind":"Deployment",` + deployment},
		// Not a group/version, not a JSON object with string type fields.
		{kind: pods, body: `{"apiVersion":"a/b/c","kind":"Pod",` + pod, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)`},
		{kind: pods, body: `{"apiVersion":"//","kind":"Pod",` + pod, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): unexpected GroupVersion string: // ({"apiVersion":"//","kind":"Pod ...)`},
		{kind: pods, body: `{"apiVersion":"a/b/c","kind":"",` + pod, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)`},
		{kind: deployments, body: `{"apiVersion":"a/b/c","kind":"Deployment",` + deployment, code: 400,
			want: `the object provided is unrecognized (must be of type Deployment): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)`},
		{kind: pods, body: `{"apiVersion":7,"kind":"Pod",` + pod, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":7,"kind":"Pod"," ...)`},
		{kind: pods, body: `{"apiVersion":"v1","kind":7,` + pod, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"apiVersion":"v1","kind":7,"m ...)`},
		{kind: pods, body: `[1]`, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b315d)`},
		{kind: pods, body: ``, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`},
		{kind: pods, body: `{`, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input ({)`},
		{kind: pods, body: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"avp"},"spec":{"containers":[{"name":"c","image":"nginx"}]}`, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input ({"kind":"Pod","apiVersion":"v1 ...)`},
		{kind: pods, body: "metadata: [\n", yaml: true, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): yaml: line 1: did not find expected node content (6d657461646174613a205b0a)`},
		{kind: pods, body: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: y\n   bad: x\n", yaml: true, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): yaml: line 5: mapping values are not allowed in this context (61706956657273696f6e3a2076310a6b696e643a20506f640a6d65746164 ...)`},
		{kind: pods, body: "apiVersion: a/b/c\nkind: Pod\nmetadata:\n  name: avp\nspec:\n  containers:\n  - name: c\n    image: nginx\n", yaml: true, code: 400,
			want: `the object provided is unrecognized (must be of type Pod): unexpected GroupVersion string: a/b/c (61706956657273696f6e3a20612f622f630a6b696e643a20506f640a6d65 ...)`},
		// A version missing after the defaults.
		{kind: pods, body: `{"apiVersion":"v1/","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "" cannot be handled as a Pod: Object 'apiVersion' is missing in '{"apiVersion":"v1/","kind":"Pod","metadata":{"name":"avp"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}'`},
		{kind: pods, body: `{"apiVersion":"apps/","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "" cannot be handled as a Pod: Object 'apiVersion' is missing in '{"apiVersion":"apps/","kind":"Pod","metadata":{"name":"avp"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}'`},
		// Kinds the scheme does not register for the version.
		{kind: pods, body: `{"apiVersion":"apps/v1","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "v1" cannot be handled as a Pod: no kind "Pod" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: y}\n", yaml: true, code: 400,
			want: `Pod in version "v1" cannot be handled as a Pod: no kind "Pod" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":"v2","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "v2" cannot be handled as a Pod: no kind "Pod" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":"extensions/v1beta1","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "v1beta1" cannot be handled as a Pod: no kind "Pod" is registered for version "extensions/v1beta1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":"a/b","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "b" cannot be handled as a Pod: no kind "Pod" is registered for version "a/b" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":" v1","kind":"Pod",` + pod, code: 400,
			want: `Pod in version " v1" cannot be handled as a Pod: no kind "Pod" is registered for version " v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":"V1","kind":"Pod",` + pod, code: 400,
			want: `Pod in version "V1" cannot be handled as a Pod: no kind "Pod" is registered for version "V1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":"v1","kind":"pod",` + pod, code: 400,
			want: `pod in version "v1" cannot be handled as a Pod: no kind "pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: pods, body: `{"apiVersion":"v1","kind":"Nope",` + pod, code: 400,
			want: `Nope in version "v1" cannot be handled as a Pod: no kind "Nope" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: deployments, body: `{"apiVersion":"apps/v2","kind":"Deployment",` + deployment, code: 400,
			want: `Deployment in version "v2" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps/v2" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: deployments, body: `{"apiVersion":"v1","kind":"Deployment",` + deployment, code: 400,
			want: `Deployment in version "v1" cannot be handled as a Deployment: no kind "Deployment" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: deployments, body: `{"apiVersion":"apps","kind":"Deployment",` + deployment, code: 400,
			want: `Deployment in version "apps" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps" in scheme "pkg/runtime/scheme.go:111"`},
		// Registered kinds that do not convert to the resource's type.
		{kind: pods, body: `{"apiVersion":"v1","kind":"Service",` + pod, code: 400,
			want: `Service in version "v1"` + unknownConv + `(v1.Service) to (core.Pod): unknown conversion`},
		{kind: pods, body: `{"apiVersion":"apps/v1","kind":"Deployment",` + pod, code: 400,
			want: `Deployment in version "v1"` + unknownConv + `(v1.Deployment) to (core.Pod): unknown conversion`},
		{kind: pods, body: `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"i"}}`, code: 400,
			want: `Event in version "v1"` + unknownConv + `(v1.Event) to (core.Pod): unknown conversion`},
		{kind: pods, body: `{"apiVersion":"v1","kind":"Status","metadata":{"name":"i"}}`, code: 400,
			want: `Status in version "v1"` + unknownConv + `(v1.Status) to (core.Pod): unknown conversion`},
		{kind: pods, body: `{"apiVersion":"apps/v1beta1","kind":"Scale"}`, code: 400,
			want: `Scale in version "v1beta1"` + unknownConv + `(v1beta1.Scale) to (core.Pod): unknown conversion`},
		{kind: pods, body: `{"apiVersion":"v1","kind":"Service","spec":7}`, code: 400,
			want: `Service in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Service.spec of type v1.ServiceSpec`},
		// The internal version.
		{kind: pods, body: `{"apiVersion":"__internal","kind":"Pod","metadata":{"name":"i"}}`, code: 400,
			want: `the API version in the data (__internal) does not match the expected API version (v1)`},
		{kind: pods, body: `{"apiVersion":"__internal","kind":"Service","metadata":{"name":"i"}}`, code: 400,
			want: `Service in version "__internal"` + unknownConv + `(core.Service) to (core.Pod): unknown conversion`},
		{kind: pods, body: `{"apiVersion":"__internal","kind":"Nope","metadata":{"name":"i"}}`, code: 400,
			want: `Nope in version "__internal" cannot be handled as a Pod: no kind "Nope" is registered for the internal version of group "" in scheme "pkg/runtime/scheme.go:111"`},
		// Other versions of the same kind: decoded, then refused for their version.
		{kind: deployments, body: `{"apiVersion":"apps/v1beta1","kind":"Deployment",` + deployment, code: 400,
			want: `the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)`},
		{kind: deployments, body: `{"apiVersion":"extensions/v1beta1","kind":"Deployment",` + deployment, code: 400,
			want: `the API version in the data (extensions/v1beta1) does not match the expected API version (apps/v1)`},
		// Custom resources: no defaults.
		{kind: widgets, body: `{"apiVersion":"example.com/v1","kind":"Widget",` + widget},
		{kind: widgets, body: `{"apiVersion":"example.com/v1","kind":"",` + widget, code: 400,
			want: `the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"apiVersion":"example.com/v1","kind":"","metadata":{"name":"w"}}' ({"apiVersion":"example.com/v1" ...)`},
		{kind: widgets, body: `{"apiVersion":"","kind":"",` + widget, code: 400,
			want: `the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"apiVersion":"","kind":"","metadata":{"name":"w"}}' ({"apiVersion":"","kind":"","me ...)`},
		{kind: widgets, body: `{"apiVersion":"example.com/v2","kind":"Widget",` + widget, code: 400,
			want: `the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)`},
		{kind: widgets, body: `{"apiVersion":"example.com/v2","kind":"Gadget",` + widget, code: 400,
			want: `the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)`},
		{kind: widgets, body: `{"apiVersion":"","kind":"Widget",` + widget, code: 400,
			want: `the API version in the data () does not match the expected API version (example.com/v1)`},
		{kind: widgets, body: `{"apiVersion":"example.com/","kind":"Widget",` + widget, code: 400,
			want: `the API version in the data (example.com/) does not match the expected API version (example.com/v1)`},
		{kind: widgets, body: `{"apiVersion":"apps/v1","kind":"Widget",` + widget, code: 400,
			want: `the API version in the data (apps/v1) does not match the expected API version (example.com/v1)`},
		{kind: widgets, body: `{"apiVersion":"a/b/c","kind":"Widget",` + widget, code: 400,
			want: `the object provided is unrecognized (must be of type Widget): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)`},
		{kind: widgets, body: `{"apiVersion":7,"kind":"Widget",` + widget, code: 400,
			want: `the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":7,"kind":"Widget ...)`},
		{kind: widgets, body: `{`, code: 400,
			want: `the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input ({)`},
		{kind: widgets, body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":7}`, code: 400,
			want: `Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go value of type v1.ObjectMeta`},
		{kind: widgets, body: `{"apiVersion":"example.com/v1","kind":"Gadget",` + widget, code: 422,
			want: `Gadget.example.com "w" is invalid: kind: Invalid value: "Gadget": must be Widget`},
	} {
		ct := "application/json"
		if tc.yaml {
			ct = "application/yaml"
		}
		d, err := DecodeBody(tc.kind, []byte(tc.body), ct, FieldValidationStrict)
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%s: %v, want it decoded", tc.body, err)
			} else if gvk := d.Object.GetObjectKind().GroupVersionKind(); gvk != tc.kind.GVK() {
				t.Errorf("%s: decoded as %v, want %v", tc.body, gvk, tc.kind.GVK())
			}
			continue
		}
		var st apierrors.APIStatus
		if !asStatus(err, &st) || st.Status().Code != tc.code || st.Status().Message != tc.want {
			t.Errorf("%s:\n got %v\nwant %d %s", tc.body, err, tc.code, tc.want)
		}
		if tc.code == http.StatusUnprocessableEntity {
			if c := st.Status().Details.Causes; len(c) != 1 || c[0].Field != "kind" || c[0].Message != `Invalid value: "Gadget": must be Widget` || st.Status().Details.Kind != "Gadget" || st.Status().Details.Group != "example.com" {
				t.Errorf("%s: details %+v", tc.body, st.Status().Details)
			}
		}
	}
}

// TestPatchedCustomTypeMeta: a JSON or merge patch moving a custom resource to another
// version is invalid (kube-apiserver v1.37.2's text), where a built-in kind's is taken.
func TestPatchedCustomTypeMeta(t *testing.T) {
	widgets := customKind{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget"}
	_, err := DecodePatched(widgets, []byte(`{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"cw"}}`), FieldValidationStrict, JSONPatched)
	want := `Widget.example.com "cw" is invalid: apiVersion: Invalid value: "example.com/v2": must be example.com/v1`
	var st apierrors.APIStatus
	if !asStatus(err, &st) || st.Status().Code != http.StatusUnprocessableEntity || st.Status().Message != want {
		t.Errorf("got %v\nwant 422 %s", err, want)
	}
}

func asStatus(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*st = s
	return ok
}

// TestPatchedTypeMeta: a patch's result is decoded as kube-apiserver's patch handler
// decodes it (messages from kube-apiserver v1.37.2 answering the same patches): a JSON or
// merge patch whose result cannot be decoded is an invalid patch (422, the decoder's own
// error), one of another version of the kind is taken; a strategic merge patch's apiVersion
// and kind are not read.
func TestPatchedTypeMeta(t *testing.T) {
	cms := builtinKind(corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", corev1.ConfigMap{})
	deployments := builtinKind(appsv1.SchemeGroupVersion.WithResource("deployments"), "Deployment", appsv1.Deployment{})
	for _, tc := range []struct {
		kind    Kind
		patched string
		pk      PatchKind
		want    string // the 422's cause ("": decoded as the resource's kind)
	}{
		{kind: cms, patched: `{"apiVersion":"a/b/c","data":{"a":"b"},"kind":"ConfigMap","metadata":{"name":"pp"}}`, pk: JSONPatched,
			want: `unexpected GroupVersion string: a/b/c`},
		{kind: cms, patched: `{"apiVersion":"apps/v1","data":{"a":"b"},"kind":"ConfigMap","metadata":{"name":"pp"}}`, pk: JSONPatched,
			want: `no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{kind: cms, patched: `{"apiVersion":"v1","data":{"a":"b"},"kind":"Secret","metadata":{"name":"pp"}}`, pk: JSONPatched,
			want: `illegal base64 data at input byte 0`},
		{kind: cms, patched: `{"apiVersion":7,"data":{"a":"b"},"kind":"ConfigMap","metadata":{"name":"pp"}}`, pk: JSONPatched,
			want: `couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string`},
		{kind: cms, patched: `{"apiVersion":"v1","data":{"a":"b"},"kind":"ConfigMap","metadata":7}`, pk: JSONPatched,
			want: `json: cannot unmarshal number into Go struct field ConfigMap.metadata of type v1.ObjectMeta`},
		{kind: cms, patched: `{"data":{"a":"b"},"metadata":{"name":"pp"}}`, pk: JSONPatched},
		{kind: deployments, patched: `{"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"d"}}`, pk: JSONPatched},
		{kind: cms, patched: `{"apiVersion":"a/b/c","data":{"a":"b"},"kind":"Secret","metadata":{"name":"pp"}}`, pk: StrategicPatched},
	} {
		d, err := DecodePatched(tc.kind, []byte(tc.patched), FieldValidationStrict, tc.pk)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want it decoded", tc.patched, err)
			} else if gvk := d.Object.GetObjectKind().GroupVersionKind(); gvk != tc.kind.GVK() {
				t.Errorf("%s: decoded as %v, want %v", tc.patched, gvk, tc.kind.GVK())
			}
			continue
		}
		want := ` "" is invalid: patch: Invalid value: ` + strconv.Quote(tc.patched) + ": " + tc.want
		var st apierrors.APIStatus
		if !asStatus(err, &st) || st.Status().Code != http.StatusUnprocessableEntity || st.Status().Message != want {
			t.Errorf("%s:\n got %v\nwant 422 %s", tc.patched, err, want)
		}
	}
}
