package validation

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Custom validates custom resources as kube-apiserver's apiextensions
// customresource strategy does, in upstream's order: the type meta
// (apiVersion and kind), ObjectMeta, the OpenAPI v3 schema of the CRD
// version (validation ratcheting on update: errors in values unchanged from
// the stored object are dropped), the scale subresource's replica paths,
// the ObjectMeta of x-kubernetes-embedded-resource values, and the
// uniqueness of x-kubernetes-list-type set and map items.
//
// CEL rules (x-kubernetes-validations) are not evaluated.
//
// A Custom caches the compiled schema of each CRD version and recompiles it
// when it is given a different *CustomResourceDefinition for the same name
// (the catalogue builds a new one whenever the CRD changes). CRDs are
// read-only to it. It is safe for concurrent use.
type Custom struct {
	mu       sync.RWMutex
	compiled map[customKey]*customVersion
}

// NewCustom returns a custom resource validator with an empty cache.
func NewCustom() *Custom {
	return &Custom{compiled: map[customKey]*customVersion{}}
}

type customKey struct{ crd, version string }

// customVersion is what one version of one CRD object validates with.
type customVersion struct {
	crd        *apiextensionsv1.CustomResourceDefinition
	gvk        schema.GroupVersionKind
	namespaced bool
	// props is the version's openAPIV3Schema (nil without one) and schema its
	// kube-openapi form; status is the schema of the status property when the
	// version has a status subresource.
	props  *apiextensionsv1.JSONSchemaProps
	schema *spec.Schema
	status *spec.Schema
	scale  *apiextensionsv1.CustomResourceSubresourceScale
	// err is set when the schema could not be converted.
	err error
}

// version returns the compiled CRD version, compiling it on first use.
func (c *Custom) version(crd *apiextensionsv1.CustomResourceDefinition, version string) *customVersion {
	key := customKey{crd: crd.Name, version: version}
	c.mu.RLock()
	cv := c.compiled[key]
	c.mu.RUnlock()
	if cv != nil && cv.crd == crd {
		return cv
	}
	cv = compileCustom(crd, version)
	c.mu.Lock()
	c.compiled[key] = cv
	c.mu.Unlock()
	return cv
}

func compileCustom(crd *apiextensionsv1.CustomResourceDefinition, version string) *customVersion {
	cv := &customVersion{
		crd:        crd,
		gvk:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind},
		namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
	}
	var v *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			v = &crd.Spec.Versions[i]
		}
	}
	if v == nil {
		return cv
	}
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		cv.props = v.Schema.OpenAPIV3Schema
		cv.schema, cv.err = convertSchema(cv.props)
	}
	if v.Subresources != nil {
		cv.scale = v.Subresources.Scale
		if v.Subresources.Status != nil && cv.props != nil && cv.err == nil {
			if st, ok := cv.props.Properties["status"]; ok {
				cv.status, cv.err = convertSchema(&st)
			}
		}
	}
	return cv
}

// Validate returns the errors upstream reports when obj is created as a
// custom resource of crd served at version.
func (c *Custom) Validate(crd *apiextensionsv1.CustomResourceDefinition, version string, obj *unstructured.Unstructured) field.ErrorList {
	cv := c.version(crd, version)
	if errs := cv.typeMeta(obj); len(errs) > 0 {
		return errs
	}
	// 1. ObjectMeta, as upstream's customResourceValidator.
	var errs field.ErrorList
	if m, merrs := customObjectMeta(obj); len(merrs) > 0 {
		errs = append(errs, merrs...)
	} else {
		errs = append(errs, apimachineryvalidation.ValidateObjectMeta(m, cv.namespaced, apimachineryvalidation.NameIsDNSSubdomain, metaPath)...)
	}
	// 2. The schema, then the scale paths.
	errs = append(errs, cv.validateSchema(nil, cv.schema, obj.Object, nil, nil)...)
	errs = append(errs, cv.scaleSpec(obj)...)
	errs = append(errs, cv.scaleStatus(obj)...)
	// 3. Embedded resources and list-type invariants.
	errs = append(errs, embeddedResources(nil, obj.Object, cv.props)...)
	errs = append(errs, listSetsAndMaps(nil, cv.props, obj.Object)...)
	return errs
}

// beginUpdate starts the validation of an update: the version's validator, the errors of
// the type (done: nothing else is checked) or of the metadata update, and oldObj's content
// (nil without oldObj).
func (c *Custom) beginUpdate(crd *apiextensionsv1.CustomResourceDefinition, version string, obj, oldObj *unstructured.Unstructured) (cv *customVersion, errs field.ErrorList, oldContent map[string]interface{}, done bool) {
	cv = c.version(crd, version)
	if errs := cv.typeMeta(obj); len(errs) > 0 {
		return cv, errs, nil, true
	}
	if oldObj != nil {
		oldContent = oldObj.Object
	}
	return cv, customObjectMetaUpdate(obj, oldObj), oldContent, false
}

// ValidateUpdate returns the errors upstream reports when oldObj is replaced
// by obj through the main resource. Schema errors in values equal to their
// counterpart in oldObj are ratcheted (dropped), as upstream's
// CRDValidationRatcheting; list-type errors are reported only when oldObj
// had none.
func (c *Custom) ValidateUpdate(crd *apiextensionsv1.CustomResourceDefinition, version string, obj, oldObj *unstructured.Unstructured) field.ErrorList {
	cv, errs, oldContent, done := c.beginUpdate(crd, version, obj, oldObj)
	if done {
		return errs
	}
	root := newCorrelated(obj.Object, oldContent, cv.props)
	errs = append(errs, cv.validateSchema(nil, cv.schema, obj.Object, oldContent, root)...)
	errs = append(errs, cv.scaleSpec(obj)...)
	errs = append(errs, cv.scaleStatus(obj)...)
	errs = append(errs, embeddedResources(nil, obj.Object, cv.props)...)
	if len(listSetsAndMaps(nil, cv.props, oldContent)) == 0 {
		errs = append(errs, listSetsAndMaps(nil, cv.props, obj.Object)...)
	}
	return errs
}

// ValidateStatusUpdate returns the errors upstream reports when oldObj is
// replaced by obj through the status subresource: ObjectMeta update rules,
// then the status (when obj has one) against the schema's status property,
// ratcheted against oldObj's status, with paths under "status".
func (c *Custom) ValidateStatusUpdate(crd *apiextensionsv1.CustomResourceDefinition, version string, obj, oldObj *unstructured.Unstructured) field.ErrorList {
	cv, errs, oldContent, done := c.beginUpdate(crd, version, obj, oldObj)
	if done {
		return errs
	}
	if status, ok := obj.Object["status"]; ok && cv.status != nil {
		corr := newCorrelated(obj.Object, oldContent, cv.props).key("status")
		if corr == nil {
			var statusProps *apiextensionsv1.JSONSchemaProps
			if st, ok := cv.props.Properties["status"]; ok {
				statusProps = &st
			}
			corr = newCorrelated(status, oldContent["status"], statusProps)
		}
		errs = append(errs, cv.validateSchema(field.NewPath("status"), cv.status, status, oldContent["status"], corr)...)
	}
	errs = append(errs, cv.scaleStatus(obj)...)
	if newErrs := listSetsAndMaps(nil, cv.props, obj.Object); len(newErrs) > 0 && len(listSetsAndMaps(nil, cv.props, oldContent)) == 0 {
		errs = append(errs, newErrs...)
	}
	return errs
}

// typeMeta is upstream's ValidateTypeMeta: kind and apiVersion must be the
// served ones.
func (cv *customVersion) typeMeta(obj *unstructured.Unstructured) field.ErrorList {
	if obj == nil {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), nil, "object does not implement the Object interfaces")}
	}
	var errs field.ErrorList
	if k := obj.GetKind(); k != cv.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), k, fmt.Sprintf("must be %v", cv.gvk.Kind)))
	}
	if av, want := obj.GetAPIVersion(), cv.gvk.Group+"/"+cv.gvk.Version; av != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), av, fmt.Sprintf("must be %v", want)))
	}
	return errs
}

// customObjectMeta is upstream's getObjectMeta: the metadata map converted to
// an ObjectMeta.
func customObjectMeta(obj *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	if obj == nil || obj.Object == nil {
		return &metav1.ObjectMeta{}, nil
	}
	raw := obj.Object["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	m, ok := raw.(map[string]interface{})
	if !ok {
		return nil, field.ErrorList{field.Invalid(metaPath, raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	out := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return nil, field.ErrorList{field.Invalid(metaPath, raw, err.Error())}
	}
	return out, nil
}

// customObjectMetaUpdate is upstream's ObjectMeta update validation of a
// custom resource.
func customObjectMetaUpdate(obj, oldObj *unstructured.Unstructured) field.ErrorList {
	m, errs := customObjectMeta(obj)
	if len(errs) > 0 {
		return errs
	}
	om, errs := customObjectMeta(oldObj)
	if len(errs) > 0 {
		return errs
	}
	return apimachineryvalidation.ValidateObjectMetaUpdate(m, om, metaPath)
}

// validateSchema validates value against s (nil: no schema) and maps the
// result to field errors under fldPath. With corr set, errors in values
// equal to their old counterpart are ratcheted.
func (cv *customVersion) validateSchema(fldPath *field.Path, s *spec.Schema, value, oldValue interface{}, corr *correlated) (errs field.ErrorList) {
	if cv.err != nil {
		return field.ErrorList{field.InternalError(fldPath, fmt.Errorf("the server could not properly serve the CR schema: %v", cv.err))}
	}
	if s == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			errs = field.ErrorList{field.InternalError(fldPath, fmt.Errorf("the server could not properly serve the CR schema: %v", r))}
		}
	}()
	var res *validate.Result
	if corr != nil {
		res = (&ratchet{schema: s, formats: strfmt.Default, corr: corr}).Validate(value)
	} else {
		res = validate.NewSchemaValidator(s, nil, "", strfmt.Default).Validate(value)
	}
	if res.IsValid() {
		return nil
	}
	errs = openAPIResultToFieldErrors(fldPath, res)
	// kube-openapi walks properties in map order; sort for stable output.
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

// openAPIResultToFieldErrors is upstream's kubeOpenAPIResultToFieldErrors.
func openAPIResultToFieldErrors(fldPath *field.Path, result *validate.Result) field.ErrorList {
	var errs field.ErrorList
	for _, err := range result.Errors {
		verr, ok := err.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(fldPath, "", err.Error()))
			continue
		}
		errPath := fldPath
		if len(verr.Name) > 0 && verr.Name != "." {
			errPath = errPath.Child(strings.TrimPrefix(verr.Name, "."))
		}
		value := interface{}("")
		if verr.Value != nil {
			value = verr.Value
		}
		switch verr.Code() {
		case openapierrors.RequiredFailCode:
			errs = append(errs, field.Required(errPath, ""))
		case openapierrors.EnumFailCode:
			values := []string{}
			for _, allowed := range verr.Values {
				if s, ok := allowed.(string); ok {
					values = append(values, s)
				} else {
					b, _ := json.Marshal(allowed)
					values = append(values, string(b))
				}
			}
			errs = append(errs, field.NotSupported(errPath, verr.Value, values))
		case openapierrors.TooLongFailCode:
			errs = append(errs, field.TooLong(errPath, "", int(int64Or(verr.Valid, -1))))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			errs = append(errs, field.TooMany(errPath, int(int64Or(verr.Value, -1)), int(int64Or(verr.Valid, -1))))
		case openapierrors.InvalidTypeCode:
			errs = append(errs, field.TypeInvalid(errPath, value, verr.Error()))
		default:
			errs = append(errs, field.Invalid(errPath, value, verr.Error()))
		}
	}
	return errs
}

func int64Or(v interface{}, def int64) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return def
}

// scaleSpec is upstream's ValidateScaleSpec.
func (cv *customVersion) scaleSpec(obj *unstructured.Unstructured) field.ErrorList {
	if cv.scale == nil {
		return nil
	}
	return replicasAt(obj, cv.scale.SpecReplicasPath)
}

// scaleStatus is upstream's ValidateScaleStatus.
func (cv *customVersion) scaleStatus(obj *unstructured.Unstructured) field.ErrorList {
	if cv.scale == nil {
		return nil
	}
	errs := replicasAt(obj, cv.scale.StatusReplicasPath)
	if sel := cv.scale.LabelSelectorPath; sel != nil {
		p := strings.TrimPrefix(*sel, ".")
		v, _, err := unstructured.NestedString(obj.Object, strings.Split(p, ".")...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*sel), v, err.Error()))
		}
	}
	return errs
}

func replicasAt(obj *unstructured.Unstructured, path string) field.ErrorList {
	p := strings.TrimPrefix(path, ".")
	n, _, err := unstructured.NestedInt64(obj.Object, strings.Split(p, ".")...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, err.Error())}
	case n < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// embeddedResources is upstream's schemaobjectmeta.Validate below the root:
// values marked x-kubernetes-embedded-resource need apiVersion and kind and
// a valid ObjectMeta.
func embeddedResources(pth *field.Path, x interface{}, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	switch x := x.(type) {
	case map[string]interface{}:
		if s.XEmbeddedResource {
			errs = append(errs, embeddedResource(pth, x)...)
		}
		for _, k := range sortedKeys(x) {
			if prop, ok := s.Properties[k]; ok {
				errs = append(errs, embeddedResources(pth.Child(k), x[k], &prop)...)
			} else if s.AdditionalProperties != nil {
				errs = append(errs, embeddedResources(pth.Key(k), x[k], s.AdditionalProperties.Schema)...)
			}
		}
	case []interface{}:
		var items *apiextensionsv1.JSONSchemaProps
		if s.Items != nil {
			items = s.Items.Schema
		}
		for i, v := range x {
			errs = append(errs, embeddedResources(pth.Index(i), v, items)...)
		}
	}
	return errs
}

func embeddedResource(pth *field.Path, x map[string]interface{}) field.ErrorList {
	var errs field.ErrorList
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, field.Required(pth.Child("apiVersion"), ""))
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, field.Required(pth.Child("kind"), ""))
	}
	for _, k := range sortedKeys(x) {
		v := x[k]
		switch k {
		case "apiVersion":
			if av, ok := v.(string); !ok {
				errs = append(errs, field.Invalid(pth.Child("apiVersion"), v, "must be a string"))
			} else if av == "" {
				errs = append(errs, field.Invalid(pth.Child("apiVersion"), av, "must not be empty"))
			} else if _, err := schema.ParseGroupVersion(av); err != nil {
				errs = append(errs, field.Invalid(pth.Child("apiVersion"), av, err.Error()))
			}
		case "kind":
			if kind, ok := v.(string); !ok {
				errs = append(errs, field.Invalid(pth.Child("kind"), v, "must be a string"))
			} else if kind == "" {
				errs = append(errs, field.Invalid(pth.Child("kind"), kind, "must not be empty"))
			} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(kind)); len(msgs) > 0 {
				errs = append(errs, field.Invalid(pth.Child("kind"), kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
			}
		case "metadata":
			m := &metav1.ObjectMeta{}
			b, err := json.Marshal(v)
			if err == nil {
				err = json.Unmarshal(b, m)
			}
			if err != nil {
				errs = append(errs, field.Invalid(pth.Child("metadata"), v, err.Error()))
				continue
			}
			if m.Name == "" {
				m.Name = "fakename"
			}
			errs = append(errs, apimachineryvalidation.ValidateObjectMeta(m, m.Namespace != "", pathSegmentName, pth.Child("metadata"))...)
		}
	}
	return errs
}

func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// listSetsAndMaps is upstream's structurallisttype.ValidateListSetsAndMaps:
// items of x-kubernetes-list-type set lists, and the keys of map lists, are
// unique.
func listSetsAndMaps(pth *field.Path, s *apiextensionsv1.JSONSchemaProps, obj map[string]interface{}) field.ErrorList {
	if s == nil || obj == nil {
		return nil
	}
	var errs field.ErrorList
	keys := sortedKeys(obj)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		for _, k := range keys {
			errs = append(errs, listSetsAndMapsValue(pth.Key(k), s.AdditionalProperties.Schema, obj[k])...)
		}
	}
	if s.Properties != nil {
		for _, k := range keys {
			if sub, ok := s.Properties[k]; ok {
				errs = append(errs, listSetsAndMapsValue(pth.Child(k), &sub, obj[k])...)
			}
		}
	}
	return errs
}

func listSetsAndMapsValue(pth *field.Path, s *apiextensionsv1.JSONSchemaProps, v interface{}) field.ErrorList {
	switch v := v.(type) {
	case []interface{}:
		var errs field.ErrorList
		if s.XListType != nil {
			switch *s.XListType {
			case "set":
				nonUnique, err := nonUniqueItems(pth, v)
				if err != nil {
					errs = append(errs, err)
				} else {
					for _, i := range nonUnique {
						errs = append(errs, field.Duplicate(pth.Index(i), v[i]))
					}
				}
			case "map":
				errs = append(errs, listMapKeys(pth, s, v)...)
			}
		}
		if s.Items != nil && s.Items.Schema != nil {
			for i := range v {
				errs = append(errs, listSetsAndMapsValue(pth.Index(i), s.Items.Schema, v[i])...)
			}
		}
		return errs
	case map[string]interface{}:
		return listSetsAndMaps(pth, s, v)
	}
	return nil
}

// nonUniqueItems returns the indexes of the second occurrence of each
// repeated item.
func nonUniqueItems(pth *field.Path, items []interface{}) ([]int, *field.Error) {
	if len(items) <= 1 {
		return nil, nil
	}
	scalars := make(map[interface{}]int, len(items))
	compounds := make(map[string]int, len(items))
	var out []int
	for i, x := range items {
		switch x.(type) {
		case map[string]interface{}, []interface{}:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, field.Invalid(pth.Index(i), x, "internal error")
			}
			compounds[string(b)]++
			if compounds[string(b)] == 2 {
				out = append(out, i)
			}
		default:
			if x != nil && !reflect.TypeOf(x).Comparable() {
				return nil, field.Invalid(pth.Index(i), x, "internal error")
			}
			scalars[x]++
			if scalars[x] == 2 {
				out = append(out, i)
			}
		}
	}
	return out, nil
}

func listMapKeys(pth *field.Path, s *apiextensionsv1.JSONSchemaProps, items []interface{}) field.ErrorList {
	for i, x := range items {
		if _, ok := x.(map[string]interface{}); x != nil && !ok {
			return field.ErrorList{field.Invalid(pth.Index(i), x, "must be an object for an array of list-type map")}
		}
	}
	if len(items) <= 1 {
		return nil
	}
	if len(s.XListMapKeys) == 1 {
		type unspecified struct{}
		keyField := s.XListMapKeys[0]
		keys := make([]interface{}, 0, len(items))
		for _, x := range items {
			k, ok := interface{}(nil), false
			if x != nil {
				k, ok = x.(map[string]interface{})[keyField]
			}
			if !ok {
				k = unspecified{}
			}
			keys = append(keys, k)
		}
		nonUnique, err := nonUniqueItems(pth, keys)
		if err != nil {
			return field.ErrorList{err}
		}
		var errs field.ErrorList
		for _, i := range nonUnique {
			if keys[i] == (unspecified{}) {
				errs = append(errs, field.Duplicate(pth.Index(i), map[string]interface{}{}))
			} else {
				errs = append(errs, field.Duplicate(pth.Index(i), map[string]interface{}{keyField: keys[i]}))
			}
		}
		return errs
	}
	keys := make([]interface{}, 0, len(items))
	for _, x := range items {
		key := map[string]interface{}{}
		if x != nil {
			for _, kf := range s.XListMapKeys {
				if k, ok := x.(map[string]interface{})[kf]; ok {
					key[kf] = k
				}
			}
		}
		keys = append(keys, key)
	}
	nonUnique, err := nonUniqueItems(pth, keys)
	if err != nil {
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for _, i := range nonUnique {
		errs = append(errs, field.Duplicate(pth.Index(i), keys[i]))
	}
	return errs
}

// ratchet is upstream's ratchetingValueValidator: it follows kube-openapi's
// SchemaValidator down the new value, keeps the old value correlated, and
// turns the errors of a value equal to its old counterpart into warnings.
type ratchet struct {
	schema  *spec.Schema
	root    interface{}
	path    string
	formats strfmt.Registry
	options []validate.Option
	corr    *correlated
}

var _ validate.ValueValidator = (*ratchet)(nil)

func (r *ratchet) option() validate.Option {
	return func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = r.forField
		o.NewValidatorForIndex = r.forIndex
	}
}

// Validate validates the correlated new value (the argument is the same value).
func (r *ratchet) Validate(interface{}) *validate.Result {
	opts := append([]validate.Option{r.option()}, r.options...)
	res := validate.NewSchemaValidator(r.schema, r.root, r.path, r.formats, opts...).Validate(r.corr.new)
	if res.IsValid() {
		return res
	}
	if r.corr.deepEqual() {
		out := &validate.Result{}
		out.MergeAsWarnings(res)
		return out
	}
	return res
}

func (r *ratchet) forField(name string, s *spec.Schema, rootSchema interface{}, root string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	child := r.corr.key(name)
	if child == nil || (r.path == "" && (name == "kind" || name == "apiVersion")) {
		return validate.NewSchemaValidator(s, rootSchema, root, formats, opts...)
	}
	return &ratchet{schema: s, root: rootSchema, path: root, formats: formats, options: opts, corr: child}
}

func (r *ratchet) forIndex(i int, s *spec.Schema, rootSchema interface{}, root string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	child := r.corr.index(i)
	if child == nil {
		return validate.NewSchemaValidator(s, rootSchema, root, formats, opts...)
	}
	return &ratchet{schema: s, root: rootSchema, path: root, formats: formats, options: opts, corr: child}
}

// SetPath does nothing (kube-openapi does not call it on field validators).
func (r *ratchet) SetPath(string) {}

// Applies is always true.
func (r *ratchet) Applies(interface{}, reflect.Kind) bool { return true }

// correlated pairs a new value with its old counterpart, as upstream's
// common.CorrelatedObject over the structural schema: map fields correlate
// by name, list items only in x-kubernetes-list-type map lists, by key.
type correlated struct {
	new, old interface{}
	schema   *apiextensionsv1.JSONSchemaProps
	equal    *bool
	children map[interface{}]*correlated
	// oldByKey indexes the old map-list items by key once built.
	oldByKey map[interface{}]interface{}
	keyed    bool
}

func newCorrelated(new, old interface{}, s *apiextensionsv1.JSONSchemaProps) *correlated {
	return &correlated{new: new, old: old, schema: s}
}

func (c *correlated) child(k interface{}, new, old interface{}, s *apiextensionsv1.JSONSchemaProps) *correlated {
	if c.children == nil {
		c.children = map[interface{}]*correlated{}
	}
	ch := &correlated{new: new, old: old, schema: s}
	c.children[k] = ch
	return ch
}

// key returns the correlation of a map field, or nil when either side lacks
// it or the schema does not specify it.
func (c *correlated) key(name string) *correlated {
	if c == nil || c.schema == nil {
		return nil
	}
	if ch, ok := c.children[name]; ok {
		return ch
	}
	om, ok1 := c.old.(map[string]interface{})
	nm, ok2 := c.new.(map[string]interface{})
	if !ok1 || !ok2 {
		return nil
	}
	ov, ok1 := om[name]
	nv, ok2 := nm[name]
	if !ok1 || !ok2 {
		return nil
	}
	var s *apiextensionsv1.JSONSchemaProps
	if p, ok := c.schema.Properties[name]; ok {
		s = &p
	} else if c.schema.AdditionalProperties != nil && c.schema.AdditionalProperties.Schema != nil {
		s = c.schema.AdditionalProperties.Schema
	} else {
		return nil
	}
	return c.child(name, nv, ov, s)
}

// index returns the correlation of a list item, or nil when the list is not
// a map list or the item has no old counterpart.
func (c *correlated) index(i int) *correlated {
	if c == nil || c.schema == nil {
		return nil
	}
	if ch, ok := c.children[i]; ok {
		return ch
	}
	nl, ok := c.new.([]interface{})
	if !ok || len(nl) <= i {
		return nil
	}
	ov := c.oldItem(nl[i])
	if ov == nil || c.schema.Items == nil || c.schema.Items.Schema == nil {
		return nil
	}
	return c.child(i, nl[i], ov, c.schema.Items.Schema)
}

// oldItem finds the old map-list item with the keys of item.
func (c *correlated) oldItem(item interface{}) interface{} {
	ol, ok := c.old.([]interface{})
	if !ok || c.schema.XListType == nil || *c.schema.XListType != "map" {
		return nil
	}
	c.keyed = true
	if c.schema.Type != "array" || len(c.schema.XListMapKeys) == 0 || len(ol) == 0 {
		return nil
	}
	m, ok := item.(map[string]interface{})
	if !ok {
		return nil
	}
	k, ok := c.mapKey(m)
	if !ok {
		return nil
	}
	if c.oldByKey == nil {
		c.oldByKey = map[interface{}]interface{}{}
		for _, x := range ol {
			om, ok := x.(map[string]interface{})
			if !ok {
				continue
			}
			if ek, ok := c.mapKey(om); ok {
				if _, dup := c.oldByKey[ek]; !dup {
					c.oldByKey[ek] = om
				}
			}
		}
	}
	return c.oldByKey[k]
}

// mapKey is upstream's composite key of a map-list item: scalar key values only.
func (c *correlated) mapKey(m map[string]interface{}) (interface{}, bool) {
	keys := c.schema.XListMapKeys
	if len(keys) == 1 {
		switch v := m[keys[0]].(type) {
		case bool, float64, int64, string:
			return v, true
		}
		return nil, false
	}
	var b strings.Builder
	for _, k := range keys {
		switch v := m[k].(type) {
		case bool:
			fmt.Fprintf(&b, "\x00%t", v)
		case float64:
			fmt.Fprintf(&b, "\x00%f", v)
		case int64:
			fmt.Fprintf(&b, "\x00%d", v)
		case string:
			fmt.Fprintf(&b, "\x00%q", v)
		default:
			return nil, false
		}
	}
	return b.String(), true
}

// deepEqual is upstream's CachedDeepEqual.
func (c *correlated) deepEqual() (res bool) {
	if c == nil {
		return false
	}
	if c.equal != nil {
		return *c.equal
	}
	defer func() { c.equal = &res }()
	if c.new == nil && c.old == nil {
		return true
	}
	if c.new == nil || c.old == nil {
		return false
	}
	oa, oldIsArray := c.old.([]interface{})
	na, newIsArray := c.new.([]interface{})
	om, oldIsMap := c.old.(map[string]interface{})
	nm, newIsMap := c.new.(map[string]interface{})
	if oldIsArray != newIsArray || oldIsMap != newIsMap {
		return false
	}
	switch {
	case oldIsArray:
		if len(oa) != len(na) {
			return false
		}
		for i := range na {
			ch := c.index(i)
			if ch == nil {
				if !c.keyed {
					return reflect.DeepEqual(oa, na)
				}
				return false
			}
			if !ch.deepEqual() {
				return false
			}
		}
		return true
	case oldIsMap:
		if len(om) != len(nm) {
			return false
		}
		for k := range nm {
			ch := c.key(k)
			if ch == nil || !ch.deepEqual() {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(c.old, c.new)
}

// supportedFormats are the string formats CRD schemas validate, normalized
// as go-openapi does (dashes removed): upstream's supportedVersionedFormats
// at the compatibility version of this module (1.34 added the k8s- names).
// Other formats are ignored, as upstream strips them.
var supportedFormats = map[string]bool{
	"bsonobjectid": true, "uri": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true,
	"cidr": true, "mac": true, "uuid": true, "uuid3": true, "uuid4": true, "uuid5": true,
	"isbn": true, "isbn10": true, "isbn13": true, "creditcard": true, "ssn": true, "hexcolor": true,
	"rgbcolor": true, "byte": true, "password": true, "date": true, "duration": true, "datetime": true,
	"k8sshortname": true, "k8slongname": true,
}

// stripUnsupportedFormat is upstream's StripUnsupportedFormatsPostProcessor.
func stripUnsupportedFormat(s *spec.Schema) {
	if s.Format == "" {
		return
	}
	t := ""
	if len(s.Type) == 1 {
		t = s.Type[0]
	}
	switch t {
	case "", "string":
		if !supportedFormats[strings.ReplaceAll(s.Format, "-", "")] {
			s.Format = ""
		}
	case "integer":
		if s.Format != "int32" && s.Format != "int64" {
			s.Format = ""
		}
	case "number":
		if s.Format != "float" && s.Format != "double" {
			s.Format = ""
		}
	default:
		s.Format = ""
	}
}

// convertSchema converts a CRD schema to kube-openapi's form as upstream's
// ConvertJSONSchemaPropsWithPostProcess does, unsupported formats stripped.
func convertSchema(in *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	out := &spec.Schema{}
	if err := convertSchemaInto(in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonValue decodes a CRD JSON value as upstream's v1 to internal
// conversion does: null and empty are nil, integers are int64.
func jsonValue(in *apiextensionsv1.JSON) (interface{}, error) {
	if in == nil || len(in.Raw) == 0 || string(in.Raw) == "null" {
		return nil, nil
	}
	var v interface{}
	if err := json.Unmarshal(in.Raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func convertSchemaInto(in *apiextensionsv1.JSONSchemaProps, out *spec.Schema) error {
	if in == nil {
		return nil
	}
	out.ID = in.ID
	out.Schema = spec.SchemaURL(in.Schema)
	out.Description = in.Description
	if in.Type != "" {
		out.Type = spec.StringOrArray([]string{in.Type})
	}
	if in.XIntOrString {
		out.VendorExtensible.AddExtension("x-kubernetes-int-or-string", true)
		out.Type = spec.StringOrArray{"integer", "string"}
	}
	out.Nullable = in.Nullable
	out.Format = in.Format
	out.Title = in.Title
	out.Maximum = in.Maximum
	out.ExclusiveMaximum = in.ExclusiveMaximum
	out.Minimum = in.Minimum
	out.ExclusiveMinimum = in.ExclusiveMinimum
	out.MaxLength = in.MaxLength
	out.MinLength = in.MinLength
	out.Pattern = in.Pattern
	out.MaxItems = in.MaxItems
	out.MinItems = in.MinItems
	out.UniqueItems = in.UniqueItems
	out.MultipleOf = in.MultipleOf
	out.MaxProperties = in.MaxProperties
	out.MinProperties = in.MinProperties
	out.Required = in.Required
	var err error
	if out.Default, err = jsonValue(in.Default); err != nil {
		return err
	}
	if out.Example, err = jsonValue(in.Example); err != nil {
		return err
	}
	if in.Enum != nil {
		out.Enum = make([]interface{}, len(in.Enum))
		for i := range in.Enum {
			if out.Enum[i], err = jsonValue(&in.Enum[i]); err != nil {
				return err
			}
		}
	}
	for _, l := range []struct {
		in  []apiextensionsv1.JSONSchemaProps
		out *[]spec.Schema
	}{{in.AllOf, &out.AllOf}, {in.OneOf, &out.OneOf}, {in.AnyOf, &out.AnyOf}} {
		for i := range l.in {
			var s spec.Schema
			if err := convertSchemaInto(&l.in[i], &s); err != nil {
				return err
			}
			*l.out = append(*l.out, s)
		}
	}
	if in.Not != nil {
		out.Not = &spec.Schema{}
		if err := convertSchemaInto(in.Not, out.Not); err != nil {
			return err
		}
	}
	if out.Properties, err = convertSchemaMap(in.Properties); err != nil {
		return err
	}
	if out.PatternProperties, err = convertSchemaMap(in.PatternProperties); err != nil {
		return err
	}
	if out.Definitions, err = convertSchemaMap(in.Definitions); err != nil {
		return err
	}
	if in.Ref != nil {
		if out.Ref, err = spec.NewRef(*in.Ref); err != nil {
			return err
		}
	}
	if in.AdditionalProperties != nil {
		if out.AdditionalProperties, err = convertSchemaOrBool(in.AdditionalProperties); err != nil {
			return err
		}
	}
	if in.AdditionalItems != nil {
		if out.AdditionalItems, err = convertSchemaOrBool(in.AdditionalItems); err != nil {
			return err
		}
	}
	if in.Items != nil {
		out.Items = &spec.SchemaOrArray{}
		if in.Items.Schema != nil {
			out.Items.Schema = &spec.Schema{}
			if err := convertSchemaInto(in.Items.Schema, out.Items.Schema); err != nil {
				return err
			}
		}
		if in.Items.JSONSchemas != nil {
			out.Items.Schemas = make([]spec.Schema, len(in.Items.JSONSchemas))
			for i := range in.Items.JSONSchemas {
				if err := convertSchemaInto(&in.Items.JSONSchemas[i], &out.Items.Schemas[i]); err != nil {
					return err
				}
			}
		}
	}
	if in.Dependencies != nil {
		out.Dependencies = make(spec.Dependencies, len(in.Dependencies))
		for k, v := range in.Dependencies {
			d := spec.SchemaOrStringArray{Property: v.Property}
			if v.Schema != nil {
				d.Schema = &spec.Schema{}
				if err := convertSchemaInto(v.Schema, d.Schema); err != nil {
					return err
				}
			}
			out.Dependencies[k] = d
		}
	}
	if in.ExternalDocs != nil {
		out.ExternalDocs = &spec.ExternalDocumentation{Description: in.ExternalDocs.Description, URL: in.ExternalDocs.URL}
	}
	stripUnsupportedFormat(out)
	if in.XPreserveUnknownFields != nil {
		out.VendorExtensible.AddExtension("x-kubernetes-preserve-unknown-fields", *in.XPreserveUnknownFields)
	}
	if in.XEmbeddedResource {
		out.VendorExtensible.AddExtension("x-kubernetes-embedded-resource", true)
	}
	if len(in.XListMapKeys) != 0 {
		keys := make([]interface{}, len(in.XListMapKeys))
		for i, k := range in.XListMapKeys {
			keys[i] = k
		}
		out.VendorExtensible.AddExtension("x-kubernetes-list-map-keys", keys)
	}
	if in.XListType != nil {
		out.VendorExtensible.AddExtension("x-kubernetes-list-type", *in.XListType)
	}
	if in.XMapType != nil {
		out.VendorExtensible.AddExtension("x-kubernetes-map-type", *in.XMapType)
	}
	// x-kubernetes-validations (CEL) are not evaluated, so not carried over.
	return nil
}

func convertSchemaMap(in map[string]apiextensionsv1.JSONSchemaProps) (map[string]spec.Schema, error) {
	if in == nil {
		return nil, nil
	}
	out := make(map[string]spec.Schema, len(in))
	for k := range in {
		v := in[k]
		var s spec.Schema
		if err := convertSchemaInto(&v, &s); err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

func convertSchemaOrBool(in *apiextensionsv1.JSONSchemaPropsOrBool) (*spec.SchemaOrBool, error) {
	out := &spec.SchemaOrBool{Allows: in.Allows}
	if in.Schema != nil {
		out.Schema = &spec.Schema{}
		if err := convertSchemaInto(in.Schema, out.Schema); err != nil {
			return nil, err
		}
	}
	return out, nil
}
