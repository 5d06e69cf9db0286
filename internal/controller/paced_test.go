package controller_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

// A paced client writes its burst at once; the next write waits for a token and, when its
// context ends first, fails with the context's error and writes nothing. Every verb draws
// from the one bucket; reads draw nothing.
func TestPacedBurstThenWaits(t *testing.T) {
	fc := fake.New(nil)
	res := fc.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("configmaps"))
	// One token a day: nothing refills during the test.
	c := controller.Paced(fc, 1.0/86400, 3)
	ctx := context.Background()
	for i := range 2 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i)}}
		if _, err := c.Create(ctx, res, "ns", cm, registry.WriteOptions{}); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if _, err := c.Update(ctx, res, "ns", "cm-0", "", func(o runtime.Object) (runtime.Object, error) {
		cm := o.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"k": "v"}
		return cm, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.Get(ctx, res, "ns", "cm-0"); err != nil {
			t.Fatalf("get after the burst: %v", err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Delete(cctx, res, "ns", "cm-1", metav1.DeleteOptions{}, registry.WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("delete past the burst: %v, want the context's error", err)
	}
	if _, err := c.Create(cctx, res, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-2"}}, registry.WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("create past the burst: %v, want the context's error", err)
	}
	if got := len(fc.Actions()); got != 3 {
		t.Fatalf("writes reaching the store: %d (%v), want the burst of 3", got, fc.Actions())
	}
	if _, err := fc.Get(ctx, res, "ns", "cm-1"); err != nil {
		t.Fatalf("cm-1 was deleted past the burst: %v", err)
	}
}

// qps <= 0 leaves the client as it is.
func TestPacedZeroIsUnpaced(t *testing.T) {
	fc := fake.New(nil)
	if c := controller.Paced(fc, 0, 30); c != controller.Client(fc) {
		t.Fatalf("Paced(c, 0, 30) = %T, want c itself", c)
	}
}
