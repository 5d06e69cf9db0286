package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestQuantityBoundsRefused: quantities beyond 2^63-1, and texts ParseQuantity would take
// minutes on, are a 422 naming the field, dry-run included, from JSON and protobuf
// clients. (Before, one such dry-run kept a core busy for more than ten minutes and grew
// memory past 1 GB; the test only needs the answer to come back.)
func TestQuantityBoundsRefused(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "qb")
	rc := s.Client.CoreV1().RESTClient()
	for _, tc := range []struct{ resource, body, want string }{
		{"resourcequotas", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"huge"},"spec":{"hard":{"pods":"1e1000000000"}}}`,
			`ResourceQuota "huge" is invalid: spec.hard[pods]: Invalid value: "1e1000000000": must be less than or equal to 9223372036854775807`},
		{"resourcequotas", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"big"},"spec":{"hard":{"requests.memory":"9223372036854775808"}}}`,
			`ResourceQuota "big" is invalid: spec.hard[requests.memory]: Invalid value: "9223372036854775808": must be less than or equal to 9223372036854775807`},
		{"pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"tiny"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1e-1000000000"}}}]}}`,
			`Pod "tiny" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "1e-1000000000": must be 0 or at least 1e-64 in absolute value`},
		{"limitranges", `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","max":{"cpu":"9223372036854775808"}}]}}`,
			// The text is refused as decoded, before max is defaulted into default and
			// defaultRequest.
			`LimitRange "lr" is invalid: spec.limits[0].max[cpu]: Invalid value: "9223372036854775808": must be less than or equal to 9223372036854775807`},
	} {
		err := rc.Post().Namespace("qb").Resource(tc.resource).Param("dryRun", "All").
			SetHeader("Content-Type", "application/json").Body([]byte(tc.body)).Do(ctx).Error()
		if !apierrors.IsInvalid(err) || err.Error() != tc.want {
			t.Errorf("dry-run create %s:\n got %v\nwant 422 %s", tc.resource, err, tc.want)
		}
	}

	// A protobuf client (kubectl's typed clients' encoding) sending a text that stalled
	// the protobuf decoder.
	cfg := rest.CopyConfig(s.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	pb, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tiny := resource.NewScaledQuantity(1, -999999999)
	tiny.Format = resource.DecimalExponent
	p := pod("proto", "", "")
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *tiny}
	_, err = pb.CoreV1().Pods("qb").Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	want := `Pod "proto" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "1e-999999999": must be 0 or at least 1e-64 in absolute value`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("protobuf dry-run create:\n got %v\nwant 422 %s", err, want)
	}
}

// TestQuantityHugeHardStored: a quota stored before quantities were bounded (hard written
// straight into etcd) still lets pods be created and charged exactly, at the cost of a
// normal quota, and can be fixed by an update (before, each pod create against hard
// 1e10000000 took 1.7 s, and against 1e1000000000 hours).
func TestQuantityHugeHardStored(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "qh")
	mkQuota(t, s, "qh", "q", map[string]string{"pods": "1", "requests.cpu": "100m"})

	// 1. Write hard pods and requests.cpu 1e1000000000 behind the registry's back.
	key := registry.KeyPrefix(corev1.SchemeGroupVersion.WithResource("resourcequotas").GroupResource(), "qh") + "q"
	servertest.EditStored(t, s, key, func(rq *corev1.ResourceQuota) {
		for _, hard := range []corev1.ResourceList{rq.Spec.Hard, rq.Status.Hard} {
			hard[corev1.ResourcePods] = resource.MustParse("1e1000000000")
			hard[corev1.ResourceRequestsCPU] = resource.MustParse("1e1000000000")
		}
	})

	// 2. Pods are admitted once admission sees the new hard (the old one allowed one pod).
	create := func(name string) error {
		_, err := s.Client.CoreV1().Pods("qh").Create(ctx, pod(name, "100m", ""), metaCreate())
		return err
	}
	if err := create("p0"); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 50*time.Second, true, func(context.Context) (bool, error) {
		err := create("p1")
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("second pod never admitted under hard pods=1e1000000000: %v", err)
	}
	for _, name := range []string{"p2", "p3"} {
		if err := create(name); err != nil {
			t.Fatal(err)
		}
	}
	// 3. Charged exactly; a delete credits exactly; the quota reads back as stored.
	expectUsed(t, s, "qh", "q", map[string]string{"pods": "4", "requests.cpu": "400m"})
	if err := s.Client.CoreV1().Pods("qh").Delete(ctx, "p3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "qh", "q", map[string]string{"pods": "3", "requests.cpu": "300m"})
	got, err := s.Client.CoreV1().ResourceQuotas("qh").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := got.Status.Hard[corev1.ResourcePods]; h.String() != "10e999999999" {
		t.Errorf("status.hard[pods] reads back as %s", h.String())
	}
	// 4. A write carrying the stored values back is refused (they are beyond the bound)...
	if _, err := s.Client.CoreV1().ResourceQuotas("qh").Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("update carrying hard 10e999999999: %v, want 422", err)
	}
	// ...and one within it fixes the quota, which is then enforced.
	fixed := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", ResourceVersion: got.ResourceVersion},
		Spec:       corev1.ResourceQuotaSpec{Hard: rl("pods", "3", "requests.cpu", "1")},
	}
	if _, err := s.Client.CoreV1().ResourceQuotas("qh").Update(ctx, fixed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "qh", "q", map[string]string{"pods": "3", "requests.cpu": "300m"})
	expectForbidden(t, create("p4"), `pods "p4" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3`)
}

// TestQuantityBeyondBoundNotStored: quantities whose value is beyond 2^63-1 only by a
// little, in the forms ParseQuantity would cap silently at 2^63-1 (8Ei is 2^63), are a 422
// naming the field on create, patch and apply, and nothing is stored or changed.
func TestQuantityBeyondBoundNotStored(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "qe")
	rc := s.Client.CoreV1().RESTClient()
	const large = "must be less than or equal to 9223372036854775807"
	for _, tc := range []struct{ resource, name, body, want string }{
		{"resourcequotas", "eight", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"eight"},"spec":{"hard":{"cpu":"8Ei"}}}`,
			`ResourceQuota "eight" is invalid: spec.hard[cpu]: Invalid value: "8Ei": ` + large},
		{"pods", "nine", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nine"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"memory":"9Ei"}}}]}}`,
			`Pod "nine" is invalid: spec.containers[0].resources.requests[memory]: Invalid value: "9Ei": ` + large},
		{"persistentvolumeclaims", "claim", `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"claim"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"8192Pi"}}}}`,
			`PersistentVolumeClaim "claim" is invalid: spec.resources.requests[storage]: Invalid value: "8192Pi": ` + large},
		{"limitranges", "lr", `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","max":{"memory":"9.3E"}}]}}`,
			`LimitRange "lr" is invalid: spec.limits[0].max[memory]: Invalid value: "9.3E": ` + large},
	} {
		var code int
		err := rc.Post().Namespace("qe").Resource(tc.resource).
			SetHeader("Content-Type", "application/json").Body([]byte(tc.body)).Do(ctx).StatusCode(&code).Error()
		if code != 422 || !apierrors.IsInvalid(err) || err.Error() != tc.want {
			t.Errorf("create %s: %d %v\nwant 422 %s", tc.resource, code, err, tc.want)
		}
		if err := rc.Get().Namespace("qe").Resource(tc.resource).Name(tc.name).Do(ctx).Error(); !apierrors.IsNotFound(err) {
			t.Errorf("get %s/%s after the refused create: %v, want 404", tc.resource, tc.name, err)
		}
	}

	// At the bound, stored as sent.
	body := `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"cpu":"9223372036854775807","memory":"7Ei"}}}`
	if err := rc.Post().Namespace("qe").Resource("resourcequotas").
		SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	before, err := s.Client.CoreV1().ResourceQuotas("qe").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu, mem := before.Spec.Hard[corev1.ResourceCPU], before.Spec.Hard[corev1.ResourceMemory]; cpu.String() != "9223372036854775807" || mem.String() != "7Ei" {
		t.Errorf("stored hard cpu=%s memory=%s, want 9223372036854775807 and 7Ei", cpu.String(), mem.String())
	}

	// Patches and apply: the patched object is decoded as a body is.
	for _, tc := range []struct {
		pt    types.PatchType
		patch string
	}{
		{types.MergePatchType, `{"spec":{"hard":{"cpu":"8Ei"}}}`},
		{types.StrategicMergePatchType, `{"spec":{"hard":{"memory":"-9Ei"}}}`},
		{types.JSONPatchType, `[{"op":"replace","path":"/spec/hard/cpu","value":"8.000001Ei"}]`},
		{types.ApplyPatchType, `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"cpu":"9223372036854775808"}}}`},
	} {
		req := rc.Patch(tc.pt).Namespace("qe").Resource("resourcequotas").Name("q").Body([]byte(tc.patch))
		if tc.pt == types.ApplyPatchType {
			req = req.Param("fieldManager", "test").Param("force", "true")
		}
		var code int
		err := req.Do(ctx).StatusCode(&code).Error()
		if code != 422 || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `ResourceQuota "q" is invalid: spec.hard[`) {
			t.Errorf("%s patch %s: %d %v, want 422 naming spec.hard", tc.pt, tc.patch, code, err)
		}
	}
	after, err := s.Client.CoreV1().ResourceQuotas("qe").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("quota changed by refused patches: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
	}
}
