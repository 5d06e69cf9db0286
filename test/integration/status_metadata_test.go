package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestStatusWritesApplyMetadataAsUpstream: a /status write applies the object's labels and
// annotations for the kinds whose upstream status strategy resets only the spec (Jobs,
// CronJobs, DaemonSets, PodDisruptionBudgets, Services; Deployments keep their labels),
// and keeps the stored metadata for the kinds whose strategy resets it
// (ResetObjectMetaForStatus: ServiceCIDRs). Upstream's [sig-apps] conformance specs patch
// annotations through /status this way ("CronJob should support CronJob API operations",
// "Job should apply changes to a job status").
func TestStatusWritesApplyMetadataAsUpstream(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "status-meta"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	labels := map[string]string{"app": "x"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	suspend := true
	zero := int32(0)
	const patch = `{"metadata":{"annotations":{"patchedstatus":"true"},"labels":{"patched":"true"}}}`
	type patched struct{ annotations, labels map[string]string }
	for _, tc := range []struct {
		kind          string
		create        func() error
		patch         func() (metav1.Object, error)
		keepsLabels   bool // the write's labels are applied
		keepsNotation bool // the write's annotations are applied
	}{
		{"Job", func() error {
			_, err := s.Client.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Suspend: &suspend, Template: tmpl}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.BatchV1().Jobs(ns).Patch(ctx, "j", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, true, true},
		{"CronJob", func() error {
			_, err := s.Client.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj"}, Spec: batchv1.CronJobSpec{Schedule: "*/1 * * * *", Suspend: &suspend,
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.BatchV1().CronJobs(ns).Patch(ctx, "cj", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, true, true},
		{"Deployment", func() error {
			t := tmpl
			t.Spec.RestartPolicy = corev1.RestartPolicyAlways
			_, err := s.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: sel, Template: t}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.AppsV1().Deployments(ns).Patch(ctx, "d", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, false, true},
		{"DaemonSet", func() error {
			t := tmpl
			t.Spec.RestartPolicy = corev1.RestartPolicyAlways
			_, err := s.Client.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds"}, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: t}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.AppsV1().DaemonSets(ns).Patch(ctx, "ds", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, true, true},
		{"PodDisruptionBudget", func() error {
			one := intstr.FromInt32(1)
			_, err := s.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel, MinAvailable: &one}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.PolicyV1().PodDisruptionBudgets(ns).Patch(ctx, "pdb", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, true, true},
		{"Service", func() error {
			_, err := s.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.CoreV1().Services(ns).Patch(ctx, "svc", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, true, true},
		{"ServiceCIDR", func() error {
			_, err := s.Client.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.250.0.0/24"}}}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return s.Client.NetworkingV1().ServiceCIDRs().Patch(ctx, "extra", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		}, false, false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if err := tc.create(); err != nil {
				t.Fatal(err)
			}
			o, err := tc.patch()
			if err != nil {
				t.Fatal(err)
			}
			got := patched{o.GetAnnotations(), o.GetLabels()}
			if (got.annotations["patchedstatus"] == "true") != tc.keepsNotation || (got.labels["patched"] == "true") != tc.keepsLabels {
				t.Fatalf("after a /status patch: annotations %v, labels %v; want annotation applied %v, label applied %v",
					got.annotations, got.labels, tc.keepsNotation, tc.keepsLabels)
			}
		})
	}
}
