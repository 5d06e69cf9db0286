package csrsigning

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/pki"
	"github.com/quotad/quotad/internal/registry"
)

// Signers are the signers this controller implements, as kube-controller-manager's
// csrsigning: client certificates for any user, client certificates for kubelets, and
// kubelets' serving certificates.
var Signers = []string{
	certificatesv1.KubeAPIServerClientSignerName,
	certificatesv1.KubeAPIServerClientKubeletSignerName,
	certificatesv1.KubeletServingSignerName,
}

// defaultDuration is kube-controller-manager's --cluster-signing-duration default.
const defaultDuration = 365 * 24 * time.Hour

// Controller signs approved requests of its signers.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	ca    func() (*pki.Authority, error)
	clock clock.PassiveClock
}

// New returns the controller; ca loads the signing authority (read when a request is
// signed, so a CA replaced on disk is used); panics may be nil.
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver, ca func() (*pki.Authority, error)) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("csrsigning", store, log, panics, nil), ca: ca, clock: clock.RealClock{}}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("csrsigning")
	go c.loop.Watch(ctx, c.res(), controller.On(func(csr *certificatesv1.CertificateSigningRequest, deleted bool) {
		if !deleted && pending(csr) {
			q.Add(csr.Name)
		}
	}))
	c.loop.Process(ctx, q, 1, func(ctx context.Context, name string) (time.Duration, error) { return 0, c.sync(ctx, name) })
	return nil
}

// pending reports an Approved, not Failed request of one of the signers without a
// certificate.
func pending(csr *certificatesv1.CertificateSigningRequest) bool {
	if !slices.Contains(Signers, csr.Spec.SignerName) || len(csr.Status.Certificate) > 0 {
		return false
	}
	approved := false
	for _, cond := range csr.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return false
		}
	}
	return approved
}

// sync signs one request: 1. re-read it, 2. check it, 3. sign, 4. write through /status.
func (c *Controller) sync(ctx context.Context, name string) error {
	_, err := c.store.Update(ctx, c.res(), "", name, "status", func(cur runtime.Object) (runtime.Object, error) {
		csr, err := controller.As[*certificatesv1.CertificateSigningRequest](cur)
		if err != nil {
			return nil, err
		}
		if !pending(csr) {
			return csr, nil
		}
		if err := c.issue(csr); err != nil {
			var fail failure
			if !errors.As(err, &fail) {
				return nil, err
			}
			now := metav1.NewTime(c.clock.Now())
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure", Message: fail.Error(),
				LastUpdateTime: now, LastTransitionTime: now})
		}
		return csr, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// failure is a request the signer refuses (recorded as a Failed condition).
type failure struct{ msg string }

func (f failure) Error() string { return f.msg }

func (c *Controller) issue(csr *certificatesv1.CertificateSigningRequest) error {
	// 1. The request, as upstream parses it.
	req, err := ParseCSR(csr.Spec.Request)
	if err != nil {
		return failure{err.Error()}
	}
	if err := req.CheckSignature(); err != nil {
		return failure{err.Error()}
	}
	// 2. What its signer accepts.
	if err := Check(csr.Spec.SignerName, req, csr.Spec.Usages); err != nil {
		return failure{err.Error()}
	}
	ku, eku, err := keyUsages(csr.Spec.Usages)
	if err != nil {
		return failure{err.Error()}
	}
	// 3. Its lifetime: spec.expirationSeconds between ten minutes and the signing
	// duration, backdated five minutes (taken from a lifetime of eight hours or more), never
	// past the CA.
	ca, err := c.ca()
	if err != nil {
		return fmt.Errorf("loading the signing CA: %w", err)
	}
	now := c.clock.Now()
	ttl := defaultDuration
	if e := csr.Spec.ExpirationSeconds; e != nil {
		ttl = min(max(time.Duration(*e)*time.Second, 10*time.Minute), defaultDuration)
	}
	const backdate = 5 * time.Minute
	notAfter := now.Add(ttl)
	if ttl >= 8*time.Hour {
		notAfter = now.Add(ttl - backdate)
	}
	if !notAfter.Before(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	if !now.Before(ca.Cert.NotAfter) {
		return fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", ca.Cert.NotAfter)
	}
	// 4. The certificate: the request's subject and names, the usages asked.
	cert, err := ca.Sign(&x509.Certificate{
		Subject:  req.Subject,
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses, EmailAddresses: req.EmailAddresses, URIs: req.URIs,
		NotBefore: now.Add(-backdate), NotAfter: notAfter,
		KeyUsage: ku, ExtKeyUsage: eku, BasicConstraintsValid: true,
	}, req.PublicKey)
	if err != nil {
		return err
	}
	csr.Status.Certificate = cert
	return nil
}
