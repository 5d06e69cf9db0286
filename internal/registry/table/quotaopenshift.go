package table

import (
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota/clusterquota"
)

// ---- ClusterResourceQuota, AppliedClusterResourceQuota (quota.openshift.io) ----

func clusterQuotaColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
		{Name: "Label Selector", Type: "string", Description: "LabelSelector is used to select projects by label."},
		{Name: "Annotation Selector", Type: "string", Description: "AnnotationSelector is used to select projects by annotation."},
	}
}

// selectorCells renders a cluster quota's selector: the label selector as kubectl formats
// one, the annotations as sorted key=value pairs ("<none>" when empty).
func selectorCells(sel clusterquota.ClusterResourceQuotaSelector) (string, string) {
	labels := "<none>"
	if sel.LabelSelector != nil {
		labels = metav1.FormatLabelSelector(sel.LabelSelector)
	}
	return labels, formatAnnotationSelector(sel.AnnotationSelector)
}

func formatAnnotationSelector(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	pairs := make([]string, 0, len(m))
	for k, v := range m {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func ClusterResourceQuotaPrinter() Printer {
	return typedPrinter(clusterquota.SchemeGroupVersion.WithKind("ClusterResourceQuota"), func() *clusterquota.ClusterResourceQuota { return &clusterquota.ClusterResourceQuota{} },
		clusterQuotaColumns,
		func(q *clusterquota.ClusterResourceQuota, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			l, a := selectorCells(q.Spec.Selector)
			return []interface{}{q.Name, since(q.CreationTimestamp, now), l, a}, nil
		})
}

func AppliedClusterResourceQuotaPrinter() Printer {
	return typedPrinter(clusterquota.SchemeGroupVersion.WithKind("AppliedClusterResourceQuota"), func() *clusterquota.AppliedClusterResourceQuota { return &clusterquota.AppliedClusterResourceQuota{} },
		clusterQuotaColumns,
		func(q *clusterquota.AppliedClusterResourceQuota, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			l, a := selectorCells(q.Spec.Selector)
			return []interface{}{q.Name, since(q.CreationTimestamp, now), l, a}, nil
		})
}
