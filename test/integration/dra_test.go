package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// extendedPod is a pod whose one container requests (and is limited to) n of name.
func extendedPod(name string, res corev1.ResourceName, n int64) *corev1.Pod {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	return &corev1.Pod{ObjectMeta: meta(name), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{res: q}, Limits: corev1.ResourceList{res: q}}}}}}
}

// TestDRAExtendedResourceQuota: a DeviceClass naming example.com/gpu makes claims for it
// charge requests.example.com/gpu and requests.deviceclass.resource.kubernetes.io/<class>,
// summed with the pods requesting those names; past hard is refused with upstream's text;
// usage is exact after deletes.
func TestDRAExtendedResourceQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns, class = "dra-q", "gpu.example.com"
	mkNamespace(t, s, ns)
	rc := s.Client.ResourceV1()
	if _, err := rc.DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: meta(class),
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ptr.To("example.com/gpu")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	implicit := "requests.deviceclass.resource.kubernetes.io/" + class
	mkQuota(t, s, ns, "q", map[string]string{"requests.example.com/gpu": "3", implicit: "4", "count/resourceclaims.resource.k8s.io": "3"})
	want := func(gpu, impl, claims string) {
		t.Helper()
		waitFor(t, func() bool {
			u := used(t, s, ns, "q")
			return u["requests.example.com/gpu"] == gpu && u[implicit] == impl && u["count/resourceclaims.resource.k8s.io"] == claims
		})
	}
	if _, err := rc.ResourceClaims(ns).Create(ctx, exactClaim("c1", class, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("2", "2", "1")
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, extendedPod("p1", "example.com/gpu", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("3", "2", "1")
	_, err := rc.ResourceClaims(ns).Create(ctx, exactClaim("c2", class, 1), metav1.CreateOptions{})
	const refused = `resourceclaims.resource.k8s.io "c2" is forbidden: exceeded quota: q, requested: requests.example.com/gpu=1, used: requests.example.com/gpu=3, limited: requests.example.com/gpu=3`
	if !apierrors.IsForbidden(err) || err.Error() != refused {
		t.Fatalf("claim past hard: %v\nwant %s", err, refused)
	}
	_, err = s.Client.CoreV1().Pods(ns).Create(ctx, extendedPod("p2", "example.com/gpu", 1), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: q, requested: requests.example.com/gpu=1, used: requests.example.com/gpu=3, limited: requests.example.com/gpu=3") {
		t.Fatalf("pod past hard: %v", err)
	}
	// The implicit name of the class, requested by a pod.
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, extendedPod("p3", corev1.ResourceName("deviceclass.resource.kubernetes.io/"+class), 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("3", "4", "1")
	for _, name := range []string{"p1", "p3"} {
		if err := s.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want("2", "2", "1")
	if err := rc.ResourceClaims(ns).Delete(ctx, "c1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("0", "0", "0")
	s.CheckInvariant()
}

// TestDRAClaimFromTemplate: the ResourceClaim controller creates a pod's claim from its
// template (named from the pod, owned by it, named in its status), charged like any
// claim; a claim refused by quota is a FailedResourceClaimCreation Event on the pod and
// is created once the quota allows; claims go with their pods and usage ends exact.
func TestDRAClaimFromTemplate(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns, class = "dra-t", "gpu.example.com"
	mkNamespace(t, s, ns)
	rc := s.Client.ResourceV1()
	if _, err := rc.DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: meta(class),
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ptr.To("example.com/gpu")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.ResourceClaimTemplates(ns).Create(ctx, &resourcev1.ResourceClaimTemplate{ObjectMeta: meta("tpl"),
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: exactClaim("", class, 2).Spec}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mkQuota(t, s, ns, "q", map[string]string{"count/resourceclaims.resource.k8s.io": "1", "requests.example.com/gpu": "2"})
	podWithClaim := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: meta(name), Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("tpl")}}}}
	}
	claimOf := func(pod string) string {
		p, err := s.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range p.Status.ResourceClaimStatuses {
			if st.Name == "gpu" && st.ResourceClaimName != nil {
				return *st.ResourceClaimName
			}
		}
		return ""
	}
	a, err := s.Client.CoreV1().Pods(ns).Create(ctx, podWithClaim("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return claimOf("a") != "" })
	claim, err := rc.ResourceClaims(ns).Get(ctx, claimOf("a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(claim)
	if !strings.HasPrefix(claim.Name, "a-gpu-") || ref == nil || ref.UID != a.UID || claim.Annotations[resourcev1.PodResourceClaimAnnotation] != "gpu" {
		t.Fatalf("claim %s owners %+v annotations %v", claim.Name, claim.OwnerReferences, claim.Annotations)
	}
	waitFor(t, func() bool {
		u := used(t, s, ns, "q")
		return u["count/resourceclaims.resource.k8s.io"] == "1" && u["requests.example.com/gpu"] == "2"
	})

	// A second pod's claim is refused by quota: an Event on the pod says so.
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, podWithClaim("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const exceeded = "exceeded quota: q, requested: count/resourceclaims.resource.k8s.io=1,requests.example.com/gpu=2, used: count/resourceclaims.resource.k8s.io=1,requests.example.com/gpu=2, limited: count/resourceclaims.resource.k8s.io=1,requests.example.com/gpu=2"
	var message string
	waitFor(t, func() bool {
		evs, err := s.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=b,reason=FailedResourceClaimCreation"})
		if err != nil || len(evs.Items) == 0 {
			return false
		}
		message = evs.Items[0].Message
		return evs.Items[0].Type == corev1.EventTypeWarning && evs.Items[0].Source.Component == "resource_claim"
	})
	if !strings.HasPrefix(message, "PodResourceClaim gpu: create ResourceClaim : resourceclaims.resource.k8s.io ") || !strings.HasSuffix(message, " is forbidden: "+exceeded) {
		t.Errorf("event message %q", message)
	}
	if claimOf("b") != "" {
		t.Fatal("b's claim created past hard")
	}

	// a goes, with its claim; b's claim is then admitted.
	if err := s.Client.CoreV1().Pods(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return claimOf("b") != "" })
	claims, err := rc.ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(claims.Items) != 1 || claims.Items[0].Name != claimOf("b") {
		t.Fatalf("claims after a's deletion: %v %v", claims, err)
	}
	if err := s.Client.CoreV1().Pods(ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		l, err := rc.ResourceClaims(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0
	})
	u := used(t, s, ns, "q")
	if u["count/resourceclaims.resource.k8s.io"] != "0" || u["requests.example.com/gpu"] != "0" {
		t.Errorf("used after the deletes: %v", u)
	}
	s.CheckInvariant()
}
