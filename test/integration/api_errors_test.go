package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// rawRequest sends one request with the admin token and returns the status code and the
// decoded Status (when the answer is one).
func rawRequest(t *testing.T, s *servertest.Server, method, path, contentType string, body io.Reader) (int, metav1.Status) {
	t.Helper()
	transport, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctxT(t), method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var st metav1.Status
	_ = json.Unmarshal(b, &st)
	return resp.StatusCode, st
}

// TestErrorAnswers pins the status codes and texts of refused requests, and checks that no
// refused request wrote anything.
func TestErrorAnswers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "err")
	settle(t, s, "err")
	settle(t, s, "default")
	core := s.Client.CoreV1()
	if _, err := core.ResourceQuotas("err").Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("q"),
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("3")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Secrets("err").Create(ctx, &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := revision(t, s)

	// 401 without a token, or with a wrong one.
	for _, token := range []string{"", "wrong"} {
		cfg := rest.AnonymousClientConfig(s.Config)
		cfg.BearerToken = token
		anon, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = anon.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) || err.Error() != "Unauthorized" {
			t.Errorf("token %q: %v", token, err)
		}
		_, err = anon.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("anon")}, metav1.CreateOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("token %q create: %v", token, err)
		}
	}

	big := strings.Repeat("x", 3<<20)
	bigCM, _ := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("big"), Data: map[string]string{"k": big}})
	rc := core.RESTClient()
	for _, tc := range []struct {
		name string
		do   func() error
		code int
		want string
	}{
		{"get in a missing namespace", func() error {
			_, err := core.ConfigMaps("nope").Get(ctx, "x", metav1.GetOptions{})
			return err
		}, 404, `configmaps "x" not found`},
		{"create in a missing namespace", func() error {
			_, err := core.ConfigMaps("nope").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("x")}, metav1.CreateOptions{})
			return err
		}, 404, `namespaces "nope" not found`},
		{"get a missing object", func() error {
			_, err := core.ConfigMaps("err").Get(ctx, "missing", metav1.GetOptions{})
			return err
		}, 404, `configmaps "missing" not found`},
		{"get a missing cluster object", func() error {
			_, err := s.Client.StorageV1().StorageClasses().Get(ctx, "missing", metav1.GetOptions{})
			return err
		}, 404, `storageclasses.storage.k8s.io "missing" not found`},
		{"unknown resource", func() error {
			return rc.Get().Namespace("err").Resource("widgets").Do(ctx).Error()
		}, 404, "the server could not find the requested resource"},
		{"unknown group", func() error {
			return s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("err").Delete(ctx, "w", metav1.DeleteOptions{})
		}, 404, "the server could not find the requested resource"},
		{"malformed JSON", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)`},
		{"malformed YAML", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Body([]byte("metadata: [\n")).SetHeader("Content-Type", "application/yaml").Do(ctx).Error()
		}, 400, ""},
		{"wrong kind", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Body([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"k"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"apiVersion not a group/version", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Body([]byte(`{"apiVersion":"a/b/c","kind":"ConfigMap","metadata":{"name":"k"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `the object provided is unrecognized (must be of type ConfigMap): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)`},
		{"wrong type", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t"},"data":{"k":1}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"body over 3 MiB", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Body(bigCM).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 413, "Request entity too large: limit is 3145728"},
		{"invalid name", func() error {
			_, err := core.ConfigMaps("err").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("Bad_Name")}, metav1.CreateOptions{})
			return err
		}, 422, `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"invalid pod", func() error {
			_, err := core.Pods("err").Create(ctx, &corev1.Pod{ObjectMeta: meta("p")}, metav1.CreateOptions{})
			return err
		}, 422, `Pod "p" is invalid: spec.containers: Required value`},
		{"invalid quota", func() error {
			_, err := core.ResourceQuotas("err").Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("neg"),
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("-1")}}}, metav1.CreateOptions{})
			return err
		}, 422, `ResourceQuota "neg" is invalid: spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0`},
		{"immutable field on update", func() error {
			sec, err := core.Secrets("err").Get(ctx, "s", metav1.GetOptions{})
			if err != nil {
				return err
			}
			sec.Type = corev1.SecretTypeTLS
			_, err = core.Secrets("err").Update(ctx, sec, metav1.UpdateOptions{})
			return err
		}, 422, `Secret "s" is invalid: [type: Invalid value: "kubernetes.io/tls": field is immutable, data[tls.crt]: Required value, data[tls.key]: Required value]`},
		{"configmap over 1 MiB", func() error {
			_, err := core.ConfigMaps("err").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("huge"), Data: map[string]string{"k": strings.Repeat("x", 2<<20)}}, metav1.CreateOptions{})
			return err
		}, 422, `ConfigMap "huge" is invalid: []: Too long: may not be more than 1048576 bytes`},
		{"namespace mismatch", func() error {
			_, err := core.ConfigMaps("err").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default"}}, metav1.CreateOptions{})
			return err
		}, 400, "the namespace of the provided object does not match the namespace sent on the request"},
		{"deletecollection of namespaces", func() error {
			return rc.Delete().Resource("namespaces").Do(ctx).Error()
		}, 405, "the server does not allow this method on the requested resource"},
		{"POST to a named object", func() error {
			return rc.Post().Namespace("err").Resource("configmaps").Name("x").Body([]byte(`{}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 405, "the server does not allow this method on the requested resource"},
		{"POST to /status", func() error {
			return rc.Post().Namespace("err").Resource("resourcequotas").Name("q").SubResource("status").Body([]byte(`{`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 405, "the server does not allow this method on the requested resource"},
		{"DELETE /status", func() error {
			return rc.Delete().Namespace("err").Resource("resourcequotas").Name("q").SubResource("status").Do(ctx).Error()
		}, 405, "the server does not allow this method on the requested resource"},
		{"update of a missing object", func() error {
			_, err := core.ConfigMaps("err").Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing", ResourceVersion: "5"}}, metav1.UpdateOptions{})
			return err
		}, 404, `configmaps "missing" not found`},
		{"delete of a missing object", func() error {
			return core.ConfigMaps("err").Delete(ctx, "missing", metav1.DeleteOptions{})
		}, 404, `configmaps "missing" not found`},
		// Options and bodies as kube-apiserver v1.37.2 answers them (each compared with it).
		{"list limit not a number", func() error {
			return rc.Get().Namespace("err").Resource("configmaps").Param("limit", "abc").Do(ctx).Error()
		}, 400, `strconv.ParseInt: parsing "abc": invalid syntax`},
		{"list resourceVersionMatch without resourceVersion", func() error {
			return rc.Get().Namespace("err").Resource("configmaps").Param("resourceVersionMatch", "Exact").Do(ctx).Error()
		}, 422, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{"list with sendInitialEvents", func() error {
			return rc.Get().Namespace("err").Resource("configmaps").Param("sendInitialEvents", "true").Do(ctx).Error()
		}, 422, `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{"list with a garbage continue token", func() error {
			return rc.Get().Namespace("err").Resource("configmaps").Param("continue", "garbage").Do(ctx).Error()
		}, 400, `invalid continue token: continue key is not valid: invalid character '\u0081' looking for beginning of value`},
		{"delete with a body of another kind", func() error {
			return rc.Delete().Namespace("err").Resource("secrets").Name("s").Body([]byte(`{"kind":"Pod","apiVersion":"v1"}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"delete with a body whose apiVersion is not a group/version", func() error {
			return rc.Delete().Namespace("err").Resource("secrets").Name("s").Body([]byte(`{"kind":"DeleteOptions","apiVersion":"a/b/c"}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `unexpected GroupVersion string: a/b/c`},
		{"delete with gracePeriodSeconds not a number", func() error {
			return rc.Delete().Namespace("err").Resource("secrets").Name("s").Param("gracePeriodSeconds", "x").Do(ctx).Error()
		}, 400, `strconv.ParseInt: parsing "x": invalid syntax`},
		{"delete with a stale uid precondition", func() error {
			return rc.Delete().Namespace("err").Resource("secrets").Name("s").Body([]byte(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"x"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 409, ""},
		{"update naming another object that does not exist", func() error {
			return rc.Put().Namespace("err").Resource("secrets").Name("missing").Body([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"other"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `the name of the object (other) does not match the name on the URL (missing)`},
		{"update without a name", func() error {
			return rc.Put().Namespace("err").Resource("secrets").Name("s").Body([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `the name of the object (s based on URL) was undeterminable: name must be provided`},
		{"update with another uid", func() error {
			return rc.Put().Namespace("err").Resource("secrets").Name("s").Body([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","uid":"x"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 409, ""},
		{"JSON patch not an array", func() error {
			return rc.Patch(types.JSONPatchType).Namespace("err").Resource("secrets").Name("s").Body([]byte(`{}`)).Do(ctx).Error()
		}, 400, `error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp`},
		{"merge patch not an object", func() error {
			return rc.Patch(types.MergePatchType).Namespace("err").Resource("secrets").Name("s").Body([]byte(`7`)).Do(ctx).Error()
		}, 400, `error decoding patch: json: cannot unmarshal number into Go value of type map[string]interface {}`},
		{"merge patch null", func() error {
			return rc.Patch(types.MergePatchType).Namespace("err").Resource("secrets").Name("s").Body([]byte(`null`)).Do(ctx).Error()
		}, 400, `Invalid JSON Patch`},
		{"patch not JSON", func() error {
			return rc.Patch(types.MergePatchType).Namespace("err").Resource("secrets").Name("s").Body([]byte(`{`)).Do(ctx).Error()
		}, 400, `invalid JSON patch`},
		{"scale naming another object", func() error {
			return s.Client.AppsV1().RESTClient().Put().Namespace("err").Resource("deployments").Name("missing").SubResource("scale").Body([]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"other"},"spec":{"replicas":1}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `the name of the object (other) does not match the name on the URL (missing)`},
		{"binding of another kind", func() error {
			return rc.Post().Namespace("err").Resource("pods").Name("missing").SubResource("binding").Body([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"missing"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `Pod in version "v1" cannot be handled as a Binding: converting (v1.Pod) to (core.Binding): unknown conversion`},
		{"eviction whose apiVersion is not a group/version", func() error {
			return rc.Post().Namespace("err").Resource("pods").Name("missing").SubResource("eviction").Body([]byte(`{"apiVersion":"a/b/c","kind":"Eviction","metadata":{"name":"missing"}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
		}, 400, `the object provided is unrecognized (must be of type Eviction): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)`},
		{"a named GET with watch=true is a get", func() error {
			return rc.Get().Namespace("err").Resource("secrets").Name("s").Param("watch", "true").Do(ctx).Error()
		}, 0, ""},
		{"invalid resourceVersion", func() error {
			_, err := core.ConfigMaps("err").List(ctx, metav1.ListOptions{ResourceVersion: "abc", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			return err
		}, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.code == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			var st apierrors.APIStatus
			if !asAPIStatus(err, &st) {
				t.Fatalf("err = %v (%T), want a %d Status", err, err, tc.code)
			}
			if int(st.Status().Code) != tc.code {
				t.Errorf("code %d, want %d: %v", st.Status().Code, tc.code, err)
			}
			if tc.want != "" && err.Error() != tc.want {
				t.Errorf("message:\n got %s\nwant %s", err.Error(), tc.want)
			}
		})
	}
	// Discovery agrees: namespaces serve no deletecollection.
	rl, err := s.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rl.APIResources {
		if r.Name == "namespaces" && fmt.Sprint(r.Verbs) != "[create delete get list patch update watch]" {
			t.Errorf("namespaces verbs %v", r.Verbs)
		}
	}
	// The quota refusal: 403 with upstream's text, and nothing written. kube-root-ca.crt
	// counts as one of the three.
	for i := 0; i < 2; i++ {
		if _, err := core.ConfigMaps("err").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(fmt.Sprintf("fill%d", i))}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	filled := revision(t, s)
	_, err = core.ConfigMaps("err").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("over")}, metav1.CreateOptions{})
	if want := `configmaps "over" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("over quota:\n got %v\nwant %s", err, want)
	}
	if after := revision(t, s); after != filled {
		t.Errorf("a refused create wrote: revision %d → %d", filled, after)
	}
	// Chunked bodies over the limit are refused too (no Content-Length to check up front).
	code, st := rawRequest(t, s, http.MethodPost, "/api/v1/namespaces/err/configmaps", "application/json", io.MultiReader(bytes.NewReader(bigCM)))
	if code != http.StatusRequestEntityTooLarge || st.Message != "Request entity too large: limit is 3145728" {
		t.Errorf("chunked big body: %d %q", code, st.Message)
	}
	// Every refusal above, and nothing else, happened between before and filled.
	l, err := core.ConfigMaps("err").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range l.Items {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "fill0,fill1" {
		t.Errorf("configmaps after the refusals: %s", got)
	}
	q, err := core.ResourceQuotas("err").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := q.Status.Used[corev1.ResourceConfigMaps]; used.String() != "3" {
		t.Errorf("quota used configmaps = %s, want 3", used.String())
	}
	if filled-before != 2 {
		t.Errorf("refusals wrote: %d revisions between the first refusal and the two fills, want 2", filled-before)
	}
}

func asAPIStatus(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*st = s
	return ok
}

// TestDeleteAnswers pins the delete answers: 200 with a success Status when the object is
// gone, 200 with the object while finalizers hold it, 202 only for orphanDependents=false.
func TestDeleteAnswers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	cms := s.Client.CoreV1().ConfigMaps("default")
	for _, n := range []string{"plain", "held", "held2"} {
		cm := &corev1.ConfigMap{ObjectMeta: meta(n)}
		if n != "plain" {
			cm.Finalizers = []string{"example.com/hold"}
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	plain, _ := cms.Get(ctx, "plain", metav1.GetOptions{})
	code, st := rawRequest(t, s, http.MethodDelete, "/api/v1/namespaces/default/configmaps/plain", "", nil)
	if code != http.StatusOK || st.Kind != "Status" || st.Status != metav1.StatusSuccess || st.Details == nil ||
		st.Details.Name != "plain" || st.Details.Kind != "configmaps" || st.Details.UID != plain.UID {
		t.Errorf("delete: %d %+v", code, st)
	}
	code, st = rawRequest(t, s, http.MethodDelete, "/api/v1/namespaces/default/configmaps/held", "", nil)
	if code != http.StatusOK || st.Kind != "ConfigMap" {
		t.Errorf("delete of a held object: %d kind %q", code, st.Kind)
	}
	code, st = rawRequest(t, s, http.MethodDelete, "/api/v1/namespaces/default/configmaps/held2", "application/json",
		strings.NewReader(`{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":false}`))
	if code != http.StatusAccepted || st.Kind != "ConfigMap" {
		t.Errorf("delete of a held object with orphanDependents=false: %d kind %q", code, st.Kind)
	}
	// deletecollection answers the list of what it deleted.
	mkNamespace(t, s, "coll")
	for _, n := range []string{"x", "y"} {
		if _, err := s.Client.CoreV1().Secrets("coll").Create(ctx, &corev1.Secret{ObjectMeta: labelled(n, "coll")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	code, st = rawRequest(t, s, http.MethodDelete, "/api/v1/namespaces/coll/secrets?labelSelector=t%3Dcoll", "", nil)
	if code != http.StatusOK || st.Kind != "SecretList" || st.APIVersion != "v1" {
		t.Errorf("deletecollection: %d %s/%s", code, st.APIVersion, st.Kind)
	}
	if l, err := s.Client.CoreV1().Secrets("coll").List(ctx, metav1.ListOptions{LabelSelector: "t=coll"}); err != nil || len(l.Items) != 0 {
		t.Errorf("after deletecollection: %v %d", err, len(l.Items))
	}
	code, st = rawRequest(t, s, http.MethodDelete, "/api/v1/namespaces/default/configmaps/held", "application/json", strings.NewReader(`{"kind":`))
	if code != http.StatusBadRequest || !strings.HasPrefix(st.Message, "couldn't get version/kind; json parse error: ") {
		t.Errorf("delete with a malformed body: %d %q", code, st.Message)
	}
}
