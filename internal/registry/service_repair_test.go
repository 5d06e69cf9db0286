package registry_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// TestRepairServiceAllocations: the repair puts back a Service's IPAddress and allocation
// keys deleted behind its back, deletes allocation keys and allocator IPAddresses no
// Service holds (the IPAddresses only past the grace period), and leaves alone what a
// Service holds and IPAddresses the allocator did not make.
func TestRepairServiceAllocations(t *testing.T) {
	etcd, err := storage.StartEmbedded(context.Background(), t.TempDir(), nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC))
	st := &countingTxns{Store: etcd.Store()}
	store := registry.NewStore(registry.Config{Storage: st, Catalogue: registry.NewCatalogue(), Clock: clk})
	ctx := t.Context()
	cat := store.Catalogue()
	svcRes := cat.Get(corev1.SchemeGroupVersion.WithResource("services"))
	ipRes := cat.Get(networkingv1.SchemeGroupVersion.WithResource("ipaddresses"))
	r, err := store.Create(ctx, svcRes, "default", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}, registry.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := r.Object.(*corev1.Service)
	ip, port := a.Spec.ClusterIP, a.Spec.Ports[0].NodePort
	const prefix = "/registry/quotad.io/allocations/"
	ipKey, portKey := prefix+"clusterips/"+ip, prefix+"nodeports/"+strconv.Itoa(int(port))
	exists := func(key string) bool {
		_, err := st.Get(ctx, key)
		return err == nil
	}
	for _, k := range []string{ipKey, portKey, ipRes.Key("", ip)} {
		if !exists(k) {
			t.Fatalf("%s missing after the create", k)
		}
	}
	// Deleted behind the Service's back; leaked keys and IPAddresses beside it.
	ghostIP, ghostPort := prefix+"clusterips/10.96.9.9", prefix+"nodeports/31999"
	if _, err := st.Txn(ctx, storage.Txn{Ops: []storage.Op{
		{Type: storage.OpDelete, Key: ipRes.Key("", ip)}, {Type: storage.OpDelete, Key: portKey},
		{Type: storage.OpPut, Key: ghostIP, Value: []byte("default/ghost")}, {Type: storage.OpPut, Key: ghostPort, Value: []byte("default/a")},
	}}); err != nil {
		t.Fatal(err)
	}
	mkIP := func(name string, labels map[string]string, parent string) {
		t.Helper()
		if _, err := store.Create(ctx, ipRes, "", &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: parent}}}, registry.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	managed := map[string]string{networkingv1.LabelManagedBy: "ipallocator.k8s.io"}
	mkIP("10.96.9.10", managed, "ghost")
	mkIP("10.96.9.11", nil, "ghost")

	if err := store.RepairServiceAllocations(ctx); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{
		ipRes.Key("", ip): true, portKey: true, ipKey: true,
		ghostIP: false, ghostPort: false, // held by no Service (a does not hold 31999)
		ipRes.Key("", "10.96.9.10"): true, // the allocator's, younger than the grace period
		ipRes.Key("", "10.96.9.11"): true, // not the allocator's
	} {
		if exists(k) != want {
			t.Errorf("after the repair: %s exists %v, want %v", k, !want, want)
		}
	}
	obj, err := store.Get(ctx, ipRes, "", ip)
	if err != nil || obj.(*networkingv1.IPAddress).Spec.ParentRef.Name != "a" {
		t.Fatalf("repaired IPAddress %s: %+v, %v", ip, obj, err)
	}
	clk.Step(registry.RepairGrace)
	if err := store.RepairServiceAllocations(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(ipRes.Key("", "10.96.9.10")) || !exists(ipRes.Key("", "10.96.9.11")) || !exists(ipRes.Key("", ip)) {
		t.Errorf("past the grace period: the allocator's leaked IPAddress must go, the others stay")
	}
	// With every record whole, a pass writes nothing, nor tries to.
	st.txns.Store(0)
	if err := store.RepairServiceAllocations(ctx); err != nil {
		t.Fatal(err)
	}
	if n := st.txns.Load(); n != 0 {
		t.Errorf("a pass over whole records sent %d transactions, want none", n)
	}
}

// countingTxns counts the transactions sent to a store.
type countingTxns struct {
	storage.Store
	txns atomic.Int64
}

func (c *countingTxns) Txn(ctx context.Context, txn storage.Txn) (storage.TxnResult, error) {
	c.txns.Add(1)
	return c.Store.Txn(ctx, txn)
}
