package table

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// objectMetaDocs holds the swagger descriptions upstream uses for the Name and
// Age/Created At columns.
func objectMetaDocs() map[string]string { return metav1.ObjectMeta{}.SwaggerDoc() }

// Printer renders one kind. cells returns the row cells (all columns, wide
// included) and the row conditions.
type Printer struct {
	// gvk is the kind's preferred group/version/kind, used to fill in
	// apiVersion/kind of rows when includeObject=Object and to decode
	// unstructured input.
	gvk schema.GroupVersionKind
	// newObj returns an empty typed object; nil for the default printer.
	newObj  func() runtime.Object
	columns func() []metav1.TableColumnDefinition
	cells   func(obj runtime.Object, now time.Time) ([]interface{}, []metav1.TableRowCondition, error)
	// nilRowsWhenEmpty mirrors upstream's default convertor, which leaves
	// Rows nil (JSON null) for an empty list; the printers return [].
	nilRowsWhenEmpty bool
}

// Convert renders objects of the printer's kind (typed, or unstructured carrying
// apiVersion/kind) as a Table: a kind's strategy calls its printer's Convert. now, the
// includeObject policy and noHeaders are as for the package's Convert.
func (p Printer) Convert(objs []runtime.Object, now time.Time, includeObject metav1.IncludeObjectPolicy, noHeaders bool) (*metav1.Table, error) {
	if err := checkIncludeObject(includeObject); err != nil {
		return nil, err
	}
	gk := p.gvk.GroupKind()
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"}}
	if !noHeaders {
		t.ColumnDefinitions = p.columns()
	}
	if !p.nilRowsWhenEmpty {
		t.Rows = make([]metav1.TableRow, 0, len(objs))
	}
	for _, obj := range objs {
		// 1. Unstructured input of a printed kind is decoded into its type.
		typed := obj
		if u, isU := obj.(*unstructured.Unstructured); isU && p.newObj != nil {
			typed = p.newObj()
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), typed); err != nil {
				return nil, fmt.Errorf("table: decoding %s: %w", gk, err)
			}
		}
		// 2. Cells from the kind's printer.
		cells, conds, err := p.cells(typed, now)
		if err != nil {
			return nil, err
		}
		// 3. The row's object as asked by includeObject.
		raw, err := rowObject(obj, p.gvk, includeObject)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells, Conditions: conds, Object: raw})
	}
	return t, nil
}

func checkIncludeObject(policy metav1.IncludeObjectPolicy) error {
	switch policy {
	case metav1.IncludeObject, metav1.IncludeMetadata, metav1.IncludeNone, "":
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", policy))
}

// rowObject builds a row's Object the way kube-apiserver's asTable does.
func rowObject(obj runtime.Object, gvk schema.GroupVersionKind, policy metav1.IncludeObjectPolicy) (runtime.RawExtension, error) {
	switch policy {
	case metav1.IncludeObject:
		if obj.GetObjectKind().GroupVersionKind().Empty() && !gvk.Empty() {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return runtime.RawExtension{Object: obj}, nil
	case metav1.IncludeMetadata, "":
		m, err := meta.Accessor(obj)
		if err != nil {
			return runtime.RawExtension{}, err
		}
		partial := meta.AsPartialObjectMetadata(m)
		partial.GetObjectKind().SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
		return runtime.RawExtension{Object: partial}, nil
	case metav1.IncludeNone:
		return runtime.RawExtension{}, nil
	}
	return runtime.RawExtension{}, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", policy))
}

// DefaultPrinter is k8s.io/apiserver's default table convertor, used upstream
// for every kind without a printer (LimitRange, CustomResourceDefinition,
// Role, ...): Name and the creation time in RFC 3339, UTC.
func DefaultPrinter(gvk schema.GroupVersionKind) Printer {
	return Printer{
		gvk: gvk,
		columns: func() []metav1.TableColumnDefinition {
			d := objectMetaDocs()
			return []metav1.TableColumnDefinition{
				{Name: "Name", Type: "string", Format: "name", Description: d["name"]},
				{Name: "Created At", Type: "date", Description: d["creationTimestamp"]},
			}
		},
		cells: func(obj runtime.Object, _ time.Time) ([]interface{}, []metav1.TableRowCondition, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, nil, err
			}
			return []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)}, nil, nil
		},
		nilRowsWhenEmpty: true,
	}
}

// nameColumn and ageColumn are the Name and Age columns every printer shares.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDocs()["name"]}
}

func ageColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDocs()["creationTimestamp"]}
}

// since is upstream's translateTimestampSince with an injected clock.
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// sinceMicro is upstream's translateMicroTimestampSince with an injected clock.
func sinceMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// typedPrinter builds a printer for the k8s.io/api type T.
func typedPrinter[T runtime.Object](gvk schema.GroupVersionKind, newObj func() T, columns func() []metav1.TableColumnDefinition, cells func(obj T, now time.Time) ([]interface{}, []metav1.TableRowCondition)) Printer {
	return Printer{
		gvk:     gvk,
		newObj:  func() runtime.Object { return newObj() },
		columns: columns,
		cells: func(obj runtime.Object, now time.Time) ([]interface{}, []metav1.TableRowCondition, error) {
			typed, ok := obj.(T)
			if !ok {
				return nil, nil, fmt.Errorf("table: %s printer got %T", gvk.Kind, obj)
			}
			c, conds := cells(typed, now)
			return c, conds, nil
		},
	}
}
