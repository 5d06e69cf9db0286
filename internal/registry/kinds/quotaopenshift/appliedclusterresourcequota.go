package quotaopenshift

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
)

// AppliedClusterResourceQuota is the strategy of appliedclusterresourcequotas.
type AppliedClusterResourceQuota struct{}

// ConvertToTable prints upstream's columns.
func (AppliedClusterResourceQuota) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.AppliedClusterResourceQuotaPrinter().Convert(objs, now, include, false)
}

// Validate is never called: the applied view is computed from cluster quotas, never written.
func (AppliedClusterResourceQuota) Validate(runtime.Object) field.ErrorList { return nil }

// ValidateUpdate is never called (see Validate).
func (AppliedClusterResourceQuota) ValidateUpdate(_, _ runtime.Object) field.ErrorList { return nil }
