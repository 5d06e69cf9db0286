package table

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PodCertificateRequestPrinter is upstream's printPodCertificateRequest: the pod, service
// account, node and signer, the request's state (Pending until an Issued, Denied or Failed
// condition, the last such condition winning) and its unverified user annotations. The
// annotations' column has priority 0, as upstream's, though upstream fills it only when
// printing wide, which the server always does.
func PodCertificateRequestPrinter() Printer {
	return typedPrinter(certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest"), func() *certificatesv1.PodCertificateRequest {
		return &certificatesv1.PodCertificateRequest{}
	}, func() []metav1.TableColumnDefinition {
		d := certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()
		return []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: "PodName", Type: "string", Description: d["podName"]},
			{Name: "ServiceAccountName", Type: "string", Description: d["serviceAccountName"]},
			{Name: "NodeName", Type: "string", Description: d["nodeName"]},
			{Name: "SignerName", Type: "string", Description: d["signerName"]},
			{Name: "State", Type: "string", Description: "Is the request Pending, Issued, Denied, or Failed?"},
			{Name: "UnverifiedUserAnnotations", Type: "string", Description: d["unverifiedUserAnnotations"]},
		}
	}, func(o *certificatesv1.PodCertificateRequest, _ time.Time) ([]interface{}, []metav1.TableRowCondition) {
		state := "Pending"
		for _, c := range o.Status.Conditions {
			switch c.Type {
			case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
				state = c.Type
			}
		}
		return []interface{}{o.Name, o.Spec.PodName, o.Spec.ServiceAccountName, string(o.Spec.NodeName), o.Spec.SignerName, state, labels.FormatLabels(o.Spec.UnverifiedUserAnnotations)}, nil
	})
}
