package table

import (
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ---- storage.k8s.io kinds (upstream printers.go) ----

func CSIDriverPrinter() Printer {
	return typedPrinter(storagev1.SchemeGroupVersion.WithKind("CSIDriver"), func() *storagev1.CSIDriver { return &storagev1.CSIDriver{} },
		func() []metav1.TableColumnDefinition {
			d := storagev1.CSIDriverSpec{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "AttachRequired", Type: "boolean", Description: d["attachRequired"]},
				{Name: "PodInfoOnMount", Type: "boolean", Description: d["podInfoOnMount"]},
				{Name: "StorageCapacity", Type: "boolean", Description: d["storageCapacity"]},
				{Name: "TokenRequests", Type: "string", Description: d["tokenRequests"]},
				{Name: "RequiresRepublish", Type: "boolean", Description: d["requiresRepublish"]},
				{Name: "Modes", Type: "string", Description: d["volumeLifecycleModes"]},
				ageColumn(),
			}
		},
		func(o *storagev1.CSIDriver, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			boolOr := func(p *bool, def bool) bool {
				if p != nil {
					return *p
				}
				return def
			}
			var modes []string
			for _, m := range o.Spec.VolumeLifecycleModes {
				modes = append(modes, string(m))
			}
			ms := strings.Join(modes, ",")
			if ms == "" {
				ms = "<none>"
			}
			tokens := "<unset>"
			if o.Spec.TokenRequests != nil {
				var auds []string
				for _, t := range o.Spec.TokenRequests {
					auds = append(auds, t.Audience)
				}
				tokens = strings.Join(auds, ",")
			}
			return []interface{}{o.Name, boolOr(o.Spec.AttachRequired, true), boolOr(o.Spec.PodInfoOnMount, false), boolOr(o.Spec.StorageCapacity, false),
				tokens, boolOr(o.Spec.RequiresRepublish, false), ms, since(o.CreationTimestamp, now)}, nil
		})
}

func CSINodePrinter() Printer {
	return typedPrinter(storagev1.SchemeGroupVersion.WithKind("CSINode"), func() *storagev1.CSINode { return &storagev1.CSINode{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
				ageColumn(),
			}
		},
		func(o *storagev1.CSINode, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{o.Name, int64(len(o.Spec.Drivers)), since(o.CreationTimestamp, now)}, nil
		})
}

func VolumeAttachmentPrinter() Printer {
	return typedPrinter(storagev1.SchemeGroupVersion.WithKind("VolumeAttachment"), func() *storagev1.VolumeAttachment { return &storagev1.VolumeAttachment{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
				{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
				{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
				{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
				ageColumn(),
			}
		},
		func(o *storagev1.VolumeAttachment, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			pv := ""
			if o.Spec.Source.PersistentVolumeName != nil {
				pv = *o.Spec.Source.PersistentVolumeName
			}
			return []interface{}{o.Name, o.Spec.Attacher, pv, o.Spec.NodeName, o.Status.Attached, since(o.CreationTimestamp, now)}, nil
		})
}

// CSIStorageCapacityPrinter is the default printer (Name, Created At): kube-apiserver's
// csistoragecapacities storage uses rest.NewDefaultTableConvertor, though
// pkg/printers/internalversion has a CSIStorageCapacity printer.
func CSIStorageCapacityPrinter() Printer {
	return DefaultPrinter(storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity"))
}

func VolumeAttributesClassPrinter() Printer {
	return typedPrinter(storagev1.SchemeGroupVersion.WithKind("VolumeAttributesClass"), func() *storagev1.VolumeAttributesClass { return &storagev1.VolumeAttributesClass{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
				ageColumn(),
			}
		},
		func(o *storagev1.VolumeAttributesClass, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{o.Name, o.DriverName, since(o.CreationTimestamp, now)}, nil
		})
}
