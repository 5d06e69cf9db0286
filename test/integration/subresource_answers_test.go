package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// The texts below are kube-apiserver v1.37.2's answers to the same requests.

// TestEphemeralContainersAsKubectlDebug: pods/ephemeralcontainers takes the strategic merge
// patch kubectl debug sends (no pull or termination message policy: defaulted as on
// create), and refuses changing an existing ephemeral container with upstream's diff of the
// two, printed as upstream prints its internal objects (Go field names, no field left out).
func TestEphemeralContainersAsKubectlDebug(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "dbg")
	pods := s.Client.CoreV1().Pods("dbg")
	if _, err := pods.Create(ctx, podWith("web", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := func(body string) (*corev1.Pod, error) {
		return pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}, "ephemeralcontainers")
	}
	p, err := patch(`{"spec":{"ephemeralContainers":[{"name":"d1","image":"busybox","env":[{"name":"A","value":"1"}],"targetContainerName":"c","stdin":true}]}}`)
	if err != nil {
		t.Fatalf("kubectl debug's patch: %v", err)
	}
	if ecs := p.Spec.EphemeralContainers; len(ecs) != 1 || ecs[0].ImagePullPolicy != corev1.PullAlways || ecs[0].TerminationMessagePolicy != corev1.TerminationMessageReadFile || ecs[0].TerminationMessagePath != "/dev/termination-log" {
		t.Fatalf("ephemeral containers %+v, want d1 defaulted (Always, File, /dev/termination-log)", ecs)
	}
	for _, c := range []struct{ patch, cause string }{
		{
			`{"spec":{"ephemeralContainers":[{"name":"d1","image":"busybox","env":[{"name":"A","value":"2"}],"targetContainerName":"c","stdin":true}]}}`,
			"Forbidden: existing ephemeral containers \"d1\" may not be changed\n@@ -9,7 +9,7 @@\n  \"Env\": [\n   {\n    \"Name\": \"A\",\n-   \"Value\": \"1\",\n+   \"Value\": \"2\",\n    \"ValueFrom\": null\n   }\n  ],\n",
		},
		{
			`{"spec":{"ephemeralContainers":[{"name":"d1","image":"busybox","env":[{"name":"A","value":"1"}],"targetContainerName":"c","stdin":false,"tty":true}]}}`,
			"Forbidden: existing ephemeral containers \"d1\" may not be changed\n@@ -31,8 +31,8 @@\n  \"TerminationMessagePolicy\": \"File\",\n  \"ImagePullPolicy\": \"Always\",\n  \"SecurityContext\": null,\n- \"Stdin\": true,\n+ \"Stdin\": false,\n  \"StdinOnce\": false,\n- \"TTY\": false,\n+ \"TTY\": true,\n  \"TargetContainerName\": \"c\"\n }\n",
		},
		{
			`{"spec":{"ephemeralContainers":[{"name":"d1","image":"busybox:2","env":[{"name":"A","value":"1"}],"targetContainerName":"c","stdin":true,"securityContext":{"privileged":true,"capabilities":{"add":["NET_ADMIN"]}}}]}}`,
			"Forbidden: existing ephemeral containers \"d1\" may not be changed\n@@ -1,6 +1,6 @@\n {\n  \"Name\": \"d1\",\n- \"Image\": \"busybox\",\n+ \"Image\": \"busybox:2\",\n  \"Command\": null,\n  \"Args\": null,\n  \"WorkingDir\": \"\",\n@@ -30,7 +30,25 @@\n  \"TerminationMessagePath\": \"/dev/termination-log\",\n  \"TerminationMessagePolicy\": \"File\",\n  \"ImagePullPolicy\": \"Always\",\n- \"SecurityContext\": null,\n+ \"SecurityContext\": {\n+  \"Capabilities\": {\n+   \"Add\": [\n+    \"NET_ADMIN\"\n+   ],\n+   \"Drop\": null\n+  },\n+  \"Privileged\": true,\n+  \"SELinuxOptions\": null,\n+  \"WindowsOptions\": null,\n+  \"RunAsUser\": null,\n+  \"RunAsGroup\": null,\n+  \"RunAsNonRoot\": null,\n+  \"ReadOnlyRootFilesystem\": null,\n+  \"AllowPrivilegeEscalation\": null,\n+  \"ProcMount\": null,\n+  \"SeccompProfile\": null,\n+  \"AppArmorProfile\": null\n+ },\n  \"Stdin\": true,\n  \"StdinOnce\": false,\n  \"TTY\": false,\n",
		},
	} {
		_, err := patch(c.patch)
		var causes []metav1.StatusCause
		if se, ok := err.(*apierrors.StatusError); ok && se.ErrStatus.Details != nil {
			causes = se.ErrStatus.Details.Causes
		}
		if !apierrors.IsInvalid(err) || len(causes) != 1 || causes[0].Message != c.cause || causes[0].Field != "spec.ephemeralContainers" {
			t.Errorf("patch %s:\n got %v (causes %q)\nwant 422 with the cause %q", c.patch, err, causes, c.cause)
		}
	}
	if got, err := pods.Get(ctx, "web", metav1.GetOptions{}); err != nil || got.Spec.EphemeralContainers[0].Env[0].Value != "1" || got.Spec.EphemeralContainers[0].Image != "busybox" {
		t.Errorf("after refused changes: %v, %+v", err, got.Spec.EphemeralContainers)
	}
}

// TestDeleteCollectionListOptions: a deletecollection reads its list options as upstream
// does (refused as a list's; a resourceVersion read exactly, as its pages are limited
// lists), takes its preconditions from the query, and answers with the objects it listed.
// A limited list at a resourceVersion is read at exactly that revision.
func TestDeleteCollectionListOptions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "dc")
	cms := s.Client.CoreV1().ConfigMaps("dc")
	before, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"dc": n}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(l *corev1.ConfigMapList) []string {
		var out []string
		for _, c := range l.Items {
			out = append(out, c.Name)
		}
		return out
	}
	// A limited list at the revision before the creates: read at it, empty.
	l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "dc", ResourceVersion: before.ResourceVersion, Limit: 10})
	if err != nil || len(l.Items) != 0 || l.ResourceVersion != before.ResourceVersion {
		t.Fatalf("limited list at %s: %v, %v at %s; want none at %s", before.ResourceVersion, err, names(l), l.ResourceVersion, before.ResourceVersion)
	}
	l, err = cms.List(ctx, metav1.ListOptions{LabelSelector: "dc", ResourceVersion: before.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 10})
	if err != nil || !slices.Equal(names(l), []string{"a", "b"}) {
		t.Fatalf("limited list not older than %s: %v, %v; want a, b", before.ResourceVersion, err, names(l))
	}
	del := func(q map[string]string) (*corev1.ConfigMapList, error) {
		req := s.Client.CoreV1().RESTClient().Delete().Namespace("dc").Resource("configmaps")
		for k, v := range q {
			req = req.Param(k, v)
		}
		out := &corev1.ConfigMapList{}
		err := req.Do(ctx).Into(out)
		return out, err
	}
	// At the revision before the creates: nothing listed, nothing deleted.
	got, err := del(map[string]string{"labelSelector": "dc", "resourceVersion": before.ResourceVersion})
	if err != nil || len(got.Items) != 0 || got.ResourceVersion != before.ResourceVersion {
		t.Fatalf("deletecollection at %s: %v, %v at %s; want none at %s", before.ResourceVersion, err, names(got), got.ResourceVersion, before.ResourceVersion)
	}
	for _, c := range []struct {
		q    map[string]string
		code int
		msg  string
	}{
		{map[string]string{"labelSelector": "dc", "limit": "x"}, http.StatusBadRequest, `strconv.ParseInt: parsing "x": invalid syntax`},
		{map[string]string{"labelSelector": "dc", "resourceVersionMatch": "Exact"}, http.StatusUnprocessableEntity, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{map[string]string{"labelSelector": "dc", "sendInitialEvents": "true"}, http.StatusUnprocessableEntity, `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{map[string]string{"labelSelector": "dc", "continue": "abc"}, http.StatusBadRequest, `invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value`},
		{map[string]string{"labelSelector": "dc", "uid": "xyz"}, http.StatusConflict, ""},
	} {
		_, err := del(c.q)
		if se, ok := err.(*apierrors.StatusError); !ok || int(se.ErrStatus.Code) != c.code || (c.msg != "" && se.ErrStatus.Message != c.msg) {
			t.Errorf("deletecollection %v: %v, want %d %s", c.q, err, c.code, c.msg)
		}
	}
	if l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "dc"}); err != nil || len(l.Items) != 2 {
		t.Fatalf("after refused deletecollections: %v, %v; want a, b", err, names(l))
	}
	// A limit ends after its page; the answer is what was listed.
	got, err = del(map[string]string{"labelSelector": "dc", "limit": "1"})
	if err != nil || !slices.Equal(names(got), []string{"a"}) || got.Continue == "" {
		t.Fatalf("deletecollection limit 1: %v, %v (continue %q); want a, with a continue token", err, names(got), got.Continue)
	}
	got, err = del(map[string]string{"labelSelector": "dc"})
	if err != nil || !slices.Equal(names(got), []string{"b"}) {
		t.Fatalf("deletecollection: %v, %v; want b", err, names(got))
	}
	if rv, _ := strconv.ParseInt(got.ResourceVersion, 10, 64); rv == 0 {
		t.Errorf("deletecollection's list at resourceVersion %q", got.ResourceVersion)
	}
}

// TestNamespaceSubresourceAnswers: namespaces/finalize validates each finalizer by index
// and is served for PUT alone (405 otherwise); namespaces/status keeps the phase in step
// with the deletion timestamp.
func TestNamespaceSubresourceAnswers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "fin")
	rc := s.Client.CoreV1().RESTClient()
	ns, err := s.Client.CoreV1().Namespaces().Get(ctx, "fin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := ns.DeepCopy()
	bad.Spec.Finalizers = []corev1.FinalizerName{"kubernetes", "bad finalizer"}
	_, err = s.Client.CoreV1().Namespaces().Finalize(ctx, bad, metav1.UpdateOptions{})
	expectInvalid(t, err, `Namespace "fin" is invalid: [spec.finalizers[1]: Invalid value: "bad finalizer": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.finalizers[1]: Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it fully qualified]`)
	stale := ns.DeepCopy()
	stale.ResourceVersion = "1"
	stale.Spec.Finalizers = []corev1.FinalizerName{"kubernetes", "example.com/hold"}
	if _, err := s.Client.CoreV1().Namespaces().Finalize(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("finalize at a stale resourceVersion: %v, want 409", err)
	}
	for _, verb := range []string{http.MethodGet, http.MethodPatch} {
		err := rc.Verb(verb).Resource("namespaces").Name("fin").SubResource("finalize").Body([]byte(`{}`)).SetHeader("Content-Type", "application/merge-patch+json").Do(ctx).Error()
		if !apierrors.IsMethodNotSupported(err) {
			t.Errorf("%s namespaces/fin/finalize: %v, want 405", verb, err)
		}
	}
	st := ns.DeepCopy()
	st.Status.Phase = corev1.NamespaceTerminating
	_, err = s.Client.CoreV1().Namespaces().UpdateStatus(ctx, st, metav1.UpdateOptions{})
	expectInvalid(t, err, "Namespace \"fin\" is invalid: status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty")
	if got, err := s.Client.CoreV1().Namespaces().Get(ctx, "fin", metav1.GetOptions{}); err != nil || got.Status.Phase != corev1.NamespaceActive || !slices.Equal(got.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) {
		t.Errorf("after refused writes: %v, %+v", err, got)
	}
}

// TestApplyTypeAnswers: server-side apply of a configuration of another kind, or of YAML
// that does not parse, answers upstream's 400s.
func TestApplyTypeAnswers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ap")
	apply := func(body string) error {
		return s.Client.CoreV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("ap").Resource("configmaps").Name("c").
			Param("fieldManager", "m").Body([]byte(body)).Do(ctx).Error()
	}
	for _, c := range []struct{ body, msg string }{
		{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, "invalid object type: /v1, Kind=Secret"},
		{`{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"c"}}`, "invalid object type: apps/v1, Kind=ConfigMap"},
		{"not: [yaml", "error encoding patch: yaml: line 1: did not find expected ',' or ']'"},
		{"[1,2]", "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{`{"metadata":{"name":"c"}}`, "invalid object type: /, Kind="},
	} {
		err := apply(c.body)
		if !apierrors.IsBadRequest(err) || err.Error() != c.msg {
			t.Errorf("apply %s: %v, want 400 %s", c.body, err, c.msg)
		}
	}
	if err := apply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`); err != nil {
		t.Errorf("apply of a ConfigMap: %v", err)
	}
	// A subresource is never created by an apply: a missing object is the answer first.
	err := s.Client.CoreV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("ap").Resource("pods").Name("nope").SubResource("status").
		Param("fieldManager", "m").Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nope"}}`)).Do(ctx).Error()
	if !apierrors.IsNotFound(err) || err.Error() != `pods "nope" not found` {
		t.Errorf("apply to a missing pod's status: %v, want 404", err)
	}
}

// TestImmutableSpecDiffs: the refusals of a pod, PVC or PV spec change print upstream's
// unified diff of its internal objects (testdata/immutable-diffs.golden.json, kube-apiserver
// v1.37.2's texts for the same objects and patches), and change nothing.
func TestImmutableSpecDiffs(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	raw, err := os.ReadFile("testdata/immutable-diffs.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "g2"}, Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{{
		Name: "c", Image: "nginx", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m")}}}}}
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "g2"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
		Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}}}
	if _, err := s.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "g2"}, Spec: corev1.PersistentVolumeSpec{
		Capacity: rl("storage", "1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a"}}}}
	if _, err := s.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key   string
		patch func() error
	}{
		{"podEnv", func() error {
			_, err := s.Client.CoreV1().Pods(ns).Patch(ctx, "g2", types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"2"}]}]}}`), metav1.PatchOptions{})
			return err
		}},
		{"podHostNetwork", func() error {
			_, err := s.Client.CoreV1().Pods(ns).Patch(ctx, "g2", types.StrategicMergePatchType, []byte(`{"spec":{"hostNetwork":true,"dnsPolicy":"Default"}}`), metav1.PatchOptions{})
			return err
		}},
		{"pvcSpec", func() error {
			_, err := s.Client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "g2", types.MergePatchType, []byte(`{"spec":{"accessModes":["ReadWriteMany"],"selector":{"matchLabels":{"x":"z"}}}}`), metav1.PatchOptions{})
			return err
		}},
		{"pvSource", func() error {
			_, err := s.Client.CoreV1().PersistentVolumes().Patch(ctx, "g2", types.MergePatchType, []byte(`{"spec":{"hostPath":{"path":"/b"}}}`), metav1.PatchOptions{})
			return err
		}},
	} {
		expectInvalid(t, c.patch(), want[c.key])
	}
	if p, err := s.Client.CoreV1().Pods(ns).Get(ctx, "g2", metav1.GetOptions{}); err != nil || p.Spec.Containers[0].Env[0].Value != "1" || p.Spec.HostNetwork {
		t.Errorf("pod after refused patches: %v, %+v", err, p.Spec)
	}
}

// TestPodServiceAccountAlias: a pod's deprecated spec.serviceAccount is kept in step with
// spec.serviceAccountName (defaulted from it, set with it by the ServiceAccount admission
// plugin), as upstream writes both, in pod templates too.
func TestPodServiceAccountAlias(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "sa")
	if _, err := s.Client.CoreV1().ServiceAccounts("sa").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, san, dsa, want string }{
		{"none", "", "", "default"},
		{"named", "robot", "", "robot"},
		{"deprecated-only", "", "robot", "robot"},
		{"both", "robot", "default", "robot"},
	} {
		p := podWith(c.name, nil, nil)
		p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = c.san, c.dsa //nolint:staticcheck // SA1019: the alias under test
		got, err := s.Client.CoreV1().Pods("sa").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Spec.ServiceAccountName != c.want || got.Spec.DeprecatedServiceAccount != c.want { //nolint:staticcheck // SA1019: the alias under test
			t.Errorf("%s: serviceAccountName %q, serviceAccount %q; want both %q", c.name, got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount, c.want) //nolint:staticcheck // SA1019
		}
	}
	tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Template: corev1.PodTemplateSpec{Spec: podWith("x", nil, nil).Spec}}
	tmpl.Template.Spec.ServiceAccountName = "robot"
	got, err := s.Client.CoreV1().PodTemplates("sa").Create(ctx, tmpl, metav1.CreateOptions{})
	if err != nil || got.Template.Spec.DeprecatedServiceAccount != "robot" { //nolint:staticcheck // SA1019: the alias under test
		t.Errorf("pod template: %v, serviceAccount %q; want robot", err, got.Template.Spec.DeprecatedServiceAccount) //nolint:staticcheck // SA1019
	}
}

// TestResourceQuotaStatusValidated: a /status write of a negative or unknown usage is
// refused with upstream's texts, not silently replaced by the computed usage.
func TestResourceQuotaStatusValidated(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "qs")
	mkQuota(t, s, "qs", "q", map[string]string{"pods": "2"})
	rq, err := s.Client.CoreV1().ResourceQuotas("qs").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	neg := rq.DeepCopy()
	neg.Status.Used = rl("pods", "-1")
	_, err = s.Client.CoreV1().ResourceQuotas("qs").UpdateStatus(ctx, neg, metav1.UpdateOptions{})
	expectInvalid(t, err, `ResourceQuota "q" is invalid: status.used[pods]: Invalid value: "-1": must be greater than or equal to 0`)
	_, err = s.Client.CoreV1().ResourceQuotas("qs").Patch(ctx, "q", types.MergePatchType, []byte(`{"status":{"used":{"bogus":"1"}}}`), metav1.PatchOptions{}, "status")
	expectInvalid(t, err, `ResourceQuota "q" is invalid: [status.used[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified, status.used[bogus]: Invalid value: "bogus": must be a standard resource for quota]`)
	expectUsed(t, s, "qs", "q", map[string]string{"pods": "0"})
}

// TestReplayedAnswers: requests that kube-apiserver v1.37.2 refused, replayed with its
// answers (testdata/answers-*.json: method, path, body, code and message of each):
// refusals whose message carries a struct (an update strategy, a PodDisruptionBudget's
// spec, a duplicated taint or toleration, a security context, a FlowSchema's spec, an
// access review's attributes…) printed as upstream prints its internal objects; pod specs
// refused by validation (containers, resources, ports, probes, volumes, scheduling
// constraints) and by admission.
func TestReplayedAnswers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	files, err := filepath.Glob("testdata/answers-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no answers: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []struct {
			Method, Path, Body, Message string
			Code                        int
		}
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			path, query, _ := strings.Cut(c.Path, "?")
			req := s.Client.CoreV1().RESTClient().Verb(c.Method).AbsPath(path).SetHeader("Content-Type", "application/json").Body([]byte(c.Body))
			if query != "" {
				q, err := url.ParseQuery(query)
				if err != nil {
					t.Fatal(err)
				}
				for k, vs := range q {
					for _, v := range vs {
						req = req.Param(k, v)
					}
				}
			}
			err := req.Do(ctx).Error()
			se, ok := err.(*apierrors.StatusError)
			if !ok || int(se.ErrStatus.Code) != c.Code || se.ErrStatus.Message != c.Message {
				t.Errorf("%s: %s %s %.200s:\n got %v\nwant %d %s", f, c.Method, c.Path, c.Body, err, c.Code, c.Message)
			}
		}
	}
}

// TestPodLabelKeysMerged: a new pod's matchLabelKeys and mismatchLabelKeys are merged into
// their selectors as upstream merges them (for the keys the pod has labels for), and the
// template the pod was made from keeps its own selector.
func TestPodLabelKeysMerged(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	p := podWith("m", nil, nil)
	p.Labels = map[string]string{"app": "a", "ver": "1"}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}
	p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: sel, TopologyKey: "k", MatchLabelKeys: []string{"app"}, MismatchLabelKeys: []string{"ver"}}}}}
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "k", WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, MatchLabelKeys: []string{"ver", "nolabel"}}}
	got, err := s.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a"}}, {Key: "ver", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"1"}}}
	if e := got.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions; !reflect.DeepEqual(e, want) {
		t.Errorf("pod affinity selector's expressions %v, want %v", e, want)
	}
	wantTS := []metav1.LabelSelectorRequirement{{Key: "ver", Operator: metav1.LabelSelectorOpIn, Values: []string{"1"}}}
	if e := got.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions; !reflect.DeepEqual(e, wantTS) {
		t.Errorf("spread constraint selector's expressions %v, want %v", e, wantTS)
	}
	if len(sel.MatchExpressions) != 0 {
		t.Errorf("the client's selector changed: %v", sel)
	}
	// A pod of a Deployment: the template keeps its selector.
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a", "ver": "1"}}, Spec: p.Spec}}}
	d.Spec.Template.Spec.Affinity = nil
	d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "k", WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, MatchLabelKeys: []string{"ver"}}}
	if _, err := s.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.Client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=a,ver=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || pod.Name == "m" {
			continue
		}
		if e := pod.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions; !reflect.DeepEqual(e, wantTS) {
			t.Errorf("the Deployment's pod: expressions %v, want %v", e, wantTS)
		}
		break
	}
	rs, err := s.Client.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(rs.Items) != 1 {
		t.Fatalf("replica sets: %v, %d", err, len(rs.Items))
	}
	if e := rs.Items[0].Spec.Template.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions; len(e) != 0 {
		t.Errorf("the ReplicaSet's template took the merge: %v", e)
	}
}

// TestPVCDataSourcesNormalized: a claim's data sources as upstream keeps them: a dataSource
// naming a claim fills dataSourceRef; one naming something else (a Pod) is dropped, as
// upstream has always dropped it; a dataSourceRef alone fills dataSource; and an update from
// a client that omits dataSourceRef keeps it (not refused as a spec change).
func TestPVCDataSourcesNormalized(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	claims := s.Client.CoreV1().PersistentVolumeClaims("default")
	mk := func(name string, ds *corev1.TypedLocalObjectReference, ref *corev1.TypedObjectReference) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")},
			DataSource: ds, DataSourceRef: ref}}
		got, err := claims.Create(ctx, c, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return got
	}
	clone := mk("clone", &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}, nil)
	if r := clone.Spec.DataSourceRef; r == nil || r.Kind != "PersistentVolumeClaim" || r.Name != "src" || r.APIGroup != nil {
		t.Errorf("clone: dataSourceRef %+v, want the claim src", r)
	}
	if pod := mk("pod", &corev1.TypedLocalObjectReference{Kind: "Pod", Name: "p"}, nil); pod.Spec.DataSource != nil || pod.Spec.DataSourceRef != nil {
		t.Errorf("a Pod as data source: %+v, %+v; want both dropped", pod.Spec.DataSource, pod.Spec.DataSourceRef)
	}
	g := "example.com"
	pop := mk("populated", nil, &corev1.TypedObjectReference{APIGroup: &g, Kind: "Widget", Name: "w"})
	if d := pop.Spec.DataSource; d == nil || d.Kind != "Widget" || d.APIGroup == nil || *d.APIGroup != g {
		t.Errorf("dataSourceRef alone: dataSource %+v, want the Widget", d)
	}
	// An update from a client that omits dataSourceRef keeps it.
	clone.Spec.DataSourceRef = nil
	clone.Labels = map[string]string{"a": "b"}
	got, err := claims.Update(ctx, clone, metav1.UpdateOptions{})
	if err != nil || got.Spec.DataSourceRef == nil {
		t.Errorf("update without dataSourceRef: %v, %+v", err, got)
	}
}

// TestSuspendedJobTemplate: a suspended Job that never started may change its containers'
// resources and its scheduling directives (1.37's MutablePodResourcesForSuspendedJobs and
// MutableSchedulingDirectivesForSuspendedJobs); anything else of its pod spec is refused
// at spec.template.spec, as upstream refuses it; a running Job's template at spec.template.
func TestSuspendedJobTemplate(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	jobs := s.Client.BatchV1().Jobs("default")
	mk := func(name string, suspend bool) {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{Suspend: ptr.To(suspend), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m")}}}}}}}
		if _, err := jobs.Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch := func(name, body string) (*batchv1.Job, error) {
		return jobs.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	}
	mk("held", true)
	got, err := patch("held", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"200m"}}}],"nodeSelector":{"a":"b"}}}}}`)
	if err != nil || got.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String() != "200m" || got.Spec.Template.Spec.NodeSelector["a"] != "b" {
		t.Fatalf("resources and node selector of a suspended Job: %v, %+v", err, got)
	}
	for _, c := range []struct{ name, body, field string }{
		{"held", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}}}`, "spec.template.spec"},
		{"held", `{"spec":{"template":{"spec":{"activeDeadlineSeconds":5}}}}`, "spec.template.spec"},
	} {
		_, err := patch(c.name, c.body)
		se, ok := err.(*apierrors.StatusError)
		if !ok || !apierrors.IsInvalid(err) || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Field != c.field ||
			!strings.HasPrefix(se.ErrStatus.Details.Causes[0].Message, `Invalid value: {"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c"`) ||
			!strings.HasSuffix(se.ErrStatus.Details.Causes[0].Message, ": field is immutable") {
			t.Errorf("%s %s: %v, want 422 at %s with the pod spec as upstream prints it", c.name, c.body, err, c.field)
		}
	}
	mk("running", false)
	_, err = patch("running", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}}}`)
	if se, ok := err.(*apierrors.StatusError); !ok || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Field != "spec.template" ||
		!strings.HasPrefix(se.ErrStatus.Details.Causes[0].Message, `Invalid value: {"labels":{`) {
		t.Errorf("a running Job's template: %v, want 422 at spec.template, its metadata promoted by its tags", err)
	}
}
