package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/auth"
)

// Operation is the verb of an admitted request.
type Operation string

// Operations, spelled as upstream spells them.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Attributes describe one write request as admission sees it.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	Namespace   string
	// Name is the request's name; empty on create with generateName.
	Name string
	// Object is the new object (typed for built-in kinds, *unstructured.Unstructured for
	// custom resources); nil on delete. Mutating plugins may change it in place.
	Object runtime.Object
	// OldObject is the stored object on update and delete; nil on create.
	OldObject runtime.Object
	DryRun    bool
	// User is who makes the request (the impersonated user when impersonating); the zero
	// User for writes of in-process controllers, which carry none.
	User auth.User
}

// Reader is the read-only view of storage plugins get: objects are typed for built-in kinds
// and must not be modified.
type Reader interface {
	// Get returns one object or an error for which apierrors.IsNotFound is true.
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	// List returns every object of a resource in a namespace ("" for all or cluster-scoped).
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]runtime.Object, error)
}

// Mutator changes a request's object before validation (LimitRanger defaults, Priority).
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator accepts or refuses a request without changing it.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// Handler names a plugin and says which operations it cares about.
type Handler interface {
	Name() string
	Handles(op Operation) bool
}
