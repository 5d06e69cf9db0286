package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/quota/quotatest"
)

// protobufPod encodes a pod whose container requests cpu as text, without parsing text
// (ParseQuantity would stall on some of them): an int64 mantissa and exponent formatted
// as DecimalExponent encode as exactly that text.
func protobufPod(t testing.TB, mantissa int64, exp int32) []byte {
	q := resource.NewScaledQuantity(mantissa, resource.Scale(exp))
	q.Format = resource.DecimalExponent
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": *q},
		}}}},
	}
	var buf bytes.Buffer
	if err := protobufSerializer.Encode(pod, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeRefusesQuantityTexts: a quantity text ParseQuantity would take minutes on
// ("1e-1000000000", a billion-digit division) or that is beyond the bound is a 422 naming
// its field, from every decoder, before anything parses it; the same text elsewhere than
// in a quantity field is only a string.
func TestDecodeRefusesQuantityTexts(t *testing.T) {
	pods := builtinKind(corev1.SchemeGroupVersion.WithResource("pods"), "Pod", corev1.Pod{})
	quotas := builtinKind(corev1.SchemeGroupVersion.WithResource("resourcequotas"), "ResourceQuota", corev1.ResourceQuota{})
	configMaps := builtinKind(corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", corev1.ConfigMap{})
	podJSON := func(cpu string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":` + cpu + `}}}]}}`
	}
	tests := []struct {
		name, contentType string
		res               Kind
		body              []byte
		want              string
	}{
		{"quota beyond the bound", "application/json", quotas,
			[]byte(`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"1e1000000000","cpu":"1"}}}`),
			`ResourceQuota "q" is invalid: spec.hard[pods]: Invalid value: "1e1000000000": must be less than or equal to 9223372036854775807`},
		{"stalling negative exponent", "application/json", pods, []byte(podJSON(`"1e-1000000000"`)),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "1e-1000000000": must be 0 or at least 1e-64 in absolute value`},
		{"as a JSON number", "application/json", pods, []byte(podJSON(`1e-1000000000`)),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "1e-1000000000": must be 0 or at least 1e-64 in absolute value`},
		{"with spaces, which Quantity trims", "application/json", pods, []byte(podJSON(`" 1234567890123456789e1000000000 "`)),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "1234567890123456789e1000000000": must be less than or equal to 9223372036854775807`},
		{"a million digits", "application/json", pods, []byte(podJSON(`"1.` + strings.Repeat("0", 1<<20) + `"`)),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Too long: may not be more than 64 bytes`},
		{"a zero with a huge exponent", "application/json", pods, []byte(podJSON(`"0e-2000000000"`)),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "0e-2000000000": must have an exponent between -128 and 128`},
		{"YAML", "application/yaml", quotas,
			[]byte("apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n    pods: \"1e-1000000000\"\n    services: 1e1000000000\n"),
			`ResourceQuota "q" is invalid: [spec.hard[pods]: Invalid value: "1e-1000000000": must be 0 or at least 1e-64 in absolute value, spec.hard[services]: Invalid value: "1e1000000000": must be less than or equal to 9223372036854775807]`},
		{"protobuf", ProtobufContentType, pods, protobufPod(t, 1, -1000000000),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "100e-1000000002": must be 0 or at least 1e-64 in absolute value`},
		{"protobuf beyond the bound", ProtobufContentType, pods, protobufPod(t, 1, 999999999),
			`Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "1e999999999": must be less than or equal to 9223372036854775807`},
		{"protobuf in bound", ProtobufContentType, pods, protobufPod(t, 250, -3), ""},
		{"not a quantity field", "application/json", configMaps,
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"1e-1000"},"data":{"1e-1000000000":"1e-1000000000"}}`), ""},
		{"in bound", "application/json", pods, []byte(podJSON(`"9223372036854775807"`)), ""},
	}
	for _, tc := range tests {
		quotatest.Within(t, quotatest.StallBound, tc.name, func() error {
			var err error
			if IsProtobuf(tc.contentType) {
				var j []byte
				if j, err = ProtobufToJSON(tc.res, tc.body); err == nil {
					_, err = Decode(tc.res, j, FieldValidationStrict)
				}
			} else {
				_, err = DecodeBody(tc.res, tc.body, tc.contentType, FieldValidationStrict)
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				return fmt.Errorf("got  %s\nwant %s", got, tc.want)
			}
			return nil
		})
	}
}

// FuzzQuantityScan: the scan that decides whether a JSON body is walked never misses a
// text quantity.CheckText refuses, as a string (which Quantity trims) or as a number.
func FuzzQuantityScan(f *testing.F) {
	for _, s := range []string{"1e1000000000", " 1e-1000000000\t", "12E", "99999999999999999T", "1", "0e-200", "1.5", "8589934592Gi", "9007199254740992Ki", "9223372036854775.808k", "9223372036854775808000m"} {
		f.Add(s)
	}
	p := field.NewPath("q")
	f.Fuzz(func(t *testing.T, s string) {
		if quantity.CheckText(strings.TrimSpace(s), p) == nil {
			return
		}
		for _, body := range []string{`{"a":"` + s + `"}`, `{"a":[` + s + `]}`, `{"a": ` + s + `}`} {
			if !json.Valid([]byte(body)) {
				continue
			}
			if !mayHoldRefusedQuantity([]byte(body)) {
				t.Fatalf("scan misses %q in %s", s, body)
			}
		}
	})
}

// TestDecodeRefusesQuantitiesBeyondBound: a quantity whose value is beyond 2^63-1 in
// magnitude, in any textual form (binary suffixes ParseQuantity would cap at 2^63-1
// included), is a 422 naming its field from every decoder and in every kind that holds
// quantities; values at the bound decode.
func TestDecodeRefusesQuantitiesBeyondBound(t *testing.T) {
	kinds := []struct {
		resource, kind, field string
		obj                   interface{}
		body                  func(q string) string
	}{
		{"pods", "Pod", "spec.containers[0].resources.requests[memory]", corev1.Pod{}, func(q string) string {
			return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"memory":` + q + `}}}]}}`
		}},
		{"pods", "Pod", "spec.overhead[cpu]", corev1.Pod{}, func(q string) string {
			return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"overhead":{"cpu":` + q + `},"containers":[{"name":"c","image":"i"}]}}`
		}},
		{"resourcequotas", "ResourceQuota", "spec.hard[cpu]", corev1.ResourceQuota{}, func(q string) string {
			return `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"x"},"spec":{"hard":{"cpu":` + q + `}}}`
		}},
		{"limitranges", "LimitRange", "spec.limits[0].max[memory]", corev1.LimitRange{}, func(q string) string {
			return `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"x"},"spec":{"limits":[{"type":"Container","max":{"memory":` + q + `}}]}}`
		}},
		{"persistentvolumeclaims", "PersistentVolumeClaim", "spec.resources.requests[storage]", corev1.PersistentVolumeClaim{}, func(q string) string {
			return `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"x"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":` + q + `}}}}`
		}},
	}
	const (
		large = "must be less than or equal to 9223372036854775807"
		small = "must be greater than or equal to -9223372036854775807"
	)
	forms := []struct{ text, want string }{
		{"8Ei", large},
		{"9Ei", large},
		{"8.000001Ei", large},
		{"8192Pi", large},
		{"8589934592Gi", large},
		{"9223372036854775808", large},
		{"9.3e18", large},
		{"9300P", large},
		{"9.3E", large},
		{"-9Ei", small},
		{"9223372036854775807001m", large},
		{"8E", ""},
		{"7Ei", ""},
		{"9223372036854775807", ""},
		{"9223372036854775807000m", ""},
	}
	for _, k := range kinds {
		res := builtinKind(corev1.SchemeGroupVersion.WithResource(k.resource), k.kind, k.obj)
		for _, f := range forms {
			want := ""
			if f.want != "" {
				want = k.kind + ` "x" is invalid: ` + k.field + `: Invalid value: "` + f.text + `": ` + f.want
			}
			bodies := map[string][]byte{
				"JSON string": []byte(k.body(`"` + f.text + `"`)),
				"YAML":        []byte(k.body(`"` + f.text + `"`)),
			}
			if strings.Trim(f.text, "-0123456789.e") == "" {
				bodies["JSON number"] = []byte(k.body(f.text))
			}
			for name, body := range bodies {
				ct := "application/json"
				if name == "YAML" {
					ct = "application/yaml"
					y, err := yaml.JSONToYAML(body)
					if err != nil {
						t.Fatal(err)
					}
					body = y
				}
				_, err := DecodeBody(res, body, ct, FieldValidationStrict)
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != want {
					t.Errorf("%s %s %s:\ngot  %s\nwant %s", k.kind, f.text, name, got, want)
				}
			}
		}
	}
	// Protobuf: a pod encoded with an in-bound text of the same length, then that text
	// replaced in the encoded bytes.
	pods := builtinKind(corev1.SchemeGroupVersion.WithResource("pods"), "Pod", corev1.Pod{})
	for _, tc := range []struct{ in, out, want string }{
		{"7Ei", "8Ei", large},
		{"7Ei", "9Ei", large},
		{"1Ei", "7Ei", ""},
		{"-7Ei", "-9Ei", small},
		{"9223372036854775807", "9223372036854775808", large},
	} {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "x"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"memory": resource.MustParse(tc.in)},
			}}}},
		}
		var buf bytes.Buffer
		if err := protobufSerializer.Encode(pod, &buf); err != nil {
			t.Fatal(err)
		}
		if bytes.Count(buf.Bytes(), []byte(tc.in)) != 1 {
			t.Fatalf("%s is not once in the encoded pod", tc.in)
		}
		body := bytes.Replace(buf.Bytes(), []byte(tc.in), []byte(tc.out), 1)
		want := ""
		if tc.want != "" {
			want = `Pod "x" is invalid: spec.containers[0].resources.requests[memory]: Invalid value: "` + tc.out + `": ` + tc.want
		}
		got := ""
		if _, err := ProtobufToJSON(pods, body); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("protobuf %s:\ngot  %s\nwant %s", tc.out, got, want)
		}
	}
}

// Only the kinds whose types may hold a quantity have their bodies scanned for quantity
// texts; the others (a node's Lease renewal, a ConfigMap) skip the scan.
func TestHoldsQuantities(t *testing.T) {
	for _, tc := range []struct {
		obj  any
		want bool
	}{
		{&corev1.Pod{}, true}, {&corev1.ResourceQuota{}, true}, {&corev1.LimitRange{}, true},
		{&corev1.PersistentVolumeClaim{}, true}, {&appsv1.Deployment{}, true},
		{&coordinationv1.Lease{}, false}, {&corev1.ConfigMap{}, false}, {&corev1.Secret{}, false},
	} {
		if got := holdsQuantities(reflect.TypeOf(tc.obj)); got != tc.want {
			t.Errorf("holdsQuantities(%T) = %v, want %v", tc.obj, got, tc.want)
		}
	}
}
