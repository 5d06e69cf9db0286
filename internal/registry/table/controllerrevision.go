package table

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ---- ControllerRevision ----

// ControllerRevisionPrinter is upstream's printControllerRevision: NAME
// CONTROLLER REVISION AGE, the controller as <kind>.<group>/<name> in lower case.
func ControllerRevisionPrinter() Printer {
	return typedPrinter(appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), func() *appsv1.ControllerRevision { return &appsv1.ControllerRevision{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Controller", Type: "string", Description: "Controller of the object"},
				{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
				ageColumn(),
			}
		},
		func(cr *appsv1.ControllerRevision, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			controller := "<none>"
			if ref := metav1.GetControllerOf(cr); ref != nil {
				// Upstream fails the row for an unparsable apiVersion; the group is
				// then left out here instead.
				gv, _ := schema.ParseGroupVersion(ref.APIVersion)
				gk := gv.WithKind(ref.Kind).GroupKind()
				controller = ref.Name
				if !gk.Empty() {
					controller = strings.ToLower(gk.String()) + "/" + ref.Name
				}
			}
			return []interface{}{cr.Name, controller, cr.Revision, since(cr.CreationTimestamp, now)}, nil
		})
}
