package registry

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/quotad/quotad/internal/quota/quotatest"
	"github.com/quotad/quotad/internal/registry/codec"
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

// protobufPod encodes a pod whose container requests cpu as text, without parsing text
// (ParseQuantity would stall on some of them): an int64 mantissa and exponent formatted
// as DecimalExponent encode as exactly that text.
func protobufPod(t testing.TB, mantissa int64, exp int32) []byte {
	q := resource.NewScaledQuantity(mantissa, resource.Scale(exp))
	q.Format = resource.DecimalExponent
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": *q},
		}}}},
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(pod, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzDecode feeds arbitrary bodies through ToJSON, ProtobufToJSON and Decode: they never
// panic, every refusal is a 4xx Status, and no input takes longer than
// quotatest.StallBound (the quantity seeds below kept a core busy for minutes).
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
		// Quantity texts ParseQuantity, Quantity.Cmp or Add took minutes on.
		`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"1e1000000000"}}}`,
		`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1e-1000000000","memory":1e-1000000000}}}]}}`,
		`{"apiVersion":"v1","kind":"ResourceQuota","spec":{"hard":{"cpu":"1234567890123456789e1000000000","pods":" 0e-2000000000 "}}}`,
		"apiVersion: v1\nkind: ResourceQuota\nspec:\n  hard:\n    pods: 1e-1000000000\n    cpu: \"1e-1000000000\"\n",
		`{"apiVersion":"v1","kind":"Pod","spec":{"overhead":{"cpu":"1.` + strings.Repeat("0", 1<<20) + `1"}}}`,
		// apiVersions and kinds that are not the resource's (decoded as their own kind).
		`{"apiVersion":"a/b/c","kind":"Pod"}`, `{"apiVersion":"__internal","kind":"Service"}`, `{"apiVersion":"apps/","kind":""}`,
		`{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":"x"}]}}`, `{"apiVersion":"apps/v1beta1","kind":"Deployment"}`,
	} {
		for _, ct := range []string{"application/json", "application/yaml", codec.ProtobufContentType} {
			f.Add([]byte(seed), ct, uint8(0))
		}
	}
	f.Add(protobufPod(f, 1, -1000000000), codec.ProtobufContentType, uint8(0))
	f.Add(protobufPod(f, 1, 1000000000), codec.ProtobufContentType, uint8(0))
	resources := fuzzResources()
	f.Fuzz(func(t *testing.T, body []byte, contentType string, which uint8) {
		res := resources[int(which)%len(resources)]
		quotatest.Within(t, quotatest.StallBound, fmt.Sprintf("%s %s %.80q", res.Kind, contentType, body), func() error {
			return decodeOne(res, body, contentType)
		})
	})
}

// decodeOne decodes body as FuzzDecode does and returns what is wrong, if anything.
func decodeOne(res *Resource, body []byte, contentType string) error {
	var j []byte
	var err error
	if codec.IsProtobuf(contentType) {
		j, err = codec.ProtobufToJSON(res, body)
	} else {
		j, err = codec.ToJSON(body, contentType)
	}
	if err != nil {
		return clientError(err)
	}
	for _, fv := range []codec.FieldValidation{codec.FieldValidationStrict, codec.FieldValidationWarn, codec.FieldValidationIgnore} {
		d, err := codec.Decode(res, j, fv)
		if !codec.IsProtobuf(contentType) {
			d, err = codec.DecodeBody(res, body, contentType, fv)
		}
		if err != nil {
			if err := clientError(err); err != nil {
				return err
			}
			continue
		}
		if d.Object.GetObjectKind().GroupVersionKind() != res.GVK() {
			return fmt.Errorf("decoded %v as %v", res.GVK(), d.Object.GetObjectKind().GroupVersionKind())
		}
		// What decodes also encodes and reads back.
		b, err := codec.EncodeForStorage(d.Object, res.GVK())
		if err != nil {
			return fmt.Errorf("encode of a decoded %s: %v", res.Kind, err)
		}
		if _, err := decodeStored(res, b, 7); err != nil {
			return fmt.Errorf("stored %s does not decode: %v\n%s", res.Kind, err, b)
		}
		if fv == codec.FieldValidationIgnore && len(d.Warnings) > 0 {
			return fmt.Errorf("Ignore reported warnings %v", d.Warnings)
		}
	}
	return nil
}

// clientError returns what is wrong unless err is a 4xx metav1.Status: a 400, 413, 415, or
// the 422 of a refused quantity text.
func clientError(err error) error {
	var st interface{ Status() metav1.Status }
	if !errors.As(err, &st) {
		return fmt.Errorf("error is not a Status: %T %v", err, err)
	}
	if c := st.Status().Code; c < 400 || c >= 500 || c == http.StatusNotFound {
		return fmt.Errorf("error code %d: %v", c, err)
	}
	if !apierrors.IsBadRequest(err) && !apierrors.IsUnsupportedMediaType(err) && !apierrors.IsRequestEntityTooLargeError(err) && !apierrors.IsInvalid(err) {
		return fmt.Errorf("unexpected error kind %s: %v", apierrors.ReasonForError(err), err)
	}
	return nil
}

var _ runtime.Object = (*corev1.Pod)(nil)
