package table

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeasePrinter prints NAME HOLDER AGE.
func LeasePrinter() Printer {
	return typedPrinter(coordinationv1.SchemeGroupVersion.WithKind("Lease"), func() *coordinationv1.Lease { return &coordinationv1.Lease{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
				ageColumn(),
			}
		},
		func(l *coordinationv1.Lease, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return []interface{}{l.Name, holder, since(l.CreationTimestamp, now)}, nil
		})
}
