package validation

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodCertificateRequestIssued: the rules of an issued certificate's times, at a fixed
// server time, with upstream's texts (times printed as JSON, here in UTC).
func TestPodCertificateRequestIssued(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	chain := func(notBefore time.Time, lifetime time.Duration) string {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), NotBefore: notBefore, NotAfter: notBefore.Add(lifetime)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	day := int32(86400)
	old := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", ResourceVersion: "1"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/s", MaxExpirationSeconds: &day, StubPKCS10Request: stub}}
	at := func(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
	issued := func(c string, nb, na, refresh *metav1.Time) *certificatesv1.PodCertificateRequest {
		n := old.DeepCopy()
		n.Status = certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Time{Time: now}}},
			CertificateChain: c, NotBefore: nb, NotAfter: na, BeginRefreshAt: refresh}
		return n
	}
	tests := []struct {
		name string
		req  *certificatesv1.PodCertificateRequest
		want string
	}{
		{"valid", issued(chain(now, 2*time.Hour), at(now), at(now.Add(2*time.Hour)), at(now.Add(time.Hour))), ""},
		{"times missing", issued(chain(now, 2*time.Hour), nil, nil, nil),
			"status.notBefore: Required value: must be present and consistent with the issued certificate; " +
				"status.notAfter: Required value: must be present and consistent with the issued certificate; " +
				"status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]"},
		{"not now", issued(chain(now.Add(-time.Hour), 2*time.Hour), at(now.Add(-time.Hour)), at(now.Add(time.Hour)), at(now)),
			`status.notBefore: Invalid value: "2030-01-02T02:04:05Z": must be set to within 5 minutes of kube-apiserver's current time`},
		{"short", issued(chain(now, 30*time.Minute), at(now), at(now.Add(30*time.Minute)), at(now.Add(15*time.Minute))),
			"status.certificateChain: Invalid value: 1800000000000: leaf certificate lifetime must be >= 1 hour"},
		{"long", issued(chain(now, 25*time.Hour), at(now), at(now.Add(25*time.Hour)), at(now.Add(time.Hour))),
			"status.certificateChain: Invalid value: 90000000000000: leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)"},
		{"refresh too early", issued(chain(now, 2*time.Hour), at(now), at(now.Add(2*time.Hour)), at(now.Add(5*time.Minute))),
			`status.beginRefreshAt: Invalid value: "2030-01-02T03:09:05Z": must be at least 10 minutes after status.notBefore`},
		{"not a certificate", issued("nope", at(now), at(now.Add(2*time.Hour)), at(now.Add(time.Hour))),
			`status.certificateChain: Invalid value: "nope": issued certificate chain must contain at least one certificate`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range PodCertificateRequestStatusUpdate(tt.req, old, now) {
				got = append(got, e.Error())
			}
			if g := strings.Join(got, "; "); g != tt.want {
				t.Errorf("\n got %s\nwant %s", g, tt.want)
			}
		})
	}
}

// TestPodCertificateVolume: a pod's podCertificate projected sources, checked as upstream's
// validateProjectionSources (texts as upstream's ValidatePodCreate gives for this pod).
func TestPodCertificateVolume(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers:    []corev1.Container{{Name: "c", Image: "i", ImagePullPolicy: "Always", TerminationMessagePolicy: "File"}},
		RestartPolicy: "Always", DNSPolicy: "ClusterFirst", SchedulerName: "default-scheduler",
		SecurityContext: &corev1.PodSecurityContext{}, TerminationGracePeriodSeconds: i64(30),
		Volumes: []corev1.Volume{{Name: "cert", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: i32(0o644), Sources: []corev1.VolumeProjection{
			{PodCertificate: &corev1.PodCertificateProjection{SignerName: "kubernetes.io/x", KeyType: "DSA", MaxExpirationSeconds: i32(100000)}},
			{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/x", KeyType: "ED25519", CredentialBundlePath: "a.pem", KeyPath: "a.pem", MaxExpirationSeconds: i32(60), User: i64(-1)}},
		}}}}}}}
	want := []string{
		`spec.volumes[0].projected.sources[0].podCertificate.keyType: Unsupported value: "DSA": supported values: "RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"`,
		`spec.volumes[0].projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: 100000: if provided, maxExpirationSeconds must be <= 86400`,
		`spec.volumes[0].projected.sources[0].podCertificate: Required value: specify at least one of credentialBundlePath, keyPath, and certificateChainPath`,
		`spec.volumes[0].projected.sources[1].podCertificate.user: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
		`spec.volumes[0].projected.sources[1].podCertificate.maxExpirationSeconds: Invalid value: 60: if provided, maxExpirationSeconds must be >= 3600`,
		`spec.volumes[0].projected: Invalid value: "a.pem": conflicting duplicate paths`,
	}
	var got []string
	for _, e := range Pod(p) {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	// A valid source passes.
	p.Spec.Volumes[0].Projected.Sources = []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/x", KeyType: "ED25519", CredentialBundlePath: "bundle.pem"}}}
	if errs := Pod(p); len(errs) > 0 {
		t.Errorf("valid podCertificate source: %v", errs)
	}
}
