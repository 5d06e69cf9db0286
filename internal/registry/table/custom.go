package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
)

// DefaultCustomColumns are the columns a CRD version without
// additionalPrinterColumns is served with (upstream's
// serveDefaultColumnsIfEmpty): Age from .metadata.creationTimestamp.
func DefaultCustomColumns() []apiextensionsv1.CustomResourceColumnDefinition {
	return []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Age", Type: "date", Description: objectMetaDocs()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"},
	}
}

// ConvertCustom renders custom resources as a Table with the Name column and
// one column per CRD additionalPrinterColumn (DefaultCustomColumns when cols
// is empty), as apiextensions-apiserver does. Each column's JSONPath is
// evaluated with k8s.io/client-go/util/jsonpath (missing keys allowed); a
// missing value is a nil cell. Cells are typed by the column type: integer
// → int64, number → float64, boolean → bool, string → the printed JSONPath
// result, date → age since now ("<invalid>" when unparsable). As upstream, a
// column whose JSONPath does not parse ends the column list (it and the
// columns after it are dropped). includeObject and noHeaders are as for
// Convert.
func ConvertCustom(objs []*unstructured.Unstructured, cols []apiextensionsv1.CustomResourceColumnDefinition, now time.Time, includeObject metav1.IncludeObjectPolicy, noHeaders bool) (*metav1.Table, error) {
	if err := checkIncludeObject(includeObject); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		cols = DefaultCustomColumns()
	}

	// 1. Columns and their parsed JSONPaths.
	headers := []metav1.TableColumnDefinition{nameColumn()}
	var paths []*jsonpath.JSONPath
	for _, col := range cols {
		path := jsonpath.New(col.Name)
		if err := path.Parse(fmt.Sprintf("{%s}", col.JSONPath)); err != nil {
			break
		}
		path.AllowMissingKeys(true)
		desc := fmt.Sprintf("Custom resource definition column (in JSONPath format): %s", col.JSONPath)
		if col.Description != "" {
			desc = col.Description
		}
		paths = append(paths, path)
		headers = append(headers, metav1.TableColumnDefinition{
			Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority,
		})
	}

	t := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"}}
	if !noHeaders {
		t.ColumnDefinitions = headers
	}

	// 2. One row per object.
	t.Rows = make([]metav1.TableRow, 0, len(objs))
	var buf bytes.Buffer
	for _, obj := range objs {
		cells := make([]interface{}, 1, 1+len(paths))
		cells[0] = obj.GetName()
		for i, path := range paths {
			results, err := path.FindResults(obj.UnstructuredContent())
			if err != nil || len(results) == 0 || len(results[0]) == 0 {
				cells = append(cells, nil)
				continue
			}
			// Only simple paths are allowed: the first result is the value.
			value := results[0][0].Interface()
			if headers[i+1].Type == "string" {
				if err := path.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err == nil {
					cells = append(cells, buf.String())
				} else {
					cells = append(cells, nil)
				}
				buf.Reset()
				continue
			}
			cells = append(cells, customCell(headers[i+1].Type, value, now))
		}
		raw, err := rowObject(obj, obj.GroupVersionKind(), includeObject)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells, Object: raw})
	}
	return t, nil
}

// customCell converts a JSON value to the cell of a column type; nil when the
// value does not fit the type.
func customCell(columnType string, value interface{}, now time.Time) interface{} {
	if value == nil {
		return nil
	}
	switch columnType {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "string":
		if s, ok := value.(string); ok {
			return s
		}
	case "date":
		if s, ok := value.(string); ok {
			var ts metav1.Time
			if err := ts.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return since(ts, now)
		}
	}
	return nil
}
