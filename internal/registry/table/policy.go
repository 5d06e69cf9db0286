package table

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ---- PodDisruptionBudget ----

func PodDisruptionBudgetPrinter() Printer {
	return typedPrinter(policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), func() *policyv1.PodDisruptionBudget { return &policyv1.PodDisruptionBudget{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
				{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
				{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
				ageColumn(),
			}
		},
		func(pdb *policyv1.PodDisruptionBudget, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			minAvailable, maxUnavailable := "N/A", "N/A"
			if pdb.Spec.MinAvailable != nil {
				minAvailable = pdb.Spec.MinAvailable.String()
			}
			if pdb.Spec.MaxUnavailable != nil {
				maxUnavailable = pdb.Spec.MaxUnavailable.String()
			}
			return []interface{}{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), since(pdb.CreationTimestamp, now)}, nil
		})
}
