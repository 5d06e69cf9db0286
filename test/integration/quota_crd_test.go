package integration

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestCountQuotaOnCustomResources: count/<plural>.<group> limits custom resources, including
// a quota created before its CRD; deletes credit at once; deleting the CRD credits its objects.
func TestCountQuotaOnCustomResources(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "crq")
	mkQuota(t, s, "crq", "widgets", map[string]string{"count/gadgets.example.com": "1"})
	expectUsed(t, s, "crq", "widgets", map[string]string{"count/gadgets.example.com": "0"})
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetCRD("gadgets", "Gadget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("crq")
	if _, err := gadgets.Create(ctx, cr("Gadget", "one", map[string]interface{}{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "crq", "widgets", map[string]string{"count/gadgets.example.com": "1"})
	_, err = gadgets.Create(ctx, cr("Gadget", "two", map[string]interface{}{"size": int64(2)}), metav1.CreateOptions{})
	expectForbidden(t, err, `gadgets.example.com "two" is forbidden: exceeded quota: widgets, requested: count/gadgets.example.com=1, used: count/gadgets.example.com=1, limited: count/gadgets.example.com=1`)
	if err := gadgets.Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "crq", "widgets", map[string]string{"count/gadgets.example.com": "0"})

	// Deleting the CRD deletes its custom resources through the registry: credited.
	if _, err := gadgets.Create(ctx, cr("Gadget", "three", map[string]interface{}{"size": int64(3)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	w, err := crds.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=gadgets.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := crds.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			break
		}
	}
	expectUsed(t, s, "crq", "widgets", map[string]string{"count/gadgets.example.com": "0"})
}
