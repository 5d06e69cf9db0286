package workloads

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/controller"
)

// TestRetryErrExpected: quota refusals and writes that raced a delete or another writer
// are retried without a warning; other errors are warned about.
func TestRetryErrExpected(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		err      error
		expected bool
	}{
		{apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("exceeded quota: q")), true},
		{apierrors.NewNotFound(gr, "marker-deployment"), true},
		{apierrors.NewConflict(gr, "web", errors.New("the object has been modified")), true},
		{apierrors.NewInternalError(errors.New("etcd down")), false},
		{errors.New("plain"), false},
	} {
		if got := controller.IsExpected(retryErr(tc.err)); got != tc.expected {
			t.Errorf("%v: expected %v, want %v", tc.err, got, tc.expected)
		}
	}
}
