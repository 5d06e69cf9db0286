package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// Client is the registry as a controller sees it: the served resources, reads, watches and
// admitted writes. *registry.Store implements it; unit tests hand controllers an in-memory
// one (package controller/fake). Every write goes through admission and quota like a
// user's, so a controller never bypasses accounting.
type Client interface {
	// Catalogue returns the served resources.
	Catalogue() *registry.Catalogue
	// Get reads one object at the latest revision.
	Get(ctx context.Context, res *registry.Resource, ns, name string) (runtime.Object, error)
	// ListObjects reads every object of res in ns ("" for all) at one revision, which it
	// returns.
	ListObjects(ctx context.Context, res *registry.Resource, ns string) ([]runtime.Object, int64, error)
	// ListEach hands page every object of res in ns ("" for all) matching opts, read at one
	// revision pageSize at a time: a controller going over a large resource keeps only what
	// it needs of each object (page's slice is reused; its objects are the caller's).
	ListEach(ctx context.Context, res *registry.Resource, ns string, opts registry.ListOptions, pageSize int64, page func(rv string, items []runtime.Object) error) error
	// Watch streams the changes of res in ns.
	Watch(ctx context.Context, res *registry.Resource, ns string, opts registry.WatchOptions) (<-chan registry.Event, error)
	// Create, Update and Delete are admitted writes.
	Create(ctx context.Context, res *registry.Resource, ns string, obj runtime.Object, opts registry.WriteOptions) (*registry.Result, error)
	Update(ctx context.Context, res *registry.Resource, ns, name, subresource string, fn registry.UpdateFunc, opts registry.WriteOptions) (*registry.Result, error)
	Delete(ctx context.Context, res *registry.Resource, ns, name string, opts metav1.DeleteOptions, wopts registry.WriteOptions) (*registry.DeleteResult, error)
}

var _ Client = (*registry.Store)(nil)
