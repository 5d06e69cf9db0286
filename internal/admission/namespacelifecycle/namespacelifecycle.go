package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

var (
	namespaceKind     = schema.GroupKind{Kind: "Namespace"}
	namespaceResource = schema.GroupResource{Resource: "namespaces"}
	namespaceGVR      = corev1.SchemeGroupVersion.WithResource("namespaces")
	// accessReviews may be created in any namespace: answering "not found" would leak
	// whether a namespace exists.
	accessReviews = schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}
)

// immortal are the namespaces that may never be deleted.
var immortal = map[string]bool{
	metav1.NamespaceDefault: true,
	metav1.NamespaceSystem:  true,
	metav1.NamespacePublic:  true,
}

// Plugin is the NamespaceLifecycle admission plugin.
type Plugin struct {
	r admission.Reader
}

var (
	_ admission.Handler = (*Plugin)(nil)
	_ admission.Mutator = (*Plugin)(nil)
)

// New returns the plugin reading namespaces through r.
func New(r admission.Reader) *Plugin {
	return &Plugin{r: r}
}

// Name returns "NamespaceLifecycle".
func (p *Plugin) Name() string { return admission.NamespaceLifecycle }

// Handles reports true for CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Admit refuses the request if it deletes an immortal namespace, or creates an object in a
// namespace that is missing or terminating. It never changes the object.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	isNamespace := a.Kind.GroupKind() == namespaceKind || a.Resource.GroupResource() == namespaceResource

	// 1. Immortal namespaces cannot be deleted.
	if a.Operation == admission.Delete && isNamespace && immortal[a.Name] {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	// 2. Cluster-scoped objects, namespaces themselves, and anything but CREATE pass.
	if isNamespace || a.Namespace == "" || a.Operation != admission.Create {
		return nil
	}
	if a.Resource.GroupResource() == accessReviews {
		return nil
	}

	// 3. The namespace must exist...
	obj, err := p.r.Get(ctx, namespaceGVR, "", a.Namespace)
	if err != nil && apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(namespaceResource, a.Namespace)
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("namespace %s: unexpected object type %T", a.Namespace, obj))
	}

	// 4. ...and not be terminating.
	if ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	ferr := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	if se, ok := ferr.(*apierrors.StatusError); ok && se.ErrStatus.Details != nil {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
			Field:   "metadata.namespace",
		})
	}
	return ferr
}
