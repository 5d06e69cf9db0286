package table

import (
	"encoding/json"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func widget(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestConvertCustom(t *testing.T) {
	cols := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
		{Name: "Ready", Type: "boolean", JSONPath: ".status.ready", Priority: 1},
		{Name: "Phase", Type: "string", JSONPath: ".status.phase", Description: "The phase of the widget."},
		{Name: "Ports", Type: "string", JSONPath: ".spec.ports"},
		{Name: "Size", Type: "string", Format: "byte", JSONPath: ".spec.size"},
		{Name: "Since", Type: "date", JSONPath: ".status.since"},
		{Name: "Missing", Type: "string", JSONPath: ".status.nope"},
		{Name: "Mistyped", Type: "integer", JSONPath: ".status.phase"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	w := widget(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"ns","creationTimestamp":"2026-03-04T04:06:07Z"},
		"spec":{"replicas":3,"ratio":1.5,"ports":[80,443],"size":1024},
		"status":{"ready":true,"phase":"Running","since":"yesterday"}}`)

	tbl, err := ConvertCustom([]*unstructured.Unstructured{w}, cols, testNow, metav1.IncludeNone, false)
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Replicas", Type: "integer", Description: "Custom resource definition column (in JSONPath format): .spec.replicas"},
		{Name: "Ratio", Type: "number", Description: "Custom resource definition column (in JSONPath format): .spec.ratio"},
		{Name: "Ready", Type: "boolean", Priority: 1, Description: "Custom resource definition column (in JSONPath format): .status.ready"},
		{Name: "Phase", Type: "string", Description: "The phase of the widget."},
		{Name: "Ports", Type: "string", Description: "Custom resource definition column (in JSONPath format): .spec.ports"},
		{Name: "Size", Type: "string", Format: "byte", Description: "Custom resource definition column (in JSONPath format): .spec.size"},
		{Name: "Since", Type: "date", Description: "Custom resource definition column (in JSONPath format): .status.since"},
		{Name: "Missing", Type: "string", Description: "Custom resource definition column (in JSONPath format): .status.nope"},
		{Name: "Mistyped", Type: "integer", Description: "Custom resource definition column (in JSONPath format): .status.phase"},
		{Name: "Age", Type: "date", Description: "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"},
	}
	if !reflect.DeepEqual(tbl.ColumnDefinitions, wantCols) {
		t.Errorf("columns\n got %#v\nwant %#v", tbl.ColumnDefinitions, wantCols)
	}
	wantCells := []interface{}{"w1", int64(3), 1.5, true, "Running", "[80,443]", "1024", "<invalid>", nil, nil, "60m"}
	if !reflect.DeepEqual(tbl.Rows[0].Cells, wantCells) {
		t.Errorf("cells\n got %#v\nwant %#v", tbl.Rows[0].Cells, wantCells)
	}
	if tbl.Rows[0].Object.Object != nil {
		t.Errorf("includeObject=None: want no object, got %v", tbl.Rows[0].Object.Object)
	}

	// Numbers decoded by encoding/json are float64: integer columns truncate,
	// number columns keep them.
	f := &unstructured.Unstructured{Object: map[string]interface{}{
		"metadata": map[string]interface{}{"name": "w2"},
		"spec":     map[string]interface{}{"replicas": float64(7), "ratio": int64(2)},
	}}
	tbl, err = ConvertCustom([]*unstructured.Unstructured{f}, cols[:2], testNow, metav1.IncludeNone, true)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.ColumnDefinitions != nil {
		t.Errorf("noHeaders: got columns %v", tbl.ColumnDefinitions)
	}
	if want := []interface{}{"w2", int64(7), float64(2)}; !reflect.DeepEqual(tbl.Rows[0].Cells, want) {
		t.Errorf("cells\n got %#v\nwant %#v", tbl.Rows[0].Cells, want)
	}
}

func TestConvertCustomDefaults(t *testing.T) {
	w := widget(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"ns","uid":"u","creationTimestamp":"2026-03-04T05:05:37Z"}}`)
	tbl, err := ConvertCustom([]*unstructured.Unstructured{w}, nil, testNow, metav1.IncludeMetadata, false)
	if err != nil {
		t.Fatal(err)
	}
	d := metav1.ObjectMeta{}.SwaggerDoc()
	wantCols := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: d["name"]},
		{Name: "Age", Type: "date", Description: d["creationTimestamp"]},
	}
	if !reflect.DeepEqual(tbl.ColumnDefinitions, wantCols) {
		t.Errorf("columns\n got %#v\nwant %#v", tbl.ColumnDefinitions, wantCols)
	}
	if want := []interface{}{"w1", "30s"}; !reflect.DeepEqual(tbl.Rows[0].Cells, want) {
		t.Errorf("cells %#v, want %#v", tbl.Rows[0].Cells, want)
	}
	got, _ := json.Marshal(tbl.Rows[0].Object)
	if want := `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"w1","namespace":"ns","uid":"u","creationTimestamp":"2026-03-04T05:05:37Z"}}`; string(got) != want {
		t.Errorf("row object\n got %s\nwant %s", got, want)
	}

	tbl, err = ConvertCustom([]*unstructured.Unstructured{w}, nil, testNow, metav1.IncludeObject, false)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Rows[0].Object.Object != w {
		t.Errorf("includeObject=Object: want the custom resource itself")
	}

	// An empty list still has rows [] and the columns.
	tbl, err = ConvertCustom(nil, nil, testNow, metav1.IncludeMetadata, false)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Rows == nil || len(tbl.Rows) != 0 || len(tbl.ColumnDefinitions) != 2 {
		t.Errorf("empty list: got %+v", tbl)
	}
}

// TestConvertCustomBadJSONPath: as upstream, a column whose JSONPath does not
// parse ends the column list.
func TestConvertCustomBadJSONPath(t *testing.T) {
	cols := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
		{Name: "Bad", Type: "string", JSONPath: ".status[?("},
		{Name: "Later", Type: "string", JSONPath: ".spec.x"},
	}
	w := widget(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"status":{"phase":"Up"}}`)
	tbl, err := ConvertCustom([]*unstructured.Unstructured{w}, cols, testNow, metav1.IncludeNone, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.ColumnDefinitions) != 2 || tbl.ColumnDefinitions[1].Name != "Phase" {
		t.Errorf("columns: got %v", tbl.ColumnDefinitions)
	}
	if want := []interface{}{"w1", "Up"}; !reflect.DeepEqual(tbl.Rows[0].Cells, want) {
		t.Errorf("cells %#v, want %#v", tbl.Rows[0].Cells, want)
	}
}

func TestCustomCellTypes(t *testing.T) {
	tests := []struct {
		typ   string
		value interface{}
		want  interface{}
	}{
		{"integer", json.Number("12"), int64(12)},
		{"integer", json.Number("1.5"), nil},
		{"number", json.Number("1.5"), 1.5},
		{"boolean", "true", nil},
		{"string", int64(1), nil},
		{"date", "2026-03-04T05:06:06Z", "1s"},
		{"date", int64(5), nil},
		{"unknown", "x", nil},
		{"integer", nil, nil},
	}
	for _, tt := range tests {
		if got := customCell(tt.typ, tt.value, testNow); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("customCell(%q, %#v) = %#v, want %#v", tt.typ, tt.value, got, tt.want)
		}
	}
}
