package validation

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func validRevision() *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7b5f8c6d9", Namespace: "ns", ResourceVersion: "1"},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)},
		Revision:   1,
	}
}

func TestControllerRevision(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.ControllerRevision)
		want   []string
	}{
		{"valid", func(*appsv1.ControllerRevision) {}, []string{}},
		{"no data, negative revision, bad name", func(cr *appsv1.ControllerRevision) {
			cr.Name = "Web_1"
			cr.Data = runtime.RawExtension{}
			cr.Revision = -1
		}, []string{
			`metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`data: Required value: data is mandatory`,
			`revision: Invalid value: -1: must be greater than or equal to 0`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := validRevision()
			tt.mutate(cr)
			if got := errStrings(Validate(cr)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestControllerRevisionUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.ControllerRevision)
		want   int
	}{
		{"labels and revision may change", func(cr *appsv1.ControllerRevision) {
			cr.Labels = map[string]string{"a": "b"}
			cr.Revision = 3
		}, 0},
		{"same data, other spacing", func(cr *appsv1.ControllerRevision) {
			cr.Data.Raw = []byte(`{ "spec": {"template": {"$patch": "replace"}} }`)
		}, 0},
		{"data is immutable", func(cr *appsv1.ControllerRevision) {
			cr.Data.Raw = []byte(`{"spec":{}}`)
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := validRevision()
			tt.mutate(n)
			errs := ValidateUpdate(n, validRevision())
			if len(errs) != tt.want {
				t.Fatalf("errors = %q, want %d", errStrings(errs), tt.want)
			}
			if tt.want == 1 && (errs[0].Field != "data" || errs[0].Detail != "field is immutable") {
				t.Errorf("error = %q", errs[0].Error())
			}
		})
	}
}
