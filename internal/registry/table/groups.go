package table

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// kindsBKind maps the storage, certificates, admissionregistration and
// flowcontrol types to their kind.
func kindsBKind(obj runtime.Object) (schema.GroupKind, bool) {
	var gv schema.GroupVersion
	var kind string
	switch obj.(type) {
	case *storagev1.CSIDriver:
		gv, kind = storagev1.SchemeGroupVersion, "CSIDriver"
	case *storagev1.CSINode:
		gv, kind = storagev1.SchemeGroupVersion, "CSINode"
	case *storagev1.VolumeAttachment:
		gv, kind = storagev1.SchemeGroupVersion, "VolumeAttachment"
	case *storagev1.CSIStorageCapacity:
		gv, kind = storagev1.SchemeGroupVersion, "CSIStorageCapacity"
	case *storagev1.VolumeAttributesClass:
		gv, kind = storagev1.SchemeGroupVersion, "VolumeAttributesClass"
	case *certificatesv1.CertificateSigningRequest:
		gv, kind = certificatesv1.SchemeGroupVersion, "CertificateSigningRequest"
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		gv, kind = admissionGV, "MutatingWebhookConfiguration"
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		gv, kind = admissionGV, "ValidatingWebhookConfiguration"
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		gv, kind = admissionGV, "ValidatingAdmissionPolicy"
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		gv, kind = admissionGV, "ValidatingAdmissionPolicyBinding"
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		gv, kind = admissionGV, "MutatingAdmissionPolicy"
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		gv, kind = admissionGV, "MutatingAdmissionPolicyBinding"
	case *svmv1.StorageVersionMigration:
		gv, kind = svmv1.SchemeGroupVersion, "StorageVersionMigration"
	case *flowcontrolv1.FlowSchema:
		gv, kind = flowcontrolv1.SchemeGroupVersion, "FlowSchema"
	case *flowcontrolv1.PriorityLevelConfiguration:
		gv, kind = flowcontrolv1.SchemeGroupVersion, "PriorityLevelConfiguration"
	case *apiregistrationv1.APIService:
		gv, kind = apiregistrationv1.SchemeGroupVersion, "APIService"
	default:
		return kindsCKind(obj)
	}
	return gv.WithKind(kind).GroupKind(), true
}

// kindsBPrinter returns the printer of a storage, certificates,
// admissionregistration or flowcontrol kind.
func kindsBPrinter(gk schema.GroupKind) (Printer, bool) {
	var p func() Printer
	switch gk.Group {
	case storagev1.GroupName:
		p = map[string]func() Printer{"CSIDriver": CSIDriverPrinter, "CSINode": CSINodePrinter, "VolumeAttachment": VolumeAttachmentPrinter,
			"CSIStorageCapacity": CSIStorageCapacityPrinter, "VolumeAttributesClass": VolumeAttributesClassPrinter}[gk.Kind]
	case certificatesv1.GroupName:
		p = map[string]func() Printer{"CertificateSigningRequest": CSRPrinter}[gk.Kind]
	case admissionregistrationv1.GroupName:
		p = map[string]func() Printer{"MutatingWebhookConfiguration": MutatingWebhookPrinter, "ValidatingWebhookConfiguration": ValidatingWebhookPrinter,
			"ValidatingAdmissionPolicy": ValidatingAdmissionPolicyPrinter, "ValidatingAdmissionPolicyBinding": ValidatingAdmissionPolicyBindingPrinter,
			"MutatingAdmissionPolicy": MutatingAdmissionPolicyPrinter, "MutatingAdmissionPolicyBinding": MutatingAdmissionPolicyBindingPrinter}[gk.Kind]
	case apiregistrationv1.GroupName:
		p = map[string]func() Printer{"APIService": APIServicePrinter}[gk.Kind]
	case flowcontrolv1.GroupName:
		p = map[string]func() Printer{"FlowSchema": FlowSchemaPrinter, "PriorityLevelConfiguration": PriorityLevelPrinter}[gk.Kind]
	case svmv1.GroupName:
		p = map[string]func() Printer{"StorageVersionMigration": StorageVersionMigrationPrinter}[gk.Kind]
	}
	if p == nil {
		return kindsCPrinter(gk)
	}
	return p(), true
}
