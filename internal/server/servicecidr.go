package server

import (
	"context"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// defaultServiceCIDRName is the ServiceCIDR kube-apiserver keeps for its service range.
const defaultServiceCIDRName = "kubernetes"

// bootstrapServiceCIDR does what upstream's default-servicecidr controller does at start:
// it creates the ServiceCIDR "kubernetes" holding the service range when it is missing,
// and marks it Ready (no reason, upstream's message) when it holds that range and has
// no Ready condition, or an Unknown one.
func bootstrapServiceCIDR(ctx context.Context, store *registry.Store, now func() metav1.Time) error {
	res := store.Catalogue().Get(networkingv1.SchemeGroupVersion.WithResource("servicecidrs"))
	cidrs := []string{registry.DefaultServiceCIDR()}
	obj := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: defaultServiceCIDRName}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if _, err := store.Create(ctx, res, "", obj, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err := store.Update(ctx, res, "", defaultServiceCIDRName, "status", func(cur runtime.Object) (runtime.Object, error) {
		c, ok := cur.(*networkingv1.ServiceCIDR)
		if !ok || !slices.Equal(c.Spec.CIDRs, cidrs) {
			return cur, nil
		}
		if ready := meta.FindStatusCondition(c.Status.Conditions, networkingv1.ServiceCIDRConditionReady); ready != nil && ready.Status != metav1.ConditionUnknown {
			return cur, nil
		}
		meta.RemoveStatusCondition(&c.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
		c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{
			Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
			Message: "Kubernetes default Service CIDR is ready", LastTransitionTime: now(),
		})
		return c, nil
	}, registry.WriteOptions{})
	return err
}
