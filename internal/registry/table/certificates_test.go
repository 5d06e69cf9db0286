package table

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodCertificateRequestCells: upstream's printPodCertificateRequest, printed wide as
// the server does: Pending until a terminal condition, whose type is the state, and the
// unverified user annotations as labels print ("<none>" when there are none).
func TestPodCertificateRequestCells(t *testing.T) {
	spec := certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/s", PodName: "web", ServiceAccountName: "app", NodeName: "node-1"}
	cond := func(typ string) metav1.Condition { return metav1.Condition{Type: typ, Status: metav1.ConditionTrue} }
	annotated := spec
	annotated.UnverifiedUserAnnotations = map[string]string{"b.example.com/y": "2", "a.example.com/x": "1"}
	tests := []struct {
		name       string
		spec       certificatesv1.PodCertificateRequestSpec
		conditions []metav1.Condition
		want       []interface{}
	}{
		{"pending", spec, nil, []interface{}{"r", "web", "app", "node-1", "example.com/s", "Pending", "<none>"}},
		{"issued", spec, []metav1.Condition{cond("Issued")}, []interface{}{"r", "web", "app", "node-1", "example.com/s", "Issued", "<none>"}},
		{"other conditions", spec, []metav1.Condition{cond("Denied"), cond("Ready")}, []interface{}{"r", "web", "app", "node-1", "example.com/s", "Denied", "<none>"}},
		{"annotations", annotated, nil, []interface{}{"r", "web", "app", "node-1", "example.com/s", "Pending", "a.example.com/x=1,b.example.com/y=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCells(t, &certificatesv1.PodCertificateRequest{ObjectMeta: objMeta("r", time.Hour), Spec: tt.spec,
				Status: certificatesv1.PodCertificateRequestStatus{Conditions: tt.conditions}}, tt.want)
		})
	}
}
