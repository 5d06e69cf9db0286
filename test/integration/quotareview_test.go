package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/server/servertest"
)

const quotaReviewsPath = "/apis/quota.quotad.io/v1/namespaces/%s/quotareviews"

// reviewRaw posts a QuotaReview whose spec.object is obj (marshalled as is) and returns
// the answer or the error.
func reviewRaw(ctx context.Context, c kubernetes.Interface, ns string, object []byte, replicas *int32) (*fit.QuotaReview, error) {
	body, err := json.Marshal(map[string]any{
		"apiVersion": "quota.quotad.io/v1", "kind": "QuotaReview",
		"spec": map[string]any{"object": json.RawMessage(object), "replicas": replicas},
	})
	if err != nil {
		return nil, err
	}
	if object == nil {
		body = []byte(`{"apiVersion":"quota.quotad.io/v1","kind":"QuotaReview","spec":{}}`)
	}
	raw, err := c.CoreV1().RESTClient().Post().AbsPath(fmt.Sprintf(quotaReviewsPath, ns)).
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
	if err != nil {
		var st metav1.Status
		if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" {
			return nil, &apierrors.StatusError{ErrStatus: st}
		}
		return nil, fmt.Errorf("%w (body %s)", err, raw)
	}
	out := &fit.QuotaReview{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("decoding %s: %v", raw, err)
	}
	return out, nil
}

// review posts a QuotaReview of a typed object.
func review(t *testing.T, c kubernetes.Interface, ns string, obj runtime.Object, replicas *int32) *fit.QuotaReview {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	r, err := reviewRaw(ctxT(t), c, ns, b, replicas)
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	return r
}

func reviewPod(name string, cpuReq, cpuLim string) *corev1.Pod {
	c := corev1.Container{Name: "app", Image: "nginx"}
	if cpuReq != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuReq)}
	}
	if cpuLim != "" {
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLim)}
	}
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

func reviewDeployment(name string, replicas int32, cpuReq string) *appsv1.Deployment {
	p := reviewPod("", cpuReq, "")
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: p.Spec}}}
}

// resourceOf returns one resource of one quota of a review, failing when absent.
func resourceOf(t *testing.T, r *fit.QuotaReview, q string, name corev1.ResourceName) fit.ResourceFit {
	t.Helper()
	for _, qf := range r.Status.Quotas {
		if qf.Name != q {
			continue
		}
		for _, rf := range qf.Resources {
			if rf.Name == name {
				return rf
			}
		}
	}
	t.Fatalf("no %s of quota %s in %+v", name, q, r.Status)
	return fit.ResourceFit{}
}

// TestQuotaReviewAnswers asks about a Pod (LimitRanger's defaults applied), a Deployment
// with replicas, a PVC, a custom resource under a count quota and an existing Deployment
// scaled, and checks that nothing was charged.
func TestQuotaReviewAnswers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "qr")
	mkQuota(t, s, "qr", "compute", map[string]string{"requests.cpu": "2", "pods": "10", "count/deployments.apps": "5", "requests.storage": "10Gi", "count/gadgets.example.com": "1"})
	if _, err := s.Client.CoreV1().LimitRanges("qr").Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 1. A Pod without requests gets LimitRanger's 500m, as its create would.
	r := review(t, s.Client, "qr", reviewPod("p", "", ""), nil)
	if !r.Status.Allowed || !r.Status.Fits || r.Status.Operation != "CREATE" || r.Status.Replicas != 1 || r.Status.ReplicasFit != 1 {
		t.Errorf("pod: %+v", r.Status)
	}
	if rf := resourceOf(t, r, "compute", "requests.cpu"); rf.Requested.String() != "500m" || rf.Hard.String() != "2" || rf.Remaining.String() != "2" || !rf.Fits {
		t.Errorf("pod requests.cpu: %+v", rf)
	}

	// 2. A Deployment of 10: 4 replicas of 500m fit requests.cpu: 2.
	r = review(t, s.Client, "qr", reviewDeployment("web", 10, ""), nil)
	if !r.Status.Allowed || r.Status.Fits || r.Status.Replicas != 10 || r.Status.ReplicasFit != 4 {
		t.Errorf("deployment: %+v", r.Status)
	}
	wantWarn := []string{"only 4 of 10 replicas fit quota compute: requests.cpu: 500m per replica, used 0, limited 2"}
	if !slices.Equal(r.Status.Warnings, wantWarn) {
		t.Errorf("deployment warnings %q, want %q", r.Status.Warnings, wantWarn)
	}
	if rf := resourceOf(t, r, "compute", "requests.cpu"); rf.PerReplica == nil || rf.PerReplica.String() != "500m" || rf.Requested.String() != "5" || rf.Fits {
		t.Errorf("deployment requests.cpu: %+v", rf)
	}
	if rf := resourceOf(t, r, "compute", "count/deployments.apps"); rf.Requested.String() != "1" || rf.PerReplica != nil {
		t.Errorf("deployment count: %+v", rf)
	}
	// spec.replicas overrides the object's.
	if r = review(t, s.Client, "qr", reviewDeployment("web", 10, ""), int32p(3)); !r.Status.Fits || r.Status.Replicas != 3 || r.Status.ReplicasFit != 3 {
		t.Errorf("deployment with replicas 3: %+v", r.Status)
	}

	// 3. A PVC over requests.storage: refused with the 403 of its dry-run create.
	pvc := &corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}, ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")}}}}
	r = review(t, s.Client, "qr", pvc, nil)
	_, dryErr := s.Client.CoreV1().PersistentVolumeClaims("qr").Create(ctx, pvc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if r.Status.Allowed || dryErr == nil || r.Status.Reason != dryErr.Error() {
		t.Errorf("pvc: %+v, dry run %v", r.Status, dryErr)
	}
	if r.Status.Reason != `persistentvolumeclaims "data" is forbidden: exceeded quota: compute, requested: requests.storage=20Gi, used: requests.storage=0, limited: requests.storage=10Gi` {
		t.Errorf("pvc reason %q", r.Status.Reason)
	}

	// 4. A custom resource under count/gadgets.example.com: 1.
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetCRD("gadgets", "Gadget", apiextensionsv1.NamespaceScoped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadget := func(name string) []byte {
		b, _ := json.Marshal(cr("Gadget", name, map[string]interface{}{"size": int64(1)}).Object)
		return b
	}
	r, err = reviewRaw(ctx, s.Client, "qr", gadget("one"), nil)
	if err != nil || !r.Status.Allowed || !r.Status.Fits || len(r.Status.Quotas) != 1 {
		t.Fatalf("gadget one: %+v, %v", r, err)
	}
	gadgets := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("qr")
	if _, err := gadgets.Create(ctx, cr("Gadget", "one", map[string]interface{}{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err = reviewRaw(ctx, s.Client, "qr", gadget("two"), nil)
	if err != nil || r.Status.Allowed || r.Status.Reason != `gadgets.example.com "two" is forbidden: exceeded quota: compute, requested: count/gadgets.example.com=1, used: count/gadgets.example.com=1, limited: count/gadgets.example.com=1` {
		t.Errorf("gadget two: %+v, %v", r, err)
	}
	// The stored one again is an update that consumes nothing more.
	if r, err = reviewRaw(ctx, s.Client, "qr", gadget("one"), nil); err != nil || !r.Status.Allowed || r.Status.Operation != "UPDATE" {
		t.Errorf("gadget one again: %+v, %v", r, err)
	}

	// 5. An existing Deployment scaled from 1 to 5: an update adding 4 replicas; what fits
	// is what its own numbers say (the controller creates its pod meanwhile).
	if _, err := s.Client.AppsV1().Deployments("qr").Create(ctx, reviewDeployment("api", 1, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = review(t, s.Client, "qr", reviewDeployment("api", 5, ""), nil)
	if r.Status.Operation != "UPDATE" || r.Status.Replicas != 4 || !r.Status.Allowed {
		t.Errorf("scaled deployment: %+v", r.Status)
	}
	for _, rf := range r.Status.Quotas[0].Resources {
		if rf.Name == "count/deployments.apps" {
			t.Errorf("scaled deployment charges its count again: %+v", rf)
		}
	}
	cpu := resourceOf(t, r, "compute", "requests.cpu")
	room := cpu.Hard.DeepCopy()
	room.Sub(cpu.Used)
	fitting := int32(room.MilliValue() / cpu.PerReplica.MilliValue())
	if want := min(fitting, 4); r.Status.ReplicasFit != want {
		t.Errorf("scaled deployment: %d replicas fit, its numbers say %d (%+v)", r.Status.ReplicasFit, want, cpu)
	}

	// 6. Nothing was charged by any review: one gadget, one deployment, its pods only.
	q, err := s.Client.CoreV1().ResourceQuotas("qr").Get(ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g, d, st := q.Status.Used["count/gadgets.example.com"], q.Status.Used["count/deployments.apps"], q.Status.Used["requests.storage"]; g.String() != "1" || d.String() != "1" || st.String() != "0" {
		t.Errorf("used after reviews: %v", q.Status.Used)
	}
}

// TestQuotaReviewRefusals: upstream-style errors for bad questions, 405 for other verbs,
// and discovery's entry.
func TestQuotaReviewRefusals(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "qr")
	for _, c := range []struct {
		name   string
		object []byte
		code   int
		msg    string
	}{
		{"no object", nil, 422, `QuotaReview.quota.quotad.io "" is invalid: spec.object: Required value`},
		{"no kind", []byte(`{"apiVersion":"v1","metadata":{"name":"x"}}`), 422, `QuotaReview.quota.quotad.io "" is invalid: spec.object.kind: Required value`},
		{"unknown kind", []byte(`{"apiVersion":"v1","kind":"Gizmo","metadata":{"name":"x"}}`), 422, `QuotaReview.quota.quotad.io "" is invalid: spec.object.kind: Invalid value: "Gizmo": no kind "Gizmo" is served in version "v1"`},
		{"cluster-scoped", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}`), 422, `QuotaReview.quota.quotad.io "" is invalid: spec.object.kind: Invalid value: "Namespace": must be a namespaced kind`},
		{"other namespace", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}`), 400, `the namespace of the provided object does not match the namespace sent on the request`},
		{"invalid object", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{}}`), 422, `Pod "x" is invalid: spec.containers: Required value`},
		{"unknown field", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"bogus":1}`), 400, `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"`},
	} {
		_, err := reviewRaw(ctx, s.Client, "qr", c.object, nil)
		var se *apierrors.StatusError
		if !asStatus(err, &se) || int(se.ErrStatus.Code) != c.code || se.ErrStatus.Message != c.msg {
			t.Errorf("%s: err %v, want %d %q", c.name, err, c.code, c.msg)
		}
	}
	if _, err := reviewRaw(ctx, s.Client, "qr", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`), int32p(-1)); !apierrors.IsInvalid(err) {
		t.Errorf("negative replicas: %v", err)
	}
	// Other verbs: 405.
	base := fmt.Sprintf(quotaReviewsPath, "qr")
	for _, req := range []*rest.Request{
		s.Client.CoreV1().RESTClient().Get().AbsPath(base),
		s.Client.CoreV1().RESTClient().Get().AbsPath(base + "/x"),
		s.Client.CoreV1().RESTClient().Delete().AbsPath(base + "/x"),
		s.Client.CoreV1().RESTClient().Put().AbsPath(base + "/x").Body([]byte(`{}`)),
	} {
		if err := req.Do(ctx).Error(); !apierrors.IsMethodNotSupported(err) {
			t.Errorf("%s: %v, want 405", req.URL(), err)
		}
	}
	// Discovery: namespaced, create only.
	rl, err := s.Client.Discovery().ServerResourcesForGroupVersion("quota.quotad.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.APIResources) != 1 || rl.APIResources[0].Name != "quotareviews" || !rl.APIResources[0].Namespaced || rl.APIResources[0].Kind != "QuotaReview" ||
		!slices.Equal(rl.APIResources[0].Verbs, []string{"create"}) {
		t.Errorf("discovery: %+v", rl.APIResources)
	}
}

// TestQuotaReviewRBAC: a tenant bound to edit may ask; an unbound user may not.
func TestQuotaReviewRBAC(t *testing.T) {
	t.Parallel()
	s := rbacServer(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "team-a")
	mkQuota(t, s, "team-a", "compute", map[string]string{"pods": "2"})
	if _, err := s.Client.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-edit"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := clientFor(t, configAs(s, "alice-token"))
	r := review(t, alice, "team-a", reviewDeployment("web", 3, "100m"), nil)
	if !r.Status.Allowed || r.Status.ReplicasFit != 2 || r.Status.Replicas != 3 {
		t.Errorf("alice's review: %+v", r.Status)
	}
	bob := clientFor(t, configAs(s, "bob-token"))
	b, _ := json.Marshal(reviewPod("p", "", ""))
	_, err := reviewRaw(ctx, bob, "team-a", b, nil)
	wantForbidden(t, "bob's review", err, `quotareviews.quota.quotad.io is forbidden: User "bob" cannot create resource "quotareviews" in API group "quota.quotad.io" in the namespace "team-a"`)
}

// TestQuotaReviewMatchesDryRun generates random quotas (hard values, scopes) and random
// pods, and checks that the review's decision is the dry-run create's, and that neither
// charged anything.
func TestQuotaReviewMatchesDryRun(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "rnd", map[string]string{"team": "rnd"})
	seed := time.Now().UnixNano()
	if v := os.Getenv("QUOTAREVIEW_SEED"); v != "" { // to replay a failure
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	t.Logf("seed %d (QUOTAREVIEW_SEED replays it)", seed)
	rng := rand.New(rand.NewSource(seed))
	pick := func(vs ...string) string { return vs[rng.Intn(len(vs))] }
	randomPod := func(name string) *corev1.Pod {
		p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		// Best effort, random per resource, or requests and limits of everything.
		style := rng.Intn(5)
		for i := 0; i < 1+rng.Intn(2); i++ {
			c := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "nginx"}
			for _, rn := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				vals := []string{"100m", "250m", "1", "2"}
				if rn == corev1.ResourceMemory {
					vals = []string{"64Mi", "128Mi", "1Gi"}
				}
				how := 0
				switch {
				case style == 1:
					how = rng.Intn(4)
				case style > 1:
					how = 3
				}
				switch how {
				case 1:
					c.Resources.Requests = setRL(c.Resources.Requests, rn, pick(vals...))
				case 2:
					c.Resources.Limits = setRL(c.Resources.Limits, rn, pick(vals...))
				case 3:
					v := pick(vals...)
					c.Resources.Requests = setRL(c.Resources.Requests, rn, v)
					c.Resources.Limits = setRL(c.Resources.Limits, rn, pick(v, vals[len(vals)-1]))
				}
			}
			p.Spec.Containers = append(p.Spec.Containers, c)
		}
		if rng.Intn(3) == 0 {
			d := int64(600)
			p.Spec.ActiveDeadlineSeconds = &d
		}
		return p
	}
	// Some pods that stay (nothing runs them), so quotas start with usage.
	for i := 0; i < 4; i++ {
		p := randomPod(fmt.Sprintf("base-%d", i))
		_, _ = s.Client.CoreV1().Pods("rnd").Create(ctx, p, metav1.CreateOptions{})
	}
	names := []string{"pods", "count/pods", "requests.cpu", "limits.cpu", "requests.memory", "limits.memory", "cpu", "memory"}
	scopes := []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}
	ws := &warnings{}
	wcfg := rest.CopyConfig(s.Config)
	wcfg.WarningHandler = ws
	wc := clientFor(t, wcfg)
	reviewed, allowed, warned := 0, 0, 0
	for round := 0; round < 12; round++ {
		// 1. Random quotas.
		if err := s.Client.CoreV1().ResourceQuotas("rnd").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		for qi := 0; qi < 1+rng.Intn(3); qi++ {
			rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%d-%d", round, qi)}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
			for _, n := range names {
				if rng.Intn(4) != 0 {
					continue
				}
				v := pick("0", "3", "6", "20")
				switch {
				case strings.Contains(n, "cpu"):
					v = pick("0", "300m", "2500m", "8", "100")
				case strings.Contains(n, "memory"):
					v = pick("0", "100Mi", "4Gi", "64Gi")
				}
				rq.Spec.Hard[corev1.ResourceName(n)] = resource.MustParse(v)
			}
			if len(rq.Spec.Hard) == 0 {
				rq.Spec.Hard["pods"] = resource.MustParse(pick("1", "5"))
			}
			// Enforcement modes and thresholds: admission's findings, the review's warnings.
			rq.Annotations = map[string]string{}
			if m := pick("", "", "Warn", "Audit"); m != "" {
				rq.Annotations[fit.GroupName+"/enforcement"] = m
			}
			if rng.Intn(4) == 0 {
				rq.Annotations[fit.GroupName+"/warn-at"] = pick("10%", "50%")
			}
			if rng.Intn(2) == 0 {
				sc := scopes[rng.Intn(len(scopes))]
				rq.Spec.Scopes = []corev1.ResourceQuotaScope{sc}
				if sc == corev1.ResourceQuotaScopeBestEffort { // only pod counts fit BestEffort
					rq.Spec.Hard = corev1.ResourceList{"pods": resource.MustParse(pick("0", "2", "9"))}
				}
			}
			if _, err := s.Client.CoreV1().ResourceQuotas("rnd").Create(ctx, rq, metav1.CreateOptions{}); err != nil {
				t.Fatalf("quota %v: %v", rq.Spec, err)
			}
		}
		// A cluster quota selecting the namespace, every other round on average.
		if err := s.Dynamic.Resource(crqGVR).Delete(ctx, "rnd-cluster", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if rng.Intn(2) == 0 {
			hard := corev1.ResourceList{"pods": resource.MustParse(pick("4", "9", "20"))}
			if rng.Intn(2) == 0 {
				hard["requests.cpu"] = resource.MustParse(pick("500m", "2", "5"))
			}
			if _, err := createCRQ(t, s, clusterQuota("rnd-cluster", "rnd", hard), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		crqBefore, _ := s.Dynamic.Resource(crqGVR).Get(ctx, "rnd-cluster", metav1.GetOptions{})
		before, err := s.Client.CoreV1().ResourceQuotas("rnd").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// 2. Random pods: the review's answer is the dry-run create's.
		for pi := 0; pi < 8; pi++ {
			p := randomPod(fmt.Sprintf("p-%d-%d", round, pi))
			b, _ := json.Marshal(p)
			r, reviewErr := reviewRaw(ctx, s.Client, "rnd", b, nil)
			_, dryErr := wc.CoreV1().Pods("rnd").Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			dryWarnings := ws.take()
			if len(dryWarnings) > 0 {
				warned++
			}
			reviewed++
			switch {
			case dryErr == nil:
				allowed++
				if reviewErr != nil || !r.Status.Allowed {
					t.Errorf("round %d pod %s %v: dry run admits, review says %+v / %v", round, p.Name, p.Spec.Containers, r, reviewErr)
				} else if !slices.Equal(r.Status.Warnings, dryWarnings) {
					t.Errorf("round %d pod %s: dry run warned %q, review %q", round, p.Name, dryWarnings, r.Status.Warnings)
				}
			case apierrors.IsForbidden(dryErr):
				if reviewErr != nil || r.Status.Allowed || r.Status.Reason != dryErr.Error() {
					t.Errorf("round %d pod %s: dry run %v, review %+v / %v", round, p.Name, dryErr, r, reviewErr)
				}
			default: // refused before quota (validation): the review refuses the same way
				if reviewErr == nil || reviewErr.Error() != dryErr.Error() {
					t.Errorf("round %d pod %s: dry run %v, review error %v", round, p.Name, dryErr, reviewErr)
				}
			}
		}
		// 3. Nothing charged.
		after, err := s.Client.CoreV1().ResourceQuotas("rnd").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range before.Items {
			if a, b := after.Items[i].Status.Used, before.Items[i].Status.Used; !equalRL(a, b) {
				t.Errorf("round %d quota %s: used %v before, %v after", round, before.Items[i].Name, b, a)
			}
		}
		if crqBefore != nil {
			crqAfter, err := s.Dynamic.Resource(crqGVR).Get(ctx, "rnd-cluster", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := crqAfter.GetResourceVersion(), crqBefore.GetResourceVersion(); a != b {
				t.Errorf("round %d: the cluster quota was written (resourceVersion %s, then %s)", round, b, a)
			}
		}
	}
	t.Logf("%d pods reviewed, %d admitted, %d with warnings", reviewed, allowed, warned)
	if allowed == 0 || allowed == reviewed {
		t.Logf("note: every pod had the same answer this run")
	}
}

func setRL(rl corev1.ResourceList, n corev1.ResourceName, v string) corev1.ResourceList {
	if rl == nil {
		rl = corev1.ResourceList{}
	}
	rl[n] = resource.MustParse(v)
	return rl
}

// TestQuotaReviewWorkloadWarnings: creating or scaling a workload whose replicas do not
// all fit gets a Warning header, read by client-go's warning handler.
func TestQuotaReviewWorkloadWarnings(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	c := clientFor(t, cfg)

	// 1. requests.cpu: 1500m and a Deployment of 10 replicas of 500m: 3 fit.
	mkNamespace(t, s, "cpu")
	mkQuota(t, s, "cpu", "compute", map[string]string{"requests.cpu": "1500m"})
	if _, err := c.AppsV1().Deployments("cpu").Create(ctx, reviewDeployment("web", 10, "500m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"only 3 of 10 replicas fit quota compute: requests.cpu: 500m per replica, used 0, limited 1500m"}
	if got := ws.take(); !slices.Equal(got, want) {
		t.Errorf("deployment create warnings %q, want %q", got, want)
	}

	// 2. pods: 0 refuses every pod, so usage stays 0 whatever the controllers do: every
	// workload kind warns on create, and a Deployment again on scale (the added ones).
	mkNamespace(t, s, "zero")
	mkQuota(t, s, "zero", "none", map[string]string{"pods": "0"})
	tmpl := reviewDeployment("x", 1, "").Spec.Template
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	two := int32(2)
	for _, w := range []struct {
		kind   string
		create func() error
	}{
		{"Deployment", func() error {
			_, err := c.AppsV1().Deployments("zero").Create(ctx, reviewDeployment("x", 2, ""), metav1.CreateOptions{})
			return err
		}},
		{"ReplicaSet", func() error {
			_, err := c.AppsV1().ReplicaSets("zero").Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: appsv1.ReplicaSetSpec{Replicas: &two, Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
			return err
		}},
		{"StatefulSet", func() error {
			_, err := c.AppsV1().StatefulSets("zero").Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: appsv1.StatefulSetSpec{Replicas: &two, Selector: sel, Template: tmpl, ServiceName: "x"}}, metav1.CreateOptions{})
			return err
		}},
		{"ReplicationController", func() error {
			_, err := c.CoreV1().ReplicationControllers("zero").Create(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.ReplicationControllerSpec{Replicas: &two, Selector: map[string]string{"app": "x"}, Template: &tmpl}}, metav1.CreateOptions{})
			return err
		}},
		{"Job", func() error {
			jt := *tmpl.DeepCopy()
			jt.Spec.RestartPolicy = corev1.RestartPolicyNever
			jt.Labels = nil
			_, err := c.BatchV1().Jobs("zero").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: batchv1.JobSpec{Parallelism: &two, Template: jt}}, metav1.CreateOptions{})
			return err
		}},
	} {
		if err := w.create(); err != nil {
			t.Fatalf("%s: %v", w.kind, err)
		}
		want := []string{"only 0 of 2 replicas fit quota none: pods: 1 per replica, used 0, limited 0"}
		if got := ws.take(); !slices.Equal(got, want) {
			t.Errorf("%s create warnings %q, want %q", w.kind, got, want)
		}
	}
	// Scaling up through /scale warns about the replicas it adds; scaling down does not.
	sc, err := c.AppsV1().Deployments("zero").GetScale(ctx, "x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec.Replicas = 5
	sc.ResourceVersion = ""
	if _, err := c.AppsV1().Deployments("zero").UpdateScale(ctx, "x", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = []string{"only 0 of 3 replicas fit quota none: pods: 1 per replica, used 0, limited 0"}
	if got := ws.take(); !slices.Equal(got, want) {
		t.Errorf("scale up warnings %q, want %q", got, want)
	}
	sc.Spec.Replicas = 1
	if _, err := c.AppsV1().Deployments("zero").UpdateScale(ctx, "x", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ws.take(); len(got) != 0 {
		t.Errorf("scale down warnings %q", got)
	}
	// Writes of other kinds never warn.
	if _, err := c.CoreV1().ConfigMaps("zero").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ws.take(); len(got) != 0 {
		t.Errorf("configmap warnings %q", got)
	}
}

// TestQuotaReviewClusterQuota: the cluster quotas selecting the namespace are reviewed after
// its ResourceQuotas, named as such in the answer and in the workload warning.
func TestQuotaReviewClusterQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "c1", map[string]string{"team": "c"})
	mkQuota(t, s, "c1", "local", map[string]string{"pods": "10"})
	if _, err := createCRQ(t, s, clusterQuota("team-c", "c", corev1.ResourceList{"pods": resource.MustParse("2")}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := review(t, s.Client, "c1", reviewDeployment("web", 5, ""), nil)
	if len(r.Status.Quotas) != 2 || r.Status.Quotas[0].Kind != "ResourceQuota" || r.Status.Quotas[0].Name != "local" ||
		r.Status.Quotas[1].Kind != "ClusterResourceQuota" || r.Status.Quotas[1].Name != "team-c" || r.Status.ReplicasFit != 2 {
		t.Errorf("review: %+v", r.Status)
	}
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	if _, err := clientFor(t, cfg).AppsV1().Deployments("c1").Create(ctx, reviewDeployment("web", 5, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"only 2 of 5 replicas fit cluster quota team-c: pods: 1 per replica, used 0, limited 2"}
	if got := ws.take(); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}
