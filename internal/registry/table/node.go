package table

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeClassPrinter prints NAME HANDLER AGE. Upstream describes Handler with
// ObjectMeta's (absent) "handler" doc: an empty description.
func RuntimeClassPrinter() Printer {
	return typedPrinter(nodev1.SchemeGroupVersion.WithKind("RuntimeClass"), func() *nodev1.RuntimeClass { return &nodev1.RuntimeClass{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Handler", Type: "string", Description: objectMetaDocs()["handler"]},
				ageColumn(),
			}
		},
		func(rc *nodev1.RuntimeClass, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{rc.Name, rc.Handler, since(rc.CreationTimestamp, now)}, nil
		})
}
