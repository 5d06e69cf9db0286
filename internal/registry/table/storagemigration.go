package table

import (
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageVersionMigrationPrinter is upstream's StorageVersionMigration table: the
// resource migrated and the condition that is true (Running, Succeeded or Failed).
func StorageVersionMigrationPrinter() Printer {
	return typedPrinter(svmv1.SchemeGroupVersion.WithKind("StorageVersionMigration"), func() *svmv1.StorageVersionMigration { return &svmv1.StorageVersionMigration{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				{Name: "Name", Type: "string", Description: objectMetaDocs()["name"]},
				{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
				{Name: "Status", Type: "string", Description: "Status of the migration"},
			}
		},
		func(o *svmv1.StorageVersionMigration, _ time.Time) ([]interface{}, []metav1.TableRowCondition) {
			status := "Unknown"
			for _, c := range o.Status.Conditions {
				if c.Status != metav1.ConditionTrue {
					continue
				}
				switch svmv1.MigrationConditionType(c.Type) {
				case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
					status = c.Type
				}
			}
			return []interface{}{o.Name, o.Spec.Resource.String(), status}, nil
		})
}
