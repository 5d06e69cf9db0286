package integration

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodCertificateRequestCleaner: the cleaner deletes PodCertificateRequests past its
// threshold whatever their state, a pending one and a denied one here (the period and
// threshold shortened from upstream's 5 and 15 minutes, which the unit tests hold on a
// fake clock).
func TestPodCertificateRequestCleaner(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) {
		c.PodCertificateRequestCleanerPeriod, c.PodCertificateRequestCleanerThreshold = 50*time.Millisecond, time.Nanosecond
	})
	ctx := ctxT(t)
	const ns = "pcr-clean"
	mkNamespace(t, s, ns)
	c := s.Client.CertificatesV1().PodCertificateRequests(ns)
	stub, _ := stubRequest(t)
	if _, err := c.Create(ctx, newPCR("pending", "example.com/pods", stub), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	denied, err := c.Create(ctx, newPCR("denied", "example.com/pods", stub), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	denied.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
		Reason: "Test", Message: "no", LastTransitionTime: metav1.Now()}}
	if _, err := c.UpdateStatus(ctx, denied, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	gone := func(name string) bool {
		_, err := c.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	waitFor(t, func() bool { return gone("pending") && gone("denied") })
}
