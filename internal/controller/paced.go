package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/quotad/quotad/internal/registry"
)

// Paced returns c with its writes (create, update, delete) paced by a token bucket of qps
// writes a second, burst at once, as kube-controller-manager's client paces each of its
// controllers' requests (--kube-api-qps, --kube-api-burst; with
// --use-service-account-credentials every controller has a client, and a bucket, of its
// own). Reads and watches are not paced: they are served from memory, as kube-controller-
// manager's controllers read their informers' caches. A write waits for its token; when its
// context ends first (or its deadline falls before the token), it fails writing nothing.
// qps <= 0 returns c.
func Paced(c Client, qps float32, burst int) Client {
	if qps <= 0 {
		return c
	}
	return &paced{Client: c, limiter: flowcontrol.NewTokenBucketRateLimiter(qps, max(burst, 1))}
}

type paced struct {
	Client
	limiter flowcontrol.RateLimiter
}

func (p *paced) Create(ctx context.Context, res *registry.Resource, ns string, obj runtime.Object, opts registry.WriteOptions) (*registry.Result, error) {
	if err := p.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	return p.Client.Create(ctx, res, ns, obj, opts)
}

func (p *paced) Update(ctx context.Context, res *registry.Resource, ns, name, subresource string, fn registry.UpdateFunc, opts registry.WriteOptions) (*registry.Result, error) {
	if err := p.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	return p.Client.Update(ctx, res, ns, name, subresource, fn, opts)
}

func (p *paced) Delete(ctx context.Context, res *registry.Resource, ns, name string, opts metav1.DeleteOptions, wopts registry.WriteOptions) (*registry.DeleteResult, error) {
	if err := p.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	return p.Client.Delete(ctx, res, ns, name, opts, wopts)
}

// RequestProgress passes a progress request on (it is a read of how far the watches have
// gone, not a write, and is not paced).
func (p *paced) RequestProgress(res *registry.Resource) bool { return RequestProgress(p.Client, res) }

// ProgressRequester is a client whose watches of a resource can be asked for a bookmark at
// the current revision (registry.Store.RequestProgress).
type ProgressRequester interface {
	RequestProgress(res *registry.Resource) bool
}

// RequestProgress asks c's watches of res for a bookmark at the current revision, when c
// can (a ProgressRequester), and reports whether it could.
func RequestProgress(c Client, res *registry.Resource) bool {
	pr, ok := c.(ProgressRequester)
	return ok && pr.RequestProgress(res)
}
