package table

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Annotations marking the default StorageClass.
const (
	isDefaultStorageClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// ---- PriorityClass ----

// PriorityClassPrinter: PreemptionPolicy has priority 0 upstream, so kubectl
// shows it without -o wide.
func PriorityClassPrinter() Printer {
	return typedPrinter(schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), func() *schedulingv1.PriorityClass { return &schedulingv1.PriorityClass{} },
		func() []metav1.TableColumnDefinition {
			d := schedulingv1.PriorityClass{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Value", Type: "integer", Description: d["value"]},
				{Name: "Global-Default", Type: "boolean", Description: d["globalDefault"]},
				ageColumn(),
				{Name: "PreemptionPolicy", Type: "string", Description: d["preemptionPolicy"]},
			}
		},
		func(pc *schedulingv1.PriorityClass, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			var policy string
			if pc.PreemptionPolicy != nil {
				policy = string(*pc.PreemptionPolicy)
			}
			return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, since(pc.CreationTimestamp, now), policy}, nil
		})
}

// ---- StorageClass ----

// StorageClassPrinter prints one StorageClass as upstream's printStorageClass does: a
// GET or a watch event never marks " (default)"; StorageClassListPrinter does.
func StorageClassPrinter() Printer { return storageClassPrinter("") }

// StorageClassListPrinter prints a list of StorageClasses as upstream's
// printStorageClassList: only the effective default is named "<name> (default)", the most
// recently created class with a default annotation (the alphabetically first name among
// those created at the same time).
func StorageClassListPrinter(objs []runtime.Object) Printer {
	var def metav1.Object
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil || !isDefaultStorageClass(m.GetAnnotations()) {
			continue
		}
		created, defCreated := m.GetCreationTimestamp(), metav1.Time{}
		if def != nil {
			defCreated = def.GetCreationTimestamp()
		}
		switch {
		case def == nil, created.After(defCreated.Time):
			def = m
		case created.Equal(&defCreated) && m.GetName() < def.GetName():
			def = m
		}
	}
	if def == nil {
		return storageClassPrinter("")
	}
	return storageClassPrinter(def.GetName())
}

func isDefaultStorageClass(a map[string]string) bool {
	return a[isDefaultStorageClassAnnotation] == "true" || a[betaIsDefaultStorageClassAnnotation] == "true"
}

func storageClassPrinter(effectiveDefault string) Printer {
	return typedPrinter(storagev1.SchemeGroupVersion.WithKind("StorageClass"), func() *storagev1.StorageClass { return &storagev1.StorageClass{} },
		func() []metav1.TableColumnDefinition {
			d := storagev1.StorageClass{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Provisioner", Type: "string", Description: d["provisioner"]},
				{Name: "ReclaimPolicy", Type: "string", Description: d["reclaimPolicy"]},
				{Name: "VolumeBindingMode", Type: "string", Description: d["volumeBindingMode"]},
				{Name: "AllowVolumeExpansion", Type: "string", Description: d["allowVolumeExpansion"]},
				ageColumn(),
			}
		},
		func(sc *storagev1.StorageClass, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			name := sc.Name
			if effectiveDefault != "" && sc.Name == effectiveDefault {
				name += " (default)"
			}
			reclaim := string(corev1.PersistentVolumeReclaimDelete)
			if sc.ReclaimPolicy != nil {
				reclaim = string(*sc.ReclaimPolicy)
			}
			binding := string(storagev1.VolumeBindingImmediate)
			if sc.VolumeBindingMode != nil {
				binding = string(*sc.VolumeBindingMode)
			}
			expansion := false
			if sc.AllowVolumeExpansion != nil {
				expansion = *sc.AllowVolumeExpansion
			}
			return []interface{}{name, sc.Provisioner, reclaim, binding, expansion, since(sc.CreationTimestamp, now)}, nil
		})
}
