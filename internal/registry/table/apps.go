package table

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Upstream takes several apps descriptions from the extensions/v1beta1
// swagger docs; so do we, so the texts are the same.

func containersColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
}

func imagesColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
}

// ---- Deployment ----

func DeploymentPrinter() Printer {
	return typedPrinter(appsv1.SchemeGroupVersion.WithKind("Deployment"), func() *appsv1.Deployment { return &appsv1.Deployment{} },
		func() []metav1.TableColumnDefinition {
			st := appsv1.DeploymentStatus{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
				{Name: "Up-to-date", Type: "string", Description: st["updatedReplicas"]},
				{Name: "Available", Type: "string", Description: st["availableReplicas"]},
				ageColumn(),
				containersColumn(),
				imagesColumn(),
				{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
			}
		},
		func(d *appsv1.Deployment, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			selector := "<invalid>"
			if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
				selector = s.String()
			}
			names, images := containerCells(d.Spec.Template.Spec.Containers)
			return []interface{}{
				d.Name, fmt.Sprintf("%d/%d", int64(d.Status.ReadyReplicas), int64(replicas(d.Spec.Replicas))),
				int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), since(d.CreationTimestamp, now),
				names, images, selector,
			}, nil
		})
}

// ---- ReplicaSet ----

func ReplicaSetPrinter() Printer {
	return typedPrinter(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), func() *appsv1.ReplicaSet { return &appsv1.ReplicaSet{} },
		func() []metav1.TableColumnDefinition {
			return replicatedColumns(appsv1.ReplicaSetSpec{}.SwaggerDoc(), appsv1.ReplicaSetStatus{}.SwaggerDoc())
		},
		func(rs *appsv1.ReplicaSet, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return replicatedRow(&rs.ObjectMeta, rs.Spec.Replicas, rs.Status.Replicas, rs.Status.ReadyReplicas,
				&rs.Spec.Template, metav1.FormatLabelSelector(rs.Spec.Selector), now), nil
		})
}

// ---- StatefulSet ----

func StatefulSetPrinter() Printer {
	return typedPrinter(appsv1.SchemeGroupVersion.WithKind("StatefulSet"), func() *appsv1.StatefulSet { return &appsv1.StatefulSet{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
				ageColumn(),
				containersColumn(),
				imagesColumn(),
			}
		},
		func(ss *appsv1.StatefulSet, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			names, images := containerCells(ss.Spec.Template.Spec.Containers)
			return []interface{}{
				ss.Name, fmt.Sprintf("%d/%d", int64(ss.Status.ReadyReplicas), int64(replicas(ss.Spec.Replicas))), since(ss.CreationTimestamp, now),
				names, images,
			}, nil
		})
}

// ---- DaemonSet ----

func DaemonSetPrinter() Printer {
	return typedPrinter(appsv1.SchemeGroupVersion.WithKind("DaemonSet"), func() *appsv1.DaemonSet { return &appsv1.DaemonSet{} },
		func() []metav1.TableColumnDefinition {
			st := appsv1.DaemonSetStatus{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Desired", Type: "integer", Description: st["desiredNumberScheduled"]},
				{Name: "Current", Type: "integer", Description: st["currentNumberScheduled"]},
				{Name: "Ready", Type: "integer", Description: st["numberReady"]},
				{Name: "Up-to-date", Type: "integer", Description: st["updatedNumberScheduled"]},
				{Name: "Available", Type: "integer", Description: st["numberAvailable"]},
				{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
				ageColumn(),
				containersColumn(),
				imagesColumn(),
				{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
			}
		},
		func(ds *appsv1.DaemonSet, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			names, images := containerCells(ds.Spec.Template.Spec.Containers)
			st := ds.Status
			return []interface{}{
				ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
				int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
				since(ds.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
			}, nil
		})
}
