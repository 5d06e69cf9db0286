package clusterroleaggregation

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// allKey is the queue's only key: recompute every aggregated ClusterRole.
const allKey = "all"

// Controller keeps aggregated ClusterRoles' rules current.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
}

// New returns the controller; panics counts recovered panics (may be nil).
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("clusterrole-aggregation", store, log, panics, nil)}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(rbacv1.SchemeGroupVersion.WithResource("clusterroles"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("clusterrole-aggregation")
	go c.loop.Watch(ctx, c.res(), func(runtime.Object, bool) { q.Add(allKey) })
	c.loop.Process(ctx, q, 1, c.sync)
	return nil
}

// sync recomputes every aggregated ClusterRole and writes those whose rules differ.
func (c *Controller) sync(ctx context.Context, _ string) (time.Duration, error) {
	_, err := c.pass(ctx)
	return 0, err
}

// SyncAll aggregates until nothing changes (chains such as view → edit → admin take a pass
// per link), so the default roles are complete before the server serves requests. It gives
// up after a pass per ClusterRole; the running controller finishes anything left.
func (c *Controller) SyncAll(ctx context.Context) error {
	for i := 0; ; i++ {
		changed, err := c.pass(ctx)
		if err != nil || changed == 0 {
			return err
		}
		if i > 64 {
			return nil
		}
	}
}

// pass recomputes every aggregated ClusterRole once and writes those whose rules differ,
// returning how many it wrote.
func (c *Controller) pass(ctx context.Context) (int, error) {
	objs, _, err := c.store.ListObjects(ctx, c.res(), "")
	if err != nil {
		return 0, err
	}
	roles := make([]*rbacv1.ClusterRole, 0, len(objs))
	for _, o := range objs {
		if r, ok := o.(*rbacv1.ClusterRole); ok {
			roles = append(roles, r)
		}
	}
	sort.Slice(roles, func(i, j int) bool { return roles[i].Name < roles[j].Name })
	written := 0
	for _, r := range roles {
		if r.AggregationRule == nil {
			continue
		}
		want := Aggregate(r, roles)
		if equality.Semantic.DeepEqual(want, r.Rules) {
			continue
		}
		_, err := c.store.Update(ctx, c.res(), "", r.Name, "", func(cur runtime.Object) (runtime.Object, error) {
			cr, err := controller.As[*rbacv1.ClusterRole](cur)
			if err != nil {
				return nil, err
			}
			cr.Rules = want
			return cr, nil
		}, registry.WriteOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return written, err
		}
		written++
	}
	return written, nil
}

// Aggregate returns the rules role aggregates from roles (sorted by name): for each
// selector in order, the rules of every other matching role not already present.
func Aggregate(role *rbacv1.ClusterRole, roles []*rbacv1.ClusterRole) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			continue
		}
		for _, other := range roles {
			if other.Name == role.Name || !sel.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, r := range other.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules
}
