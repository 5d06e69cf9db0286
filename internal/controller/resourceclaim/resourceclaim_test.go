package resourceclaim

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

var (
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	claimsGVR = resourcev1.SchemeGroupVersion.WithResource("resourceclaims")
	eventsGVR = corev1.SchemeGroupVersion.WithResource("events")
)

func pod(name string, claims ...corev1.PodResourceClaim) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "pod-uid"},
		Spec: corev1.PodSpec{ResourceClaims: claims, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

func fromTemplate(name, template string) corev1.PodResourceClaim {
	return corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: &template}
}

func template(name string) *resourcev1.ResourceClaimTemplate {
	t := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	t.Spec.ObjectMeta.Labels = map[string]string{"l": "v"}
	t.Spec.ObjectMeta.Annotations = map[string]string{"a": "b"}
	t.Spec.Spec.Devices.Requests = []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}
	return t
}

func newController() (*Controller, *fake.Client) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fc := fake.New(clk)
	return New(fc, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Clock: clk}), fc
}

func claims(fc *fake.Client) []*resourcev1.ResourceClaim {
	var out []*resourcev1.ResourceClaim
	for _, o := range fc.Objects(claimsGVR, "ns") {
		out = append(out, o.(*resourcev1.ResourceClaim))
	}
	return out
}

// TestSyncCreatesClaimFromTemplate: the claim is upstream's (generateName, annotation,
// owner, labels, spec) and the pod's status names it; a second sync changes nothing.
func TestSyncCreatesClaimFromTemplate(t *testing.T) {
	c, fc := newController()
	fc.Add(pod("web", fromTemplate("gpu", "tpl"), corev1.PodResourceClaim{Name: "direct", ResourceClaimName: ptr.To("mine")}), template("tpl"))
	if _, err := c.Sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	got := claims(fc)
	if len(got) != 1 {
		t.Fatalf("claims %d, want 1", len(got))
	}
	claim := got[0]
	if !strings.HasPrefix(claim.Name, "web-gpu-") || claim.GenerateName != "web-gpu-" {
		t.Errorf("name %q generateName %q, want web-gpu-*", claim.Name, claim.GenerateName)
	}
	if claim.Annotations[resourcev1.PodResourceClaimAnnotation] != "gpu" || claim.Annotations["a"] != "b" || claim.Labels["l"] != "v" {
		t.Errorf("metadata %v %v", claim.Annotations, claim.Labels)
	}
	ref := metav1.GetControllerOf(claim)
	if ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "web" || ref.UID != "pod-uid" || ref.BlockOwnerDeletion != nil {
		t.Errorf("owner %+v", claim.OwnerReferences)
	}
	if len(claim.Spec.Devices.Requests) != 1 || claim.Spec.Devices.Requests[0].Exactly.DeviceClassName != "gpu.example.com" {
		t.Errorf("spec %+v", claim.Spec)
	}
	p := fc.Object(podsGVR, "ns", "web").(*corev1.Pod)
	if s := p.Status.ResourceClaimStatuses; len(s) != 1 || s[0].Name != "gpu" || *s[0].ResourceClaimName != claim.Name {
		t.Errorf("resourceClaimStatuses %+v", s)
	}
	if _, err := c.Sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(claims(fc)); n != 1 {
		t.Errorf("after a second sync: %d claims", n)
	}
}

// TestSyncFindsGeneratedClaim: a claim generated before the status was written is
// recorded instead of creating another; a deleted one is created anew.
func TestSyncFindsGeneratedClaim(t *testing.T) {
	c, fc := newController()
	p := pod("web", fromTemplate("gpu", "tpl"))
	existing := claimFor(p, "gpu", template("tpl"))
	existing.Name, existing.Namespace = "web-gpu-old", "ns"
	fc.Add(p, template("tpl"), existing)
	if _, err := c.Sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(claims(fc)); n != 1 {
		t.Fatalf("claims %d, want the existing one", n)
	}
	got := fc.Object(podsGVR, "ns", "web").(*corev1.Pod).Status.ResourceClaimStatuses
	if len(got) != 1 || *got[0].ResourceClaimName != "web-gpu-old" {
		t.Fatalf("statuses %+v", got)
	}
	res := fc.Catalogue().Get(claimsGVR)
	if _, err := fc.Delete(context.Background(), res, "ns", "web-gpu-old", metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	now := claims(fc)
	got = fc.Object(podsGVR, "ns", "web").(*corev1.Pod).Status.ResourceClaimStatuses
	if len(now) != 1 || len(got) != 1 || *got[0].ResourceClaimName != now[0].Name || now[0].Name == "web-gpu-old" {
		t.Fatalf("after deleting the claim: claims %v statuses %+v", now, got)
	}
}

// TestSyncRefused: a refused create is a Warning Event on the pod with upstream's text,
// and the sync fails (retried with backoff); nothing is recorded in the pod's status.
func TestSyncRefused(t *testing.T) {
	c, fc := newController()
	fc.Add(pod("web", fromTemplate("gpu", "tpl")), template("tpl"))
	quotaErr := apierrors.NewForbidden(schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}, "web-gpu-x",
		errors.New("exceeded quota: q, requested: count/resourceclaims.resource.k8s.io=1, used: count/resourceclaims.resource.k8s.io=1, limited: count/resourceclaims.resource.k8s.io=1"))
	fc.SetRefuse(func(verb string, res *registry.Resource, obj runtime.Object) error {
		if verb == "create" && res.GVR == claimsGVR {
			return quotaErr
		}
		return nil
	})
	if _, err := c.Sync(context.Background(), "ns/web"); err == nil {
		t.Fatal("sync succeeded, want the refusal")
	}
	// The recorder writes asynchronously: wait for the event.
	var evs []runtime.Object
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		evs = fc.Objects(eventsGVR, "ns")
		return len(evs) > 0, nil
	})
	var found bool
	for _, o := range evs {
		e := o.(*corev1.Event)
		want := "PodResourceClaim gpu: create ResourceClaim : " + quotaErr.Error()
		if e.Reason == "FailedResourceClaimCreation" && e.Type == corev1.EventTypeWarning && e.Message == want && e.InvolvedObject.Name == "web" {
			found = true
		} else {
			t.Logf("event %s %s %q", e.Type, e.Reason, e.Message)
		}
	}
	if !found {
		t.Error("no FailedResourceClaimCreation event")
	}
	if s := fc.Object(podsGVR, "ns", "web").(*corev1.Pod).Status.ResourceClaimStatuses; len(s) != 0 {
		t.Errorf("statuses %+v", s)
	}
	// Once admitted, the retry creates it.
	fc.SetRefuse(nil)
	if _, err := c.Sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	if n := len(claims(fc)); n != 1 {
		t.Errorf("claims %d after the retry", n)
	}
}

// TestSyncDonePod: a Succeeded pod's unallocated generated claims are deleted; an
// allocated one and claims of others are kept; a missing template is an error.
func TestSyncDonePod(t *testing.T) {
	c, fc := newController()
	p := pod("web", fromTemplate("gpu", "tpl"), fromTemplate("fpga", "tpl"))
	p.Status.Phase = corev1.PodSucceeded
	unallocated := claimFor(p, "gpu", template("tpl"))
	unallocated.Name, unallocated.Namespace = "web-gpu-a", "ns"
	allocated := claimFor(p, "fpga", template("tpl"))
	allocated.Name, allocated.Namespace = "web-fpga-b", "ns"
	allocated.Status.Allocation = &resourcev1.AllocationResult{}
	other := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"}}
	fc.Add(p, unallocated, allocated, other)
	if _, err := c.Sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cl := range claims(fc) {
		names = append(names, cl.Name)
	}
	if strings.Join(names, ",") != "other,web-fpga-b" {
		t.Errorf("claims left %v, want other,web-fpga-b", names)
	}

	c, fc = newController()
	fc.Add(pod("web", fromTemplate("gpu", "none")))
	_, err := c.Sync(context.Background(), "ns/web")
	if err == nil || !strings.Contains(err.Error(), `pod ns/web, PodResourceClaim gpu: resource claim template "none": `) {
		t.Errorf("missing template: %v", err)
	}
}

// TestClaimForLongNames: names past 57 characters are shortened as upstream does.
func TestClaimForLongNames(t *testing.T) {
	p := pod(strings.Repeat("p", 60))
	got := claimFor(p, strings.Repeat("c", 20), template("tpl")).GenerateName
	// 82 characters: the pod's 60*57/82 = 41, the claim's 20*57/82 = 13.
	want := strings.Repeat("p", 41) + "-" + strings.Repeat("c", 13)
	if got != want {
		t.Errorf("generateName %q, want %q", got, want)
	}
}
