package apiextensions

import (
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// CustomResource is the strategy of the objects of one served version of a CRD: validated
// against the version's schema (and CEL rules) by the server's one validation.Custom, printed
// with the version's additionalPrinterColumns. Custom resources need no defaulting here:
// they are pruned and defaulted when decoded.
type CustomResource struct {
	Validator *validation.Custom
	CRD       *apiextensionsv1.CustomResourceDefinition
	Version   string
	// Status reports the version's status subresource.
	Status bool
}

// Validate returns the schema's errors for a new object.
func (c CustomResource) Validate(obj runtime.Object) field.ErrorList {
	return c.Validator.Validate(c.CRD, c.Version, obj.(*unstructured.Unstructured))
}

// ValidateUpdate returns the schema's errors for an update. The strategy is not told the
// subresource: a main-resource write keeps the stored status when the version has a status
// subresource, so a changed status means a write through /status.
func (c CustomResource) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	o, _ := old.(*unstructured.Unstructured)
	if c.Status && o != nil && !equality.Semantic.DeepEqual(u.Object["status"], o.Object["status"]) {
		return c.Validator.ValidateStatusUpdate(c.CRD, c.Version, u, o)
	}
	return c.Validator.ValidateUpdate(c.CRD, c.Version, u, o)
}

// ConvertToTable prints the version's additionalPrinterColumns (Age when it has none).
func (c CustomResource) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	us := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		us = append(us, o.(*unstructured.Unstructured))
	}
	var cols []apiextensionsv1.CustomResourceColumnDefinition
	for i := range c.CRD.Spec.Versions {
		if c.CRD.Spec.Versions[i].Name == c.Version {
			cols = c.CRD.Spec.Versions[i].AdditionalPrinterColumns
		}
	}
	if len(cols) == 0 {
		cols = table.DefaultCustomColumns()
	}
	return table.ConvertCustom(us, cols, now, include, false)
}
