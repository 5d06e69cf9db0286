package registry

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/registry/codec"
)

// TestAppendStored: a stored object with its resourceVersion put in is byte for byte the
// encoding of the object decoded from it, whatever metadata fields it has; a value in
// another shape is refused (and decoded instead by ListEachStored).
func TestAppendStored(t *testing.T) {
	c := NewCatalogue()
	pods := c.Get(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	deploys := c.Get(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	now := metav1.NewTime(time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC))
	grace := int64(30)
	full := metav1.ObjectMeta{
		Name: "p\"q", GenerateName: "p-\\", Namespace: "ns", SelfLink: "/x", UID: types.UID("u-1"),
		Generation: 4, CreationTimestamp: now, DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace,
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"resourceVersion": "7"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "o", UID: "u-0"}},
		Finalizers:      []string{"f"},
	}
	cases := []struct {
		name string
		res  *Resource
		obj  runtime.Object
	}{
		{"full metadata", pods, &corev1.Pod{ObjectMeta: full, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}}}},
		{"name only", pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}},
		{"uid last", pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}}},
		{"labels first", pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"k": "v"}}}},
		{"empty metadata", pods, &corev1.Pod{}},
		{"apps", deploys, &appsv1.Deployment{ObjectMeta: full}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stored, err := codec.EncodeForStorage(tc.obj, tc.res.GVK())
			if err != nil {
				t.Fatal(err)
			}
			got, ok := appendStored([]byte("prev,"), stored, storedHead(tc.res), 12345)
			if !ok {
				t.Fatalf("refused %s", stored)
			}
			obj, err := decodeStored(tc.res, stored, 12345)
			if err != nil {
				t.Fatal(err)
			}
			want, err := codec.Encode(obj, tc.res.GVK())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prev,"+string(want) {
				t.Errorf("got  %s\nwant prev,%s", got, want)
			}
		})
	}
	for name, value := range map[string]string{
		"another kind":           `{"kind":"Service","apiVersion":"v1","metadata":{"name":"s"}}`,
		"another version":        `{"kind":"Pod","apiVersion":"v2","metadata":{"name":"s"}}`,
		"resourceVersion stored": `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"s","resourceVersion":"3"}}`,
		"escaped key":            `{"kind":"Pod","apiVersion":"v1","metadata":{"na\u006de":"s"}}`,
		"spaces":                 `{"kind":"Pod","apiVersion":"v1","metadata":{ "name":"s"}}`,
		"truncated":              `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"s`,
		"unterminated":           `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"s"`,
		"no metadata":            `{"kind":"Pod","apiVersion":"v1","spec":{}}`,
	} {
		if got, ok := appendStored([]byte("prev"), []byte(value), storedHead(pods), 1); ok || string(got) != "prev" {
			t.Errorf("%s: accepted (%q), want refused with dst unchanged", name, got)
		}
	}
}

// FuzzAppendStored: any value is either refused or given a resourceVersion, never panics.
func FuzzAppendStored(f *testing.F) {
	head := []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{`)
	f.Add([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a\"b","uid":"x"},"spec":{}}`))
	f.Add([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{}}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		got, ok := appendStored(nil, value, head, 99)
		if ok && len(got) <= len(value) {
			t.Fatalf("accepted without adding the resourceVersion: %q", got)
		}
	})
}
