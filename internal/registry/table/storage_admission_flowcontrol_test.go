package table

import (
	"testing"
	"time"

	ar "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestStorageAdmissionFlowControlCells(t *testing.T) {
	cond := func(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue}
	}
	secs := int32(3600)
	pv := "pv-1"
	shares := int32(7)
	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{"csr pending", &certificatesv1.CertificateSigningRequest{ObjectMeta: objMeta("a", time.Hour), Spec: certificatesv1.CertificateSigningRequestSpec{Username: "bob"}},
			[]interface{}{"a", "60m", "<none>", "bob", "<none>", "Pending"}},
		{"csr approved, failed, issued", &certificatesv1.CertificateSigningRequest{ObjectMeta: objMeta("b", time.Minute),
			Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/s", ExpirationSeconds: &secs},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{cond("Approved"), cond("Failed")}, Certificate: []byte("x")}},
			[]interface{}{"b", "60s", "example.com/s", "", "60m", "Approved,Failed,Issued"}},
		{"csr denied wins", &certificatesv1.CertificateSigningRequest{ObjectMeta: objMeta("c", time.Minute),
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{cond("Approved"), cond("Denied")}}},
			[]interface{}{"c", "60s", "<none>", "", "<none>", "Denied"}},
		{"volumeattachment", &storagev1.VolumeAttachment{ObjectMeta: objMeta("va", time.Hour), Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi", NodeName: "n", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true}}, []interface{}{"va", "csi", "pv-1", "n", true, "60m"}},
		{"flowschema without status", &flowcontrolv1.FlowSchema{ObjectMeta: objMeta("fs", time.Hour), Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "p"}, MatchingPrecedence: 500,
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}}},
			[]interface{}{"fs", "p", int64(500), "ByNamespace", "60m", "?"}},
		{"prioritylevel reject", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: objMeta("pl", time.Hour), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LimitResponse: flowcontrolv1.LimitResponse{Type: "Reject"}}}},
			[]interface{}{"pl", "Limited", int64(7), "<none>", "<none>", "<none>", "60m"}},
		{"binding with selector", &ar.ValidatingAdmissionPolicyBinding{ObjectMeta: objMeta("b", time.Hour), Spec: ar.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
			ParamRef: &ar.ParamRef{Name: "cfg"}}}, []interface{}{"b", "p", "*/cfg", "60m"}},
		{"apiservice unavailable", &apiregistrationv1.APIService{ObjectMeta: objMeta("v1.x.example.com", time.Hour), Spec: apiregistrationv1.APIServiceSpec{
			Service: &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc"}},
			Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: "Available", Status: "False", Reason: "MissingEndpoints"}}}},
			[]interface{}{"v1.x.example.com", "ns/svc", "False (MissingEndpoints)", "60m"}},
		{"apiservice without conditions", &apiregistrationv1.APIService{ObjectMeta: objMeta("v1.", time.Hour)}, []interface{}{"v1.", "Local", "Unknown", "60m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, tt.obj, tt.want) })
	}
}
