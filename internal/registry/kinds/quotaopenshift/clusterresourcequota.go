package quotaopenshift

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/table"
)

// ClusterResourceQuota is the strategy of clusterresourcequotas.
type ClusterResourceQuota struct{}

// ConvertToTable prints upstream's columns.
func (ClusterResourceQuota) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ClusterResourceQuotaPrinter().Convert(objs, now, include, false)
}

// Validate returns the errors OpenShift reports for a new cluster quota.
func (ClusterResourceQuota) Validate(obj runtime.Object) field.ErrorList {
	return clusterquota.Validate(obj.(*clusterquota.ClusterResourceQuota))
}

// ValidateUpdate returns OpenShift's errors for an update.
func (ClusterResourceQuota) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return clusterquota.ValidateUpdate(obj.(*clusterquota.ClusterResourceQuota), old.(*clusterquota.ClusterResourceQuota))
}

// Warnings are the crossed warn-at thresholds' texts.
func (ClusterResourceQuota) Warnings(obj runtime.Object) []string {
	crq := obj.(*clusterquota.ClusterResourceQuota)
	return quota.WarnAtWarnings(crq.Annotations, crq.Spec.Quota.Hard)
}
