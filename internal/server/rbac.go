package server

import (
	"context"
	"log/slog"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/auth/rbac"
	"github.com/quotad/quotad/internal/registry"
)

// rbacFeed keeps the RBAC authorizer's policy current: one watch-fed cache per kind (Roles,
// ClusterRoles, RoleBindings, ClusterRoleBindings), also fed by this replica's own commits at
// once, and the policy rebuilt from the four after every change. Authorization thus never
// reads storage.
type rbacFeed struct {
	authz *rbac.Authorizer

	// mu orders rebuilds: each reads the caches after the change that triggered it, so the
	// last policy stored reflects the last change.
	mu     sync.Mutex
	caches map[string]*objectCache // by resource name
	synced chan struct{}           // closed once every cache has been listed
	closed bool
}

var rbacResources = []string{"roles", "clusterroles", "rolebindings", "clusterrolebindings"}

func newRBACFeed(ctx context.Context, store *registry.Store, log *slog.Logger) *rbacFeed {
	f := &rbacFeed{authz: rbac.New(), caches: map[string]*objectCache{}, synced: make(chan struct{})}
	for _, name := range rbacResources {
		f.caches[name] = &objectCache{byNS: map[string]map[string]runtime.Object{}, changed: f.rebuild}
	}
	for _, name := range rbacResources {
		res := store.Catalogue().Get(rbacv1.SchemeGroupVersion.WithResource(name))
		go f.caches[name].run(ctx, store, res, log)
	}
	return f
}

// observe applies this replica's committed writes at once.
func (f *rbacFeed) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	if res.GVR.Group != rbacv1.GroupName {
		return
	}
	if c := f.caches[res.GVR.Resource]; c != nil {
		c.observe(obj.DeepCopyObject(), deleted)
	}
}

// wait returns once every cache has been listed (or ctx is done).
func (f *rbacFeed) wait(ctx context.Context) error {
	select {
	case <-f.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rebuild builds the policy from the caches.
func (f *rbacFeed) rebuild() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var objs rbac.Objects
	all := true
	for name, c := range f.caches {
		c.mu.RLock()
		all = all && c.synced
		for _, byName := range c.byNS {
			for _, o := range byName {
				switch name {
				case "roles":
					if r, ok := o.(*rbacv1.Role); ok {
						objs.Roles = append(objs.Roles, r)
					}
				case "clusterroles":
					if r, ok := o.(*rbacv1.ClusterRole); ok {
						objs.ClusterRoles = append(objs.ClusterRoles, r)
					}
				case "rolebindings":
					if b, ok := o.(*rbacv1.RoleBinding); ok {
						objs.RoleBindings = append(objs.RoleBindings, b)
					}
				case "clusterrolebindings":
					if b, ok := o.(*rbacv1.ClusterRoleBinding); ok {
						objs.ClusterRoleBindings = append(objs.ClusterRoleBindings, b)
					}
				}
			}
		}
		c.mu.RUnlock()
	}
	f.authz.Update(objs)
	if all && !f.closed {
		f.closed = true
		close(f.synced)
	}
}

// AuthorizePath implements pathAuthorizer (/metrics, /debug/pprof/) through RBAC.
func (f *rbacFeed) AuthorizePath(u auth.User, verb, path string) bool {
	d, _, err := f.authz.Authorize(context.Background(), auth.Attributes{User: u, Verb: verb, Path: path})
	return err == nil && d == auth.Allow
}
