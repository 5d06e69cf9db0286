package table

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PodTemplatePrinter prints NAME CONTAINERS IMAGES POD LABELS (no Age, as upstream).
func PodTemplatePrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("PodTemplate"), func() *corev1.PodTemplate { return &corev1.PodTemplate{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
				{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
				{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
			}
		},
		func(t *corev1.PodTemplate, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			names, images := containerCells(t.Template.Spec.Containers)
			return []interface{}{t.Name, names, images, labels.FormatLabels(t.Template.Labels)}, nil
		})
}
