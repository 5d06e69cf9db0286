package quotafit

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/quota/fit"
)

// source is a fake Source counting its reads: one quota, pods: 2 (and count/deployments.apps:
// 0 when full), nothing used.
type source struct {
	full         bool
	quotas, pods int
}

func (s *source) Quotas(context.Context, string) ([]fit.Quota, error) {
	s.quotas++
	h := corev1.ResourceList{"pods": resource.MustParse("2")}
	used := corev1.ResourceList{"pods": resource.MustParse("0")}
	if s.full {
		h["count/deployments.apps"], used["count/deployments.apps"] = resource.MustParse("0"), resource.MustParse("0")
	}
	return []fit.Quota{{Quota: corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Spec: corev1.ResourceQuotaSpec{Hard: h}, Status: corev1.ResourceQuotaStatus{Hard: h, Used: used}}}}, nil
}

func (s *source) Pod(_ context.Context, _ string, p *corev1.Pod) (*corev1.Pod, error) {
	s.pods++
	return p, nil
}

func deployment(replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
}

// TestValidateWarnsOnlyWorkloads: a workload write adding replicas that do not fit warns;
// every other write reads nothing at all.
func TestValidateWarnsOnlyWorkloads(t *testing.T) {
	deployments := appsv1.SchemeGroupVersion.WithResource("deployments")
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	for _, c := range []struct {
		name  string
		sink  bool
		a     admission.Attributes
		reads int
		warn  []string
	}{
		{"deployment of 5", true, admission.Attributes{Operation: admission.Create, Resource: deployments, Namespace: "ns", Object: deployment(5)}, 1,
			[]string{"only 2 of 5 replicas fit quota small: pods: 1 per replica, used 0, limited 2"}},
		{"deployment of 2 fits", true, admission.Attributes{Operation: admission.Create, Resource: deployments, Namespace: "ns", Object: deployment(2)}, 1, nil},
		{"scaled 1 to 4", true, admission.Attributes{Operation: admission.Update, Resource: deployments, Namespace: "ns", Object: deployment(4), OldObject: deployment(1)}, 1,
			[]string{"only 2 of 3 replicas fit quota small: pods: 1 per replica, used 0, limited 2"}},
		{"refused deployment: its 403 says it", true, admission.Attributes{Operation: admission.Create, Resource: deployments, Namespace: "ns", Object: deployment(5)}, 1, nil},
		{"unchanged replicas", true, admission.Attributes{Operation: admission.Update, Resource: deployments, Namespace: "ns", Object: deployment(4), OldObject: deployment(4)}, 0, nil},
		{"status write", true, admission.Attributes{Operation: admission.Update, Resource: deployments, Subresource: "status", Namespace: "ns", Object: deployment(9), OldObject: deployment(1)}, 0, nil},
		{"in-process controller", false, admission.Attributes{Operation: admission.Create, Resource: deployments, Namespace: "ns", Object: deployment(5)}, 0, nil},
		{"pod", true, admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns", Object: &corev1.Pod{}}, 0, nil},
		{"delete", true, admission.Attributes{Operation: admission.Delete, Resource: deployments, Namespace: "ns", OldObject: deployment(5)}, 0, nil},
	} {
		src := &source{full: strings.HasPrefix(c.name, "refused")}
		p := &Plugin{Registry: evaluator.NewRegistry(), Source: src}
		var got []string
		ctx := context.Background()
		if c.sink {
			ctx = admission.WithWarnings(ctx, func(m string) { got = append(got, m) })
		}
		a := c.a
		if err := p.Validate(ctx, &a); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if src.quotas != c.reads || src.pods != c.reads {
			t.Errorf("%s: %d quota and %d pod reads, want %d", c.name, src.quotas, src.pods, c.reads)
		}
		if !slices.Equal(got, c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.warn)
		}
	}
}

// TestValidateCostsNothingForPods: the pod create path allocates nothing here.
func TestValidateCostsNothingForPods(t *testing.T) {
	p := &Plugin{Registry: evaluator.NewRegistry(), Source: &source{}}
	ctx := admission.WithWarnings(context.Background(), func(string) {})
	a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "ns", Object: runtime.Object(&corev1.Pod{})}
	if n := testing.AllocsPerRun(100, func() { _ = p.Validate(ctx, a) }); n != 0 {
		t.Errorf("%v allocations per pod create", n)
	}
}

// noQuotas is a Source of a namespace without quotas.
type noQuotas struct{ source }

func (s *noQuotas) Quotas(context.Context, string) ([]fit.Quota, error) {
	s.quotas++
	return nil, nil
}

// TestReviewWithoutQuotas: without quotas (nor limitedResources) every replica fits, and
// no template pod is prepared.
func TestReviewWithoutQuotas(t *testing.T) {
	src := &noQuotas{}
	p := &Plugin{Registry: evaluator.NewRegistry(), Source: src}
	r, err := p.Review(context.Background(), "ns", appsv1.SchemeGroupVersion.WithResource("deployments").GroupResource(), deployment(7), nil, nil)
	if err != nil || !r.Status.Allowed || !r.Status.Fits || r.Status.Replicas != 7 || r.Status.ReplicasFit != 7 || len(r.Status.Quotas) != 0 {
		t.Errorf("review %+v, %v", r.Status, err)
	}
	if src.pods != 0 {
		t.Errorf("%d template pods prepared", src.pods)
	}
}
