package integration

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

var apiServicesGVR = apiregistrationv1.SchemeGroupVersion.WithResource("apiservices")

func asAPIService(t *testing.T, u *unstructured.Unstructured) *apiregistrationv1.APIService {
	t.Helper()
	var a apiregistrationv1.APIService
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &a); err != nil {
		t.Fatal(err)
	}
	return &a
}

// TestAPIServices checks the local APIServices: one per served group-version from the
// start, Available as local ones are, one for a CRD's group-version while it is served.
func TestAPIServices(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	c := s.Dynamic.Resource(apiServicesGVR)
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*apiregistrationv1.APIService{}
	for i := range list.Items {
		a := asAPIService(t, &list.Items[i])
		got[a.Name] = a
	}
	for _, name := range []string{"v1.", "v1.apps", "v1.batch", "v1.storage.k8s.io", "v1.certificates.k8s.io", "v1.admissionregistration.k8s.io",
		"v1.flowcontrol.apiserver.k8s.io", "v1.rbac.authorization.k8s.io", "v1.apiextensions.k8s.io", "v1.authentication.k8s.io", "v1.authorization.k8s.io"} {
		a := got[name]
		if a == nil {
			t.Errorf("no APIService %s", name)
			continue
		}
		if a.Spec.Service != nil || len(a.Status.Conditions) != 1 || a.Status.Conditions[0].Type != apiregistrationv1.Available ||
			a.Status.Conditions[0].Status != apiregistrationv1.ConditionTrue || a.Status.Conditions[0].Reason != "Local" {
			t.Errorf("APIService %s: %+v", name, a)
		}
	}
	if a := got["v1."]; a != nil && (a.Spec.GroupPriorityMinimum != 18000 || a.Spec.VersionPriority != 1 || a.Labels["kube-aggregator.kubernetes.io/automanaged"] != "onstart") {
		t.Errorf("v1.: %+v", a)
	}
	if got["v1.apiregistration.k8s.io"] != nil {
		t.Error("an APIService for apiregistration.k8s.io itself")
	}

	// A CRD's group-version gets one while the CRD exists.
	w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=v1.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, widgetCRD("widgets", "Widget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	added := waitAPIService(ctx, t, w, watch.Added)
	if a := asAPIService(t, added); a.Spec.Group != "example.com" || a.Spec.GroupPriorityMinimum != 1000 || a.Spec.VersionPriority != 100 || a.Labels["kube-aggregator.kubernetes.io/automanaged"] != "true" {
		t.Errorf("CRD APIService: %+v", a)
	}
	if err := crds.Delete(ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAPIService(ctx, t, w, watch.Deleted)

	// Validation with upstream's text.
	bad := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]interface{}{"name": "v1.wrong"}, "spec": map[string]interface{}{"group": "right.example.com", "version": "v1", "groupPriorityMinimum": int64(100), "versionPriority": int64(10)}}}
	_, err = c.Create(ctx, bad, metav1.CreateOptions{})
	expectInvalid(t, err, `APIService.apiregistration.k8s.io "v1.wrong" is invalid: metadata.name: Invalid value: "v1.wrong": must be `+"`spec.version+\".\"+spec.group`"+`: "v1.right.example.com"`)
}

func waitAPIService(ctx context.Context, t *testing.T, w watch.Interface, typ watch.EventType) *unstructured.Unstructured {
	t.Helper()
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("no %s event", typ)
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type == typ {
				return ev.Object.(*unstructured.Unstructured)
			}
		}
	}
}
