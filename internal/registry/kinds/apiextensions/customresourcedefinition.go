package apiextensions

import (
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

// Validate returns no errors: quotad serves CRDs as stored.
func (CustomResourceDefinition) Validate(runtime.Object) field.ErrorList { return nil }

// ValidateUpdate returns no errors (see Validate).
func (CustomResourceDefinition) ValidateUpdate(_, _ runtime.Object) field.ErrorList { return nil }

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
