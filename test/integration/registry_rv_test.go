package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestRegistryUnparsableResourceVersions pins the answers to resourceVersions that are not
// numbers: as the parameter of a get, list or watch, the etcd3 store's 400; in a write's
// body, a 400 worded the same way with the body's field (kube-apiserver answers a 500 there,
// kubernetes#139485). A number is compared as a number. Refused writes change nothing.
func TestRegistryUnparsableResourceVersions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "rv")
	mkQuota(t, s, "rv", "q", map[string]string{"configmaps": "5"})
	cms := s.Client.CoreV1().ConfigMaps("rv")
	quotas := s.Client.CoreV1().ResourceQuotas("rv")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withRV := func(rv string) *corev1.ConfigMap {
		c := cm.DeepCopy()
		c.ResourceVersion = rv
		c.Data = map[string]string{"k": "changed"}
		return c
	}
	const (
		putABC  = `invalid resource version: metadata.resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`
		paramOf = `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`
	)
	tests := []struct {
		name   string
		do     func(context.Context) error
		code   int32
		reason metav1.StatusReason
		want   string
		// changes: the write is expected to land (cm is then re-read).
		changes bool
	}{
		{name: "update with resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: putABC, do: func(ctx context.Context) error {
			_, err := cms.Update(ctx, withRV("abc"), metav1.UpdateOptions{})
			return err
		}},
		{name: "update with resourceVersion -1", code: 400, reason: metav1.StatusReasonBadRequest, want: `invalid resource version: metadata.resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`, do: func(ctx context.Context) error {
			_, err := cms.Update(ctx, withRV("-1"), metav1.UpdateOptions{})
			return err
		}},
		{name: "update with a resourceVersion past 64 bits", code: 400, reason: metav1.StatusReasonBadRequest, want: `invalid resource version: metadata.resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range`, do: func(ctx context.Context) error {
			_, err := cms.Update(ctx, withRV("18446744073709551616"), metav1.UpdateOptions{})
			return err
		}},
		{name: "merge patch setting resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: putABC, do: func(ctx context.Context) error {
			_, err := cms.Patch(ctx, "c", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"abc"},"data":{"k":"changed"}}`), metav1.PatchOptions{})
			return err
		}},
		{name: "quota /status update with resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: putABC, do: func(ctx context.Context) error {
			q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return err
			}
			q.ResourceVersion = "abc"
			_, err = quotas.UpdateStatus(ctx, q, metav1.UpdateOptions{})
			return err
		}},
		{name: "update with a stale resourceVersion", code: 409, reason: metav1.StatusReasonConflict,
			want: `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`,
			do: func(ctx context.Context) error {
				_, err := cms.Update(ctx, withRV("1"), metav1.UpdateOptions{})
				return err
			}},
		{name: "get with resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: paramOf, do: func(ctx context.Context) error {
			_, err := cms.Get(ctx, "c", metav1.GetOptions{ResourceVersion: "abc"})
			return err
		}},
		{name: "get of /status with resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: paramOf, do: func(ctx context.Context) error {
			return s.Client.CoreV1().RESTClient().Get().Namespace("rv").Resource("resourcequotas").Name("q").SubResource("status").Param("resourceVersion", "abc").Do(ctx).Error()
		}},
		{name: "list with resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: paramOf, do: func(ctx context.Context) error {
			_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "abc"})
			return err
		}},
		{name: "list with limit and resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: paramOf, do: func(ctx context.Context) error {
			_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "abc", Limit: 1})
			return err
		}},
		{name: "list with resourceVersion -1", code: 400, reason: metav1.StatusReasonBadRequest,
			want: `invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`,
			do: func(ctx context.Context) error {
				_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "-1"})
				return err
			}},
		{name: "watch with resourceVersion abc", code: 400, reason: metav1.StatusReasonBadRequest, want: paramOf, do: func(ctx context.Context) error {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "abc"})
			if err == nil {
				w.Stop()
			}
			return err
		}},
		{name: "get with resourceVersion 0", do: func(ctx context.Context) error {
			_, err := cms.Get(ctx, "c", metav1.GetOptions{ResourceVersion: "0"})
			return err
		}},
		{name: "update with the stored resourceVersion written with a leading zero", changes: true, do: func(ctx context.Context) error {
			_, err := cms.Update(ctx, withRV("0"+cm.ResourceVersion), metav1.UpdateOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := cms.Get(ctx, "c", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = tt.do(ctx)
			after, gerr := cms.Get(ctx, "c", metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			if tt.changes != (after.ResourceVersion != before.ResourceVersion) {
				t.Errorf("resourceVersion %s → %s, want a write: %v", before.ResourceVersion, after.ResourceVersion, tt.changes)
			}
			cm = after
			if tt.code == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			var se *apierrors.StatusError
			if !asStatus(err, &se) {
				t.Fatalf("err = %v (%T), want a %d Status", err, err, tt.code)
			}
			st := se.Status()
			if st.Code != tt.code || st.Reason != tt.reason || st.Message != tt.want {
				t.Errorf("got %d %q %q\nwant %d %q %q", st.Code, st.Reason, st.Message, tt.code, tt.reason, tt.want)
			}
		})
	}
}
