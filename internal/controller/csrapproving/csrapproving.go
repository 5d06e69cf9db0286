package csrapproving

import (
	"context"
	"crypto/x509"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/csrsigning"
	"github.com/quotad/quotad/internal/registry"
)

// recognizer is one kind of request the controller approves when the requester may
// create the subresource.
type recognizer struct {
	recognize   func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool
	subresource string
	message     string
}

// recognizers are upstream's, in its order.
var recognizers = []recognizer{
	{recognize: isSelfNodeClient, subresource: "selfnodeclient",
		message: "Auto approving self kubelet client certificate after SubjectAccessReview."},
	{recognize: isNodeClient, subresource: "nodeclient",
		message: "Auto approving kubelet client certificate after SubjectAccessReview."},
}

func isNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName &&
		csrsigning.KubeletClient(req, csr.Spec.Usages) == nil
}

func isSelfNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.Username == req.Subject.CommonName && isNodeClient(csr, req)
}

// Controller approves kubelets' client certificate requests.
type Controller struct {
	store controller.Client
	authz auth.Authorizer
	log   *slog.Logger
	loop  *controller.Loop
}

// New returns the controller; authz decides for the requesters (the server's
// authorizer); panics may be nil.
func New(store controller.Client, authz auth.Authorizer, log *slog.Logger, panics controller.PanicObserver) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, authz: authz, log: log, loop: controller.NewLoop("csrapproving", store, log, panics, nil)}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("csrapproving")
	go c.loop.Watch(ctx, c.res(), controller.On(func(csr *certificatesv1.CertificateSigningRequest, deleted bool) {
		if !deleted && undecided(csr) && csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName {
			q.Add(csr.Name)
		}
	}))
	c.loop.Process(ctx, q, 1, func(ctx context.Context, name string) (time.Duration, error) { return 0, c.sync(ctx, name) })
	return nil
}

// undecided reports a request neither approved nor denied, without a certificate.
func undecided(csr *certificatesv1.CertificateSigningRequest) bool {
	if len(csr.Status.Certificate) > 0 {
		return false
	}
	for _, cond := range csr.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
			return false
		}
	}
	return true
}

// sync decides one request: 1. re-read it; 2. recognize it; 3. ask the authorizer for its
// requester; 4. approve through /approval.
func (c *Controller) sync(ctx context.Context, name string) error {
	_, err := c.store.Update(ctx, c.res(), "", name, "approval", func(cur runtime.Object) (runtime.Object, error) {
		csr, err := controller.As[*certificatesv1.CertificateSigningRequest](cur)
		if err != nil {
			return nil, err
		}
		if !undecided(csr) {
			return csr, nil
		}
		req, err := csrsigning.ParseCSR(csr.Spec.Request)
		if err != nil {
			return csr, nil // not a request a kubelet makes: left to people
		}
		for _, r := range recognizers {
			if !r.recognize(csr, req) {
				continue
			}
			ok, err := c.allowed(ctx, csr, r.subresource)
			if err != nil {
				return nil, err
			}
			if ok {
				csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
					Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved", Message: r.message,
				})
				return csr, nil
			}
		}
		return csr, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// allowed asks whether the request's user may create the subresource, as a
// SubjectAccessReview of spec.username, uid, groups and extra would.
func (c *Controller) allowed(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	u := auth.User{Name: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups}
	if len(csr.Spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range csr.Spec.Extra {
			u.Extra[k] = v
		}
	}
	d, _, err := c.authz.Authorize(ctx, auth.Attributes{
		User: u, Verb: "create", ResourceRequest: true, APIGroup: certificatesv1.GroupName, APIVersion: "*",
		Resource: "certificatesigningrequests", Subresource: subresource,
	})
	if err != nil {
		return false, err
	}
	return d == auth.Allow, nil
}
