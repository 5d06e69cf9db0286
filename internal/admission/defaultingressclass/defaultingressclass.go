package defaultingressclass

import (
	"context"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/admission"
)

var ingressClassGVR = networkingv1.SchemeGroupVersion.WithResource("ingressclasses")

// annotationIngressClass is the deprecated annotation naming an Ingress's class.
const annotationIngressClass = "kubernetes.io/ingress.class"

// Plugin is the DefaultIngressClass admission plugin.
type Plugin struct {
	r admission.Reader
}

var (
	_ admission.Handler = (*Plugin)(nil)
	_ admission.Mutator = (*Plugin)(nil)
)

// New returns the plugin reading IngressClasses through r.
func New(r admission.Reader) *Plugin { return &Plugin{r: r} }

// Name returns "DefaultIngressClass".
func (p *Plugin) Name() string { return admission.DefaultIngressClass }

// Handles reports true for CREATE only, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit sets the default class on a new Ingress that names none.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource() != (networkingv1.SchemeGroupVersion.WithResource("ingresses").GroupResource()) {
		return nil
	}
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok || ing == nil || ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[annotationIngressClass]; ok {
		return nil
	}
	objs, err := p.r.List(ctx, ingressClassGVR, "")
	if err != nil {
		return admission.NewForbidden(a, apierrors.NewInternalError(err))
	}
	var defaults []*networkingv1.IngressClass
	for _, o := range objs {
		if ic, ok := o.(*networkingv1.IngressClass); ok && ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, ic)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	name := defaults[0].Name
	ing.Spec.IngressClassName = &name
	return nil
}
