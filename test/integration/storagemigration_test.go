package integration

import (
	"strings"
	"testing"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestStorageVersionMigrations: storagemigration.k8s.io/v1 StorageVersionMigrations are
// created, listed, labelled and deleted; the resource is required, the spec immutable;
// /status takes conditions but never Succeeded and Failed both true, nor takes back a
// Succeeded, and its resourceVersion never changes once set — upstream's texts.
func TestStorageVersionMigrations(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	c := s.Client.StoragemigrationV1().StorageVersionMigrations()
	_, err := c.Create(ctx, &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "none"}}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.resource.resource: Required value: resource is required to be set") {
		t.Fatalf("missing resource: %v", err)
	}
	svm, err := c.Create(ctx, &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svm.Spec.Resource.Resource = "configmaps"
	if _, err := c.Update(ctx, svm, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec: Invalid value") || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("spec change: %v", err)
	}
	svm.Spec.Resource.Resource = "secrets"
	svm.Labels = map[string]string{"why": "rotation"}
	if svm, err = c.Update(ctx, svm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Done", Message: "m", LastTransitionTime: metav1.Now()}
	}
	svm.Status.Conditions = []metav1.Condition{cond("Succeeded"), cond("Failed")}
	if _, err := c.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "Both success and failed conditions cannot be true at the same time") {
		t.Errorf("both: %v", err)
	}
	svm.Status.Conditions = []metav1.Condition{cond("Succeeded")}
	svm.Status.ResourceVersion = "42"
	if svm, err = c.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svm.Status.Conditions[0].Status = metav1.ConditionFalse
	if _, err := c.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "Success condition cannot be set to false once it is true") {
		t.Errorf("success taken back: %v", err)
	}
	svm.Status.Conditions[0].Status = metav1.ConditionTrue
	svm.Status.ResourceVersion = "43"
	if _, err := c.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "status.resourceVersion: Invalid value: \"43\": field is immutable") {
		t.Errorf("resourceVersion changed: %v", err)
	}
	list, err := c.List(ctx, metav1.ListOptions{LabelSelector: "why=rotation"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Status.ResourceVersion != "42" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := c.Delete(ctx, "secrets", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
