package pcrcleaner

import (
	"context"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's durations (cmd/kube-controller-manager's certificates.go).
const (
	// DefaultThreshold is the age past which a request is deleted.
	DefaultThreshold = 15 * time.Minute
	// DefaultPeriod is the time between the end of a pass and the start of the next.
	DefaultPeriod = 5 * time.Minute
)

// listPage is how many requests a pass reads at a time.
const listPage = 500

// Options configure the cleaner; zero values are upstream's.
type Options struct {
	Threshold time.Duration
	Period    time.Duration
	// Clock tells the requests' age and times the passes (nil: the real clock).
	Clock  clock.WithTicker
	Panics controller.PanicObserver
}

// Controller is the PodCertificateRequest cleaner.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	opts  Options
}

// New returns the cleaner.
func New(store controller.Client, log *slog.Logger, opts Options) *Controller {
	if log == nil {
		log = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Threshold <= 0 {
		opts.Threshold = DefaultThreshold
	}
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	return &Controller{store: store, log: log, opts: opts,
		loop: controller.NewLoop("podcertificaterequest-cleaner-controller", store, log, opts.Panics, opts.Clock)}
}

func (c *Controller) pcrs() *registry.Resource {
	return c.store.Catalogue().Get(certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"))
}

// Start cleans at once and then a period after each pass ends, until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.log.Info("Starting PodCertificateRequest cleaner controller")
	defer c.log.Info("Shutting down PodCertificateRequest cleaner controller")
	for {
		c.loop.Guard("clean", func() { c.Clean(ctx) })
		t := c.opts.Clock.NewTimer(c.opts.Period)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// expired names a request to delete and the UID it was read with.
type expired struct {
	ns, name string
	uid      types.UID
}

// Clean runs one pass: 1. read every request, keeping those created at least the
// threshold ago and not already being deleted; 2. delete each, guarded by its UID. A
// request gone meanwhile is no error; other errors are logged and the pass goes on.
func (c *Controller) Clean(ctx context.Context) {
	res := c.pcrs()
	now := c.opts.Clock.Now()
	var old []expired
	err := c.store.ListEach(ctx, res, "", registry.ListOptions{}, listPage, func(_ string, items []runtime.Object) error {
		for _, o := range items {
			p, ok := o.(*certificatesv1.PodCertificateRequest)
			if !ok || p.DeletionTimestamp != nil || now.Before(p.CreationTimestamp.Add(c.opts.Threshold)) {
				continue
			}
			old = append(old, expired{ns: p.Namespace, name: p.Name, uid: p.UID})
		}
		return nil
	})
	if err != nil {
		c.log.Error("Unable to list PodCertificateRequests", "err", err)
		return
	}
	for _, p := range old {
		uid := p.uid
		_, err := c.store.Delete(ctx, res, p.ns, p.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			c.log.Error("Error while attempting to clean PodCertificateRequest", "pcr", p.ns+"/"+p.name, "err", err)
		}
	}
}
