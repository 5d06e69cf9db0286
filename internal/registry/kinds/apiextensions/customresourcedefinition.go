package apiextensions

import (
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/table"
)

// CustomResourceDefinition is the strategy of customresourcedefinitions.
type CustomResourceDefinition struct{}

// ConvertToTable prints upstream's default columns (no printer upstream).
func (CustomResourceDefinition) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.DefaultPrinter(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")).Convert(objs, now, include, false)
}

// Validate returns the errors of the versions' selectableFields, as
// apiextensions-apiserver's ValidateCustomResourceSelectableFields; the rest of a CRD is
// served as stored.
func (CustomResourceDefinition) Validate(obj runtime.Object) field.ErrorList {
	return validateSelectableFields(obj.(*apiextensionsv1.CustomResourceDefinition), nil)
}

// ValidateUpdate is Validate, but a version that already had more selectable fields than
// allowed may keep them (upstream's findTooManySelectableFieldsAllowed).
func (CustomResourceDefinition) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	o, _ := old.(*apiextensionsv1.CustomResourceDefinition)
	return validateSelectableFields(obj.(*apiextensionsv1.CustomResourceDefinition), o)
}

// maxSelectableFields is upstream's MaxSelectableFields.
const maxSelectableFields = 8

func validateSelectableFields(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	tooManyAllowed := map[string]bool{}
	if old != nil {
		for _, v := range old.Spec.Versions {
			tooManyAllowed[v.Name] = len(v.SelectableFields) > maxSelectableFields
		}
	}
	for i, v := range crd.Spec.Versions {
		if len(v.SelectableFields) == 0 {
			continue
		}
		path := field.NewPath("spec", "versions").Index(i).Child("selectableFields")
		var schema *apiextensionsv1.JSONSchemaProps
		if v.Schema != nil {
			schema = v.Schema.OpenAPIV3Schema
		}
		unique := map[string]bool{}
		for j, f := range v.SelectableFields {
			p := path.Index(j).Child("jsonPath")
			if f.JSONPath == "" {
				errs = append(errs, field.Required(p, ""))
				continue
			}
			names, found, err := walkSchema(f.JSONPath, schema)
			if err != nil {
				errs = append(errs, field.Invalid(p, f.JSONPath, fmt.Sprintf("is an invalid path: %v", err)))
				continue
			}
			if names[0] == "metadata" {
				errs = append(errs, field.Invalid(p, f.JSONPath, "must not point to fields in metadata"))
			}
			if found == nil || (found.Type != "string" && found.Type != "boolean" && found.Type != "integer") {
				errs = append(errs, field.Invalid(p, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
			}
			key := strings.Join(names, ".")
			if unique[key] {
				errs = append(errs, field.Duplicate(p, f.JSONPath))
			}
			unique[key] = true
		}
		if len(unique) > maxSelectableFields && !tooManyAllowed[v.Name] {
			errs = append(errs, field.TooMany(path, len(unique), maxSelectableFields))
		}
	}
	return errs
}

// walkSchema follows a selectable field's JSON path (".a.b": field names only) through
// the version's schema, as apiextensions-apiserver's ValidFieldPath without array
// notation, returning the names and the schema found.
func walkSchema(jsonPath string, schema *apiextensionsv1.JSONSchemaProps) ([]string, *apiextensionsv1.JSONSchemaProps, error) {
	if strings.ContainsAny(jsonPath, "[]") {
		return nil, nil, fmt.Errorf("array notation is not allowed")
	}
	if !strings.HasPrefix(jsonPath, ".") {
		return nil, nil, fmt.Errorf("expected [ or . but got: %s", strings.SplitN(jsonPath, ".", 2)[0])
	}
	names := strings.Split(jsonPath[1:], ".")
	for _, name := range names {
		if name == "" {
			return nil, nil, fmt.Errorf("unexpected end of JSON path")
		}
		switch {
		case schema == nil:
			return nil, nil, fmt.Errorf("does not refer to a valid field")
		case schema.Properties != nil:
			next, ok := schema.Properties[name]
			if !ok {
				return nil, nil, fmt.Errorf("does not refer to a valid field")
			}
			schema = &next
		case schema.AdditionalProperties != nil && schema.AdditionalProperties.Schema != nil:
			schema = schema.AdditionalProperties.Schema // a map's key
		default:
			return nil, nil, fmt.Errorf("does not refer to a valid field")
		}
	}
	return names, schema, nil
}

// PrepareForCreate adds the cleanup finalizer and sets the status apiextensions-apiserver
// settles on for a CRD whose names are free: names accepted, established.
func (CustomResourceDefinition) PrepareForCreate(obj runtime.Object, _ auth.User, now metav1.Time) {
	o := obj.(*apiextensionsv1.CustomResourceDefinition)
	o.Finalizers = addFinalizer(o.Finalizers, "customresourcecleanup.apiextensions.k8s.io")
	o.Status = apiextensionsv1.CustomResourceDefinitionStatus{
		AcceptedNames:  o.Spec.Names,
		StoredVersions: storedVersions(o),
		Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: now},
			{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: now},
		},
	}
}

func storedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return []string{v.Name}
		}
	}
	return nil
}

func addFinalizer(fs []string, f string) []string {
	for _, x := range fs {
		if x == f {
			return fs
		}
	}
	return append(append([]string(nil), fs...), f)
}
