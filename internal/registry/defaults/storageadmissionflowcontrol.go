package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// applyStorageAdmissionFlowControl sets the defaults of the storage, admissionregistration and
// flowcontrol and apiregistration kinds; false for other kinds. obj is not nil.
func applyStorageAdmissionFlowControl(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *storagev1.CSIDriver:
		CSIDriver(o)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		ValidatingWebhookConfiguration(o)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		MutatingWebhookConfiguration(o)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		ValidatingAdmissionPolicy(o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		ValidatingAdmissionPolicyBinding(o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		MutatingAdmissionPolicy(o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		MutatingAdmissionPolicyBinding(o)
	case *flowcontrolv1.FlowSchema:
		FlowSchema(o)
	case *flowcontrolv1.PriorityLevelConfiguration:
		PriorityLevelConfiguration(o)
	case *apiregistrationv1.APIService:
		APIService(o)
	default:
		return false
	}
	return true
}
