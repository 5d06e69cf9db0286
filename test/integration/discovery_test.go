package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/server/servertest"
)

const acceptV2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// discoveryGet GETs path with accept (and If-None-Match when etag is set) and returns the
// response with its body read.
func discoveryGet(t *testing.T, s *servertest.Server, path, accept, etag string) (*http.Response, []byte) {
	t.Helper()
	hc, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, strings.TrimSuffix(s.Config.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// flatten lists every resource and subresource of a discovery answer as one line each.
func flatten(lists []*metav1.APIResourceList) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			// Aggregated discovery names every entry's group and version and gives a
			// subresource its resource's singular name; legacy discovery names neither.
			gv := r.Group + "/" + r.Version
			if r.Group == "" && r.Version == "" || gv == l.GroupVersion || "/"+l.GroupVersion == gv {
				gv = ""
			}
			singular := r.SingularName
			if strings.Contains(r.Name, "/") {
				singular = ""
			}
			out = append(out, strings.Join([]string{l.GroupVersion, r.Name, singular, r.Kind, gv,
				strings.Join(r.Verbs, ","), strings.Join(r.ShortNames, ","), strings.Join(r.Categories, ","),
				map[bool]string{true: "ns", false: "cluster"}[r.Namespaced]}, " "))
		}
	}
	sort.Strings(out)
	return out
}

// TestAggregatedDiscovery checks that client-go's discovery client, which asks for
// aggregated discovery, gets it (two requests for everything) and sees exactly what legacy
// discovery lists, subresources included; that the document has an ETag answered with 304
// and follows CRDs as they come and go.
func TestAggregatedDiscovery(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)

	// 1. The content negotiation: aggregated only when asked for.
	resp, body := discoveryGet(t, s, "/apis", acceptV2+",application/json", "")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != acceptV2 {
		t.Fatalf("GET /apis aggregated: %d %q %s", resp.StatusCode, ct, body)
	}
	etag := resp.Header.Get("Etag")
	if len(etag) < 3 || resp.Header.Get("Vary") != "Accept" {
		t.Errorf("ETag %q Vary %q", etag, resp.Header.Get("Vary"))
	}
	var doc apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &doc); err != nil || doc.Kind != "APIGroupDiscoveryList" || doc.APIVersion != "apidiscovery.k8s.io/v2" {
		t.Fatalf("aggregated /apis: %v %s", err, body)
	}
	if resp, b := discoveryGet(t, s, "/apis", acceptV2, etag); resp.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("If-None-Match with the ETag: %d %q", resp.StatusCode, b)
	}
	if resp, b := discoveryGet(t, s, "/apis", acceptV2, `"stale"`); resp.StatusCode != 200 || len(b) == 0 {
		t.Errorf("If-None-Match with another ETag: %d", resp.StatusCode)
	}
	if resp, b := discoveryGet(t, s, "/api", acceptV2+",application/json", ""); resp.Header.Get("Content-Type") != acceptV2 ||
		!strings.Contains(string(b), `"apiVersion":"apidiscovery.k8s.io/v2"`) || !strings.Contains(string(b), `"resource":"pods"`) {
		t.Errorf("aggregated /api: %q %s", resp.Header.Get("Content-Type"), b)
	}
	// v1.37 serves v2beta1 no more: a client asking for it, then JSON, gets legacy discovery.
	beta := strings.Replace(acceptV2, "v=v2", "v=v2beta1", 1)
	for _, accept := range []string{"application/json", "", beta + ",application/json",
		"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json"} {
		resp, b := discoveryGet(t, s, "/apis", accept, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), `"kind":"APIGroupList"`) {
			t.Errorf("Accept %q: %d %q %s", accept, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}

	// The same document in YAML and protobuf, under the same ETag.
	for _, media := range []string{"application/yaml", "application/vnd.kubernetes.protobuf"} {
		accept := strings.Replace(acceptV2, "application/json", media, 1)
		resp, b := discoveryGet(t, s, "/apis", accept, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != accept || resp.Header.Get("Etag") != etag {
			t.Errorf("%s: %d %q %q", media, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Etag"))
		}
		var got apidiscoveryv2.APIGroupDiscoveryList
		var err error
		if media == "application/yaml" {
			err = yaml.Unmarshal(b, &got)
		} else if !bytes.HasPrefix(b, []byte("k8s\x00")) {
			err = fmt.Errorf("no protobuf envelope: %q", b[:min(len(b), 8)])
		} else {
			var u runtime.Unknown
			if err = u.Unmarshal(b[4:]); err == nil {
				err = got.Unmarshal(u.Raw)
				got.TypeMeta = metav1.TypeMeta{Kind: u.Kind, APIVersion: u.APIVersion}
			}
		}
		if err != nil || !equality.Semantic.DeepEqual(got, doc) {
			t.Errorf("%s document differs from JSON's (%v):\n%+v", media, err, got)
		}
	}

	// 2. client-go's aggregated discovery sees what legacy discovery lists.
	agg := discovery.NewDiscoveryClientForConfigOrDie(s.Config)
	legacy := discovery.NewDiscoveryClientForConfigOrDie(s.Config)
	legacy.UseLegacyDiscovery = true
	_, aggLists, err := agg.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	_, legacyLists, err := legacy.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	a, l := flatten(aggLists), flatten(legacyLists)
	if strings.Join(a, "\n") != strings.Join(l, "\n") {
		t.Errorf("aggregated discovery differs from legacy:\n%s\n--- legacy ---\n%s", strings.Join(a, "\n"), strings.Join(l, "\n"))
	}
	for _, want := range []string{
		"v1 pods pod Pod  create,delete,deletecollection,get,list,patch,update,watch po all ns",
		"v1 pods/status  Pod  get,patch,update   ns",
		"apps/v1 deployments/scale  Scale autoscaling/v1 get,patch,update   ns",
		"v1 serviceaccounts/token  TokenRequest authentication.k8s.io/v1 create   ns",
		"v1 namespaces namespace Namespace  create,delete,get,list,patch,update,watch ns  cluster",
		"authorization.k8s.io/v1 selfsubjectaccessreviews selfsubjectaccessreview SelfSubjectAccessReview  create   cluster",
	} {
		found := false
		for _, line := range a {
			found = found || line == want
		}
		if !found {
			t.Errorf("aggregated discovery lacks %q", want)
		}
	}

	// 3. A CRD appears once Established, with its subresources, and goes when deleted.
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctxT(t), widgetCRD("sprockets", "Sprocket", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	findSprockets := func() (*apidiscoveryv2.APIResourceDiscovery, string) {
		resp, body := discoveryGet(t, s, "/apis", acceptV2, "")
		var doc apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				for i, r := range v.Resources {
					if g.Name == "example.com" && r.Resource == "sprockets" {
						return &v.Resources[i], resp.Header.Get("Etag")
					}
				}
			}
		}
		return nil, resp.Header.Get("Etag")
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var got *apidiscoveryv2.APIResourceDiscovery
	var etag2 string
	waitFor("sprockets in aggregated discovery", func() bool { got, etag2 = findSprockets(); return got != nil })
	if etag2 == etag {
		t.Errorf("the ETag did not change with the new CRD")
	}
	// Groups are in kube-apiserver's order, a CRD's group last, in both forms.
	for name, c := range map[string]*discovery.DiscoveryClient{"aggregated": agg, "legacy": legacy} {
		groups, err := c.ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range groups.Groups {
			names = append(names, g.Name)
		}
		if len(names) < 3 || names[0] != "" || names[1] != "apps" || names[len(names)-1] != "example.com" {
			t.Errorf("%s group order: %q", name, names)
		}
	}
	b, _ := json.Marshal(got)
	want := `{"resource":"sprockets","responseKind":{"group":"example.com","version":"v1","kind":"Sprocket"},"scope":"Namespaced","singularResource":"Sprocket","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},{"subresource":"status","responseKind":{"group":"example.com","version":"v1","kind":"Sprocket"},"verbs":["get","patch","update"]}]}`
	if string(b) != want {
		t.Errorf("sprockets:\n got %s\nwant %s", b, want)
	}
	if err := crds.Delete(ctxT(t), "sprockets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("sprockets gone from aggregated discovery", func() bool { got, _ = findSprockets(); return got == nil })
}
