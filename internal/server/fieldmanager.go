package server

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/quotad/quotad/internal/registry"
)

// fieldManagers hands out the server-side apply field manager of each resource: apimachinery's
// managedfields, typed by the definitions of the served /openapi/v2 document (so lists merge
// by their keys, as the published schema says), rebuilt when the catalogue changes.
type fieldManagers struct {
	docs *openAPIDocs

	mu    sync.Mutex
	gen   int64
	tc    managedfields.TypeConverter
	byGVK map[schema.GroupVersionKind]*managedfields.FieldManager
}

func newFieldManagers(docs *openAPIDocs) *fieldManagers {
	return &fieldManagers{docs: docs, gen: -1}
}

// TypeConverter returns the structured-merge-diff type converter of the served schemas
// (what a MutatingAdmissionPolicy's apply configuration merges by).
func (f *fieldManagers) TypeConverter() (managedfields.TypeConverter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.currentLocked(); err != nil {
		return nil, err
	}
	return f.tc, nil
}

// For returns the field manager of res's objects.
func (f *fieldManagers) For(res *registry.Resource) (*managedfields.FieldManager, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// 1. The type converter of the catalogue's current generation.
	if err := f.currentLocked(); err != nil {
		return nil, err
	}
	// 2. The resource's manager, made once per generation.
	gvk := res.GVK()
	if fm := f.byGVK[gvk]; fm != nil {
		return fm, nil
	}
	objects := resourceObjects{res: res}
	newManager := managedfields.NewDefaultFieldManager
	if res.Type == nil {
		newManager = managedfields.NewDefaultCRDFieldManager
	}
	// Status has a subresource of its own: applying the object owns none of it (upstream's
	// strategies reset it the same way).
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if res.Status {
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
		}
	}
	fm, err := newManager(f.tc, objects, objects, objects, gvk, gvk.GroupVersion(), "", reset)
	if err != nil {
		return nil, fmt.Errorf("field manager of %s: %w", gvk, err)
	}
	f.byGVK[gvk] = fm
	return fm, nil
}

// currentLocked rebuilds the type converter when the catalogue changed.
func (f *fieldManagers) currentLocked() error {
	if gen := f.docs.cat.Generation(); f.tc == nil || gen != f.gen {
		v2, err := f.docs.currentV2()
		if err != nil {
			return err
		}
		var doc struct {
			Definitions map[string]*spec.Schema `json:"definitions"`
		}
		if err := json.Unmarshal(v2.JSON, &doc); err != nil {
			return fmt.Errorf("field manager: reading the openapi definitions: %w", err)
		}
		for def, fields := range keyDefaults {
			for field, value := range fields {
				if d := doc.Definitions[def]; d != nil {
					if prop, ok := d.Properties[field]; ok {
						prop.Default = value
						d.Properties[field] = prop
					}
				}
			}
		}
		tc, err := managedfields.NewTypeConverter(doc.Definitions, false)
		if err != nil {
			return fmt.Errorf("field manager: %w", err)
		}
		f.tc, f.gen, f.byGVK = tc, gen, map[schema.GroupVersionKind]*managedfields.FieldManager{}
	}
	return nil
}

// keyDefaults are the defaults of fields that key the items of associative lists (upstream's
// +default markers, which the published schemas leave out): an applied port without a
// protocol is the TCP port the stored object holds, so ownership of list items matches.
var keyDefaults = map[string]map[string]any{
	"io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
	"io.k8s.api.core.v1.ServicePort":   {"protocol": "TCP"},
}

// resourceObjects creates, defaults and converts the objects of one resource for its field
// manager. quotad serves one version of each kind, so converting only turns the
// unstructured objects the manager builds back into the kind's Go type.
type resourceObjects struct {
	res *registry.Resource
}

// New returns an empty object of the resource's kind.
func (o resourceObjects) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	obj := o.res.New()
	obj.GetObjectKind().SetGroupVersionKind(kind)
	return obj, nil
}

// Default applies the kind's defaults (its strategy's).
func (o resourceObjects) Default(obj runtime.Object) {
	if d, ok := o.res.Strategy.(registry.Defaulter); ok {
		d.Default(obj)
	}
}

// Convert copies an unstructured object into a typed one.
func (o resourceObjects) Convert(in, out, _ interface{}) error {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("field manager: cannot convert %T to %T", in, out)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}

// ConvertToVersion returns typed objects of a built-in kind (and any other object as it is).
func (o resourceObjects) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || o.res.Type == nil {
		return in, nil
	}
	out := o.res.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(o.res.GVK())
	return out, nil
}

// ConvertFieldLabel leaves field labels as they are.
func (o resourceObjects) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
