package registry

import (
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// fuzzResources are the decode targets: typed kinds with nested structs, quantities and
// int-or-strings, and a custom resource (unstructured).
func fuzzResources() []*Resource {
	cat := NewCatalogue()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}},
		},
	}
	out := []*Resource{
		cat.Get(corev1.SchemeGroupVersion.WithResource("pods")),
		cat.Get(corev1.SchemeGroupVersion.WithResource("configmaps")),
		cat.Get(corev1.SchemeGroupVersion.WithResource("resourcequotas")),
		cat.Get(corev1.SchemeGroupVersion.WithResource("services")),
		cat.Get(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")),
	}
	return append(out, CustomResources(crd)...)
}

// FuzzDecode feeds arbitrary bodies through ToJSON, ProtobufToJSON and Decode: they never
// panic, and every refusal is a 4xx Status.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"limits":{"cpu":"1"}}}]}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","name":"d"},"data":{"k":"v"},"foo":1}`,
		`{"apiVersion":"v1","kind":"ResourceQuota","spec":{"hard":{"pods":"1e3","cpu":"-1"}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"a":[1,2,{"b":null}]}}`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n",
		"a: &x [*x]\n", "- - - -\n", "metadata:\n  name: a\n  name: b\n", "{", "[]", "null", "\"s\"", "1", "", "\x00\x01", "{\"metadata\":[]}",
		`{"spec":{"ports":[{"port":"x","targetPort":{"a":1}}]}}`, `{"metadata":{"creationTimestamp":"yesterday"}}`,
		"k8s\x00\n\x0c\n\x02v1\x12\x06Secret",
	} {
		for _, ct := range []string{"application/json", "application/yaml", ProtobufContentType} {
			f.Add([]byte(seed), ct, uint8(0))
		}
	}
	resources := fuzzResources()
	f.Fuzz(func(t *testing.T, body []byte, contentType string, which uint8) {
		res := resources[int(which)%len(resources)]
		var j []byte
		var err error
		if IsProtobuf(contentType) {
			j, err = ProtobufToJSON(res, body)
		} else {
			j, err = ToJSON(body, contentType)
		}
		if err != nil {
			requireClientError(t, err)
			return
		}
		for _, fv := range []FieldValidation{FieldValidationStrict, FieldValidationWarn, FieldValidationIgnore} {
			d, err := Decode(res, j, fv)
			if !IsProtobuf(contentType) {
				d, err = DecodeBody(res, body, contentType, fv)
			}
			if err != nil {
				requireClientError(t, err)
				continue
			}
			if d.Object.GetObjectKind().GroupVersionKind() != res.GVK() {
				t.Fatalf("decoded %v as %v", res.GVK(), d.Object.GetObjectKind().GroupVersionKind())
			}
			// What decodes also encodes and reads back.
			b, err := encodeForStorage(d.Object, res.GVK())
			if err != nil {
				t.Fatalf("encode of a decoded %s: %v", res.Kind, err)
			}
			if _, err := decodeStored(res, b, 7); err != nil {
				t.Fatalf("stored %s does not decode: %v\n%s", res.Kind, err, b)
			}
			if fv == FieldValidationIgnore && len(d.Warnings) > 0 {
				t.Fatalf("Ignore reported warnings %v", d.Warnings)
			}
		}
	})
}

// requireClientError fails unless err is a 4xx metav1.Status.
func requireClientError(t *testing.T, err error) {
	t.Helper()
	var st interface{ Status() metav1.Status }
	if !errors.As(err, &st) {
		t.Fatalf("error is not a Status: %T %v", err, err)
	}
	if c := st.Status().Code; c < 400 || c >= 500 || c == http.StatusNotFound {
		t.Fatalf("error code %d: %v", c, err)
	}
	if !apierrors.IsBadRequest(err) && !apierrors.IsUnsupportedMediaType(err) && !apierrors.IsRequestEntityTooLargeError(err) {
		t.Fatalf("unexpected error kind %s: %v", apierrors.ReasonForError(err), err)
	}
}

var _ runtime.Object = (*corev1.Pod)(nil)
