package table

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ComponentStatusPrinter prints NAME STATUS MESSAGE ERROR from the Healthy condition.
func ComponentStatusPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("ComponentStatus"), func() *corev1.ComponentStatus { return &corev1.ComponentStatus{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Status", Type: "string", Description: "Status of the component conditions"},
				{Name: "Message", Type: "string", Description: "Message of the component conditions"},
				{Name: "Error", Type: "string", Description: "Error of the component conditions"},
			}
		},
		func(cs *corev1.ComponentStatus, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			status, msg, errMsg := "Unknown", "", ""
			for _, c := range cs.Conditions {
				if c.Type == corev1.ComponentHealthy {
					status = "Unhealthy"
					if c.Status == corev1.ConditionTrue {
						status = "Healthy"
					}
					msg, errMsg = c.Message, c.Error
					break
				}
			}
			return []interface{}{cs.Name, status, msg, errMsg}, nil
		})
}
