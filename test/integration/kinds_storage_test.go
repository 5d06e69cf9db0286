package integration

import (
	"fmt"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// expectInvalid fails unless err is a 422 whose text is msg.
func expectInvalid(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422 Invalid", err)
	}
	if err.Error() != msg {
		t.Errorf("422 text:\n got %s\nwant %s", err.Error(), msg)
	}
}

// TestStorageKinds walks the storage.k8s.io kinds through their typed clients, checks
// upstream's defaults and one validation error of each, and a count quota on the
// namespaced CSIStorageCapacity.
func TestStorageKinds(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "storage"
	mkNamespace(t, s, ns)
	st := s.Client.StorageV1()
	pv := "pv-1"
	qty := resource.MustParse("10Gi")
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"csidrivers", kindCase[*storagev1.CSIDriver, *storagev1.CSIDriverList]{
			client: st.CSIDrivers(), obj: &storagev1.CSIDriver{ObjectMeta: meta("csi.example.com")},
			spec:   func(o *storagev1.CSIDriver) { o.Spec.PodInfoOnMount = boolp(true) },
			specOf: func(o *storagev1.CSIDriver) interface{} { return *o.Spec.PodInfoOnMount },
		}.run},
		{"csinodes", kindCase[*storagev1.CSINode, *storagev1.CSINodeList]{
			client: st.CSINodes(), obj: &storagev1.CSINode{ObjectMeta: meta("node-1"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: "n1"}}}},
			spec: func(o *storagev1.CSINode) {
				o.Spec.Drivers = append(o.Spec.Drivers, storagev1.CSINodeDriver{Name: "other.example.com", NodeID: "n1"})
			},
			specOf: func(o *storagev1.CSINode) interface{} { return len(o.Spec.Drivers) },
		}.run},
		{"volumeattachments", kindCase[*storagev1.VolumeAttachment, *storagev1.VolumeAttachmentList]{
			client: st.VolumeAttachments(), obj: &storagev1.VolumeAttachment{ObjectMeta: meta("va"), Spec: storagev1.VolumeAttachmentSpec{
				Attacher: "csi.example.com", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}},
			status:   func(o *storagev1.VolumeAttachment) { o.Status.Attached = true },
			statusOf: func(o *storagev1.VolumeAttachment) interface{} { return o.Status.Attached },
		}.run},
		{"csistoragecapacities", kindCase[*storagev1.CSIStorageCapacity, *storagev1.CSIStorageCapacityList]{
			client: st.CSIStorageCapacities(ns), obj: &storagev1.CSIStorageCapacity{ObjectMeta: meta("cap"), StorageClassName: "fast", Capacity: &qty},
			spec:   func(o *storagev1.CSIStorageCapacity) { q := resource.MustParse("20Gi"); o.Capacity = &q },
			specOf: func(o *storagev1.CSIStorageCapacity) interface{} { return o.Capacity.String() },
		}.run},
		{"volumeattributesclasses", kindCase[*storagev1.VolumeAttributesClass, *storagev1.VolumeAttributesClassList]{
			client: st.VolumeAttributesClasses(), obj: &storagev1.VolumeAttributesClass{ObjectMeta: meta("gold"), DriverName: "csi.example.com", Parameters: map[string]string{"iops": "100"}},
		}.run},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}

	ctx := ctxT(t)
	// Upstream's CSIDriver defaults.
	d, err := st.CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: meta("defaults.example.com")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(fmt.Sprintln(*d.Spec.AttachRequired, *d.Spec.PodInfoOnMount, *d.Spec.StorageCapacity, *d.Spec.FSGroupPolicy, d.Spec.VolumeLifecycleModes, *d.Spec.RequiresRepublish, *d.Spec.SELinuxMount)); got != "true false false ReadWriteOnceWithFSType [Persistent] false false" {
		t.Errorf("CSIDriver defaults: %s", got)
	}

	// A CSIDriver starts at generation 0, as upstream's, and counts spec changes.
	if d.Generation != 0 {
		t.Errorf("new CSIDriver generation = %d, want 0", d.Generation)
	}
	for _, change := range []func(){
		func() { d.Spec.StorageCapacity = boolp(true) },
		func() { d.Labels = map[string]string{"a": "b"} },
	} {
		change()
		if d, err = st.CSIDrivers().Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if d.Generation != 1 {
			t.Errorf("CSIDriver generation = %d after a spec change, want 1", d.Generation)
		}
	}

	// One validation error of each kind, with upstream's text.
	bogus := storagev1.FSGroupPolicy("Bogus")
	_, err = st.CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: meta("bad.example.com"), Spec: storagev1.CSIDriverSpec{FSGroupPolicy: &bogus}}, metav1.CreateOptions{})
	expectInvalid(t, err, `CSIDriver.storage.k8s.io "bad.example.com" is invalid: spec.fsGroupPolicy: Unsupported value: "Bogus": supported values: "File", "None", "ReadWriteOnceWithFSType"`)
	_, err = st.CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: meta("node-2"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com"}}}}, metav1.CreateOptions{})
	expectInvalid(t, err, `CSINode.storage.k8s.io "node-2" is invalid: spec.drivers[0].nodeID: Required value`)
	_, err = st.VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: meta("va2"), Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1"}}, metav1.CreateOptions{})
	expectInvalid(t, err, `VolumeAttachment.storage.k8s.io "va2" is invalid: spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName`)
	neg := resource.MustParse("-1")
	_, err = st.CSIStorageCapacities(ns).Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: meta("neg"), StorageClassName: "fast", Capacity: &neg}, metav1.CreateOptions{})
	expectInvalid(t, err, `CSIStorageCapacity.storage.k8s.io "neg" is invalid: capacity: Invalid value: "-1": must be greater than or equal to 0`)
	_, err = st.VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: meta("empty"), DriverName: "csi.example.com"}, metav1.CreateOptions{})
	expectInvalid(t, err, `VolumeAttributesClass.storage.k8s.io "empty" is invalid: parameters: Required value: must contain at least one key/value pair`)

	// Immutable fields.
	va, err := st.VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: meta("va3"), Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "csi.example.com", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	va.Spec.NodeName = "node-2"
	if _, err = st.VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(), ": field is immutable") {
		t.Errorf("VolumeAttachment spec update: err = %v, want field is immutable", err)
	}
	vac, err := st.VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: meta("silver"), DriverName: "csi.example.com", Parameters: map[string]string{"iops": "10"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vac.Parameters["iops"] = "20"
	_, err = st.VolumeAttributesClasses().Update(ctx, vac, metav1.UpdateOptions{})
	expectInvalid(t, err, `VolumeAttributesClass.storage.k8s.io "silver" is invalid: parameters: Forbidden: updates to parameters are forbidden.`)

	// count/csistoragecapacities.storage.k8s.io quota refuses the second object.
	const qns = "storage-quota"
	mkNamespace(t, s, qns)
	mkQuota(t, s, qns, "q", map[string]string{"count/csistoragecapacities.storage.k8s.io": "1"})
	if _, err := st.CSIStorageCapacities(qns).Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: meta("one"), StorageClassName: "fast"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = st.CSIStorageCapacities(qns).Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: meta("two"), StorageClassName: "fast"}, metav1.CreateOptions{})
	expectForbidden(t, err, `csistoragecapacities.storage.k8s.io "two" is forbidden: exceeded quota: q, requested: count/csistoragecapacities.storage.k8s.io=1, used: count/csistoragecapacities.storage.k8s.io=1, limited: count/csistoragecapacities.storage.k8s.io=1`)
	s.CheckInvariant()
}
