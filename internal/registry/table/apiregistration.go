package table

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// APIServicePrinter is kube-aggregator's APIService table.
func APIServicePrinter() Printer {
	return typedPrinter(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"), func() *apiregistrationv1.APIService { return &apiregistrationv1.APIService{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
				{Name: "Available", Type: "string", Description: "Whether this service is available."},
				ageColumn(),
			}
		},
		func(o *apiregistrationv1.APIService, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			service := "Local"
			if s := o.Spec.Service; s != nil {
				service = fmt.Sprintf("%s/%s", s.Namespace, s.Name)
			}
			status := string(apiregistrationv1.ConditionUnknown)
			for _, c := range o.Status.Conditions {
				if c.Type != apiregistrationv1.Available {
					continue
				}
				status = string(c.Status)
				if c.Status != apiregistrationv1.ConditionTrue && c.Reason != "" {
					status = fmt.Sprintf("%s (%s)", c.Status, c.Reason)
				}
				break
			}
			return []interface{}{o.Name, service, status, since(o.CreationTimestamp, now)}, nil
		})
}
