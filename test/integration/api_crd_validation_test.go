package integration

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestCustomResourceValidation: custom resources are validated as upstream validates them
// (ObjectMeta, then the version's OpenAPI schema), with 422 and upstream's texts, and nothing
// is stored.
func TestCustomResourceValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetCRD("widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	for _, tc := range []struct {
		name string
		spec map[string]interface{}
		want string
	}{
		{"W_x", nil, `Widget.example.com "W_x" is invalid: metadata.name: Invalid value: "W_x": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"typed", map[string]interface{}{"size": "big"}, `Widget.example.com "typed" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`},
	} {
		_, err := c.Create(ctx, cr("Widget", tc.name, tc.spec), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != tc.want {
			t.Errorf("create %s:\n got %v\nwant 422 %s", tc.name, err, tc.want)
		}
		if _, err := c.Get(ctx, tc.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("invalid %s stored: %v", tc.name, err)
		}
	}
}
