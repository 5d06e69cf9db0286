package registry

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/graceful"
	"github.com/quotad/quotad/internal/registry/table"
)

// Strategy is one kind's behaviour, as upstream's pkg/registry/<group>/<kind>/strategy.go:
// every written kind validates. The less common steps are the optional interfaces below,
// which the store asks a strategy for; a kind implements only those it needs. Strategies
// live one file per kind under internal/registry/kinds/<group>/ and are named by the
// catalogue (Builtins); they hold no state and do no IO.
type Strategy interface {
	// Validate returns upstream's field errors for a new object (metadata included).
	Validate(obj runtime.Object) field.ErrorList
	// ValidateUpdate returns upstream's field errors for replacing old with obj: obj's
	// own validity plus the update rules (immutable fields, allowed transitions).
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// Defaulter applies upstream's defaults to a new object, and to an updated one written
// through the main resource (unless the strategy is an UpdateDefaulter).
type Defaulter interface {
	Default(obj runtime.Object)
}

// UpdateDefaulter replaces Default on main-resource updates, for kinds whose update
// defaulting depends on the stored object (a Service drops what its old type needed, a
// DaemonSet counts template changes).
type UpdateDefaulter interface {
	DefaultUpdate(obj, old runtime.Object)
}

// CreatePreparer resets what users may not set on create, after mutating admission and
// before validation (upstream's PrepareForCreate). Strategies without it have their status
// cleared when the resource has a status subresource.
type CreatePreparer interface {
	PrepareForCreate(obj runtime.Object, user auth.User, now metav1.Time)
}

// UpdatePreparer is the kind's own part of an update, after the store kept what the
// subresource may not change and (main resource) defaulted it: upstream's PrepareForUpdate
// of the kind's main, status and other subresource strategies.
type UpdatePreparer interface {
	PrepareForUpdate(obj, old runtime.Object, subresource string, now metav1.Time)
}

// SubresourceValidator validates a write through a subresource whose rules differ from the
// main resource's (a CSR's /status and /approval); false: ValidateUpdate applies.
type SubresourceValidator interface {
	ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool)
}

// ClockedSubresourceValidator is a SubresourceValidator whose rules read the server's
// clock, given as now (the store's clock): a PodCertificateRequest's issued certificate
// must begin within 5 minutes of it. The store asks it before SubresourceValidator.
type ClockedSubresourceValidator interface {
	ValidateSubresourceUpdateAt(subresource string, obj, old runtime.Object, now time.Time) (field.ErrorList, bool)
}

// GracefulDeleter is a kind deleted gracefully (graceful.Deleter).
type GracefulDeleter = graceful.Deleter

// Warner returns the non-fatal warnings of a written object.
type Warner interface {
	Warnings(obj runtime.Object) []string
}

// UpdateWarner returns the non-fatal warnings of an update of old that wrote obj through
// subresource ("" for the object itself), as upstream's WarningsOnUpdate of the
// subresource's strategy; the store asks it rather than Warner on updates.
type UpdateWarner interface {
	UpdateWarnings(subresource string, obj, old runtime.Object) []string
}

// FieldLabeler adds the kind's field selector labels (upstream's GetAttrs/ToSelectableFields)
// to set, which already holds metadata.name and metadata.namespace.
type FieldLabeler interface {
	Fields(obj runtime.Object, set fields.Set)
}

// FieldLabelConverter is the kind's field label conversion (upstream's
// AddFieldLabelConversionFunc): the label a field selector's label becomes, with its value,
// or the error a list or watch answers with 400 Bad Request. A built-in kind without one
// accepts metadata.name and metadata.namespace (runtime.DefaultMetaV1FieldSelectorConversion).
type FieldLabelConverter interface {
	ConvertFieldLabel(label, value string) (string, string, error)
}

// TableConvertor renders objects of the kind as a Table (upstream's TableConvertor): every
// object is of the kind, typed or unstructured.
type TableConvertor interface {
	ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error)
}

// StatusMetadataKeeper is a kind whose /status writes apply the object's metadata (labels,
// annotations, finalizers, owner references) as upstream's status strategy of the kind
// does (the older kinds, whose strategy resets only the spec: pods, namespaces, nodes, the
// workloads, Jobs, ...); other kinds' status writes keep the stored metadata, as upstream's
// ResetObjectMetaForStatus.
type StatusMetadataKeeper interface {
	StatusKeepsMetadata() bool
}

// DeletePropagationDefaulter is a kind whose objects' dependents a delete asking for no
// propagation policy treats otherwise than in the background (upstream's
// GarbageCollectionDeleteStrategy: Jobs orphan their pods).
type DeletePropagationDefaulter interface {
	DefaultDeletePropagation() metav1.DeletionPropagation
}

// ListTableConvertor is the optional Table conversion of a list, for kinds whose
// printer looks across the list's items (upstream's StorageClass list marks only the
// effective default, its FlowSchema list orders by matching precedence). A kind without
// it converts a list as ConvertToTable does; a GET and each watch event convert one
// object with ConvertToTable, as upstream prints one object.
type ListTableConvertor interface {
	ConvertListToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error)
}

// ConvertFieldLabel converts a field selector's label and value as kube-apiserver's
// handlers do before a list or watch (the scheme's ConvertFieldLabel): the kind's
// FieldLabelConverter, else, for a custom resource, metadata.name, (namespaced only)
// metadata.namespace and the served version's selectableFields as apiextensions-apiserver's
// converter, else runtime.DefaultMetaV1FieldSelectorConversion.
func (r *Resource) ConvertFieldLabel(label, value string) (string, string, error) {
	if c, ok := r.Strategy.(FieldLabelConverter); ok {
		return c.ConvertFieldLabel(label, value)
	}
	if r.CRD != nil {
		if label == "metadata.name" || (r.Namespaced && label == "metadata.namespace") || slices.Contains(r.selectableFields(), label) {
			return label, value, nil
		}
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
	return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
}

// selectableFields are the field selector labels of a custom resource's served version:
// its selectableFields' JSON paths without the leading dot (nil for a built-in kind).
func (r *Resource) selectableFields() []string {
	if r.CRD == nil {
		return nil
	}
	var out []string
	for _, v := range r.CRD.Spec.Versions {
		if v.Name != r.GVR.Version {
			continue
		}
		for _, f := range v.SelectableFields {
			out = append(out, strings.TrimPrefix(f.JSONPath, "."))
		}
	}
	return out
}

// customFields adds a custom resource's selectable fields to set, as
// apiextensions-apiserver: the value printed as fmt.Sprint prints it, "" when the field is
// missing or null (a selectable field's path names a string, integer or boolean field through
// objects only: CRD validation refuses other paths).
func (r *Resource) customFields(obj runtime.Object, set fields.Set) {
	names := r.selectableFields()
	if len(names) == 0 {
		return
	}
	u, ok := obj.(runtime.Unstructured)
	if !ok {
		return
	}
	content := u.UnstructuredContent()
	for _, name := range names {
		v, found, err := unstructured.NestedFieldNoCopy(content, strings.Split(name, ".")...)
		if err != nil || !found || v == nil {
			set[name] = ""
			continue
		}
		set[name] = fmt.Sprint(v)
	}
}

// Fields returns the field set a field selector is matched against: metadata.name,
// metadata.namespace, and the fields the kind's strategy labels.
func (r *Resource) Fields(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if m.GetNamespace() != "" {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if l, ok := r.Strategy.(FieldLabeler); ok {
		l.Fields(obj, set)
	}
	r.customFields(obj, set)
	return set
}

// strategy returns the strategy of a write to res: the built-in kind's, the custom
// resource's (Config.CustomStrategy), or nil.
func (s *Store) strategy(res *Resource) Strategy {
	if res.Strategy != nil {
		return res.Strategy
	}
	if res.CRD != nil && s.cfg.CustomStrategy != nil {
		return s.cfg.CustomStrategy(res)
	}
	return nil
}

// defaultObject applies the strategy's defaults to a new object.
func (s *Store) defaultObject(res *Resource, obj runtime.Object) {
	if d, ok := s.strategy(res).(Defaulter); ok {
		d.Default(obj)
	}
}

// defaultUpdate applies the strategy's defaults to an object updated through the main
// resource.
func (s *Store) defaultUpdate(res *Resource, obj, old runtime.Object) {
	st := s.strategy(res)
	if d, ok := st.(UpdateDefaulter); ok {
		d.DefaultUpdate(obj, old)
		return
	}
	if d, ok := st.(Defaulter); ok {
		d.Default(obj)
	}
}

// ConvertToTable renders objects of res as a Table: with the kind's (or the custom
// resource's) TableConvertor, else upstream's default columns (Name, Created At).
func (s *Store) ConvertToTable(res *Resource, objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	if tc, ok := s.strategy(res).(TableConvertor); ok {
		return tc.ConvertToTable(objs, now, include)
	}
	return table.DefaultPrinter(schema.GroupVersionKind{}).Convert(objs, now, include, false)
}

// ConvertsListWhole reports whether res's Table of a list depends on the list as a whole
// (its strategy is a ListTableConvertor), so a list is converted at once, not page by page.
func (s *Store) ConvertsListWhole(res *Resource) bool {
	_, ok := s.strategy(res).(ListTableConvertor)
	return ok
}

// ConvertListToTable renders the items of a list (or of one page of it) of res as a
// Table: with the kind's ListTableConvertor, else as ConvertToTable.
func (s *Store) ConvertListToTable(res *Resource, objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	if tc, ok := s.strategy(res).(ListTableConvertor); ok {
		return tc.ConvertListToTable(objs, now, include)
	}
	return s.ConvertToTable(res, objs, now, include)
}
