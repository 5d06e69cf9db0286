package validation

import (
	"fmt"
	"testing"

	ar "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/randfill"
)

// storageAdmissionFlowControl are the storage, certificates, admissionregistration, flowcontrol and
// apiregistration kinds.
func storageAdmissionFlowControl() []runtime.Object {
	return []runtime.Object{
		&storagev1.CSIDriver{}, &storagev1.CSINode{}, &storagev1.VolumeAttachment{}, &storagev1.CSIStorageCapacity{}, &storagev1.VolumeAttributesClass{},
		&certificatesv1.CertificateSigningRequest{},
		&ar.ValidatingWebhookConfiguration{}, &ar.MutatingWebhookConfiguration{}, &ar.ValidatingAdmissionPolicy{}, &ar.ValidatingAdmissionPolicyBinding{},
		&ar.MutatingAdmissionPolicy{}, &ar.MutatingAdmissionPolicyBinding{},
		&flowcontrolv1.FlowSchema{}, &flowcontrolv1.PriorityLevelConfiguration{},
		&apiregistrationv1.APIService{},
	}
}

func TestStorageAdmissionFlowControlRandomObjectsNeverPanic(t *testing.T) {
	for _, k := range storageAdmissionFlowControl() {
		for seed := int64(0); seed < 60; seed++ {
			obj := k.DeepCopyObject()
			f := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
				func(q *resource.Quantity, c randfill.Continue) {
					*q = *resource.NewMilliQuantity(c.Int63n(1<<40)-(1<<20), resource.DecimalSI)
				},
			)
			f.Fill(obj)
			exercise(t, obj, fmt.Sprintf("seed %d", seed))
			for _, sub := range []string{"status", "approval"} {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("seed %d: %T /%s panicked: %v", seed, obj, sub, r)
						}
					}()
					_, _ = ValidateSubresourceUpdate(sub, obj, obj.DeepCopyObject())
				}()
			}
		}
	}
}

// TestStorageAdmissionFlowControlEmptyObjectsAreInvalid: every kind refuses an empty object (no name).
func TestStorageAdmissionFlowControlEmptyObjectsAreInvalid(t *testing.T) {
	for _, k := range storageAdmissionFlowControl() {
		if errs := Validate(k.DeepCopyObject()); len(errs) == 0 {
			t.Errorf("%T: an empty object validates", k)
		}
	}
}
