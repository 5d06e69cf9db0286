package evaluator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/quantity"
)

// countPVCs is the object-count name of persistent volume claims.
const countPVCs = corev1.ResourceName("count/persistentvolumeclaims")

// betaStorageClassAnnotation names a claim's storage class before spec.storageClassName.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// PersistentVolumeClaims is the evaluator for core persistent volume claims. Claims
// match only the VolumeAttributesClass scope.
type PersistentVolumeClaims struct{}

// Handles accepts the claim itself and its status (allocatedResources changes usage).
func (PersistentVolumeClaims) Handles(subresource string) bool {
	return subresource == "" || subresource == "status"
}

// MatchingResources returns the claim quota names among input: count/persistentvolumeclaims,
// persistentvolumeclaims, requests.storage and their
// <class>.storageclass.storage.k8s.io/ forms.
func (PersistentVolumeClaims) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range input {
		switch {
		case name == countPVCs, name == corev1.ResourcePersistentVolumeClaims, name == corev1.ResourceRequestsStorage,
			strings.HasSuffix(string(name), quota.StorageClassSuffix+string(corev1.ResourcePersistentVolumeClaims)),
			strings.HasSuffix(string(name), quota.StorageClassSuffix+string(corev1.ResourceRequestsStorage)):
			out = append(out, name)
		}
	}
	return quota.Intersection(out, out)
}

// Usage returns persistentvolumeclaims = count/persistentvolumeclaims = 1 and, when the
// claim requests storage, requests.storage = max(request, status.allocatedResources)
// rounded up to a whole byte; with a storage class, the same under
// <class>.storageclass.storage.k8s.io/.
func (PersistentVolumeClaims) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pvc, err := toPVC(obj)
	if err != nil {
		return nil, err
	}
	one := resource.NewQuantity(1, resource.DecimalSI)
	result := corev1.ResourceList{
		corev1.ResourcePersistentVolumeClaims: *one,
		countPVCs:                             one.DeepCopy(),
	}
	class := storageClass(pvc)
	if class != "" {
		result[corev1.ResourceName(class+quota.StorageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one.DeepCopy()
	}
	if storage := storageUsage(pvc); storage != nil {
		result[corev1.ResourceRequestsStorage] = storage.DeepCopy()
		if class != "" {
			result[corev1.ResourceName(class+quota.StorageClassSuffix+string(corev1.ResourceRequestsStorage))] = storage.DeepCopy()
		}
	}
	return result, nil
}

// MatchesScope evaluates one scope selector against a claim: only VolumeAttributesClass
// can match, over the class names in spec.volumeAttributesClassName,
// status.currentVolumeAttributesClassName and status.modifyVolumeStatus.targetVolumeAttributesClassName.
func (PersistentVolumeClaims) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pvc, err := toPVC(obj)
	if err != nil {
		return false, err
	}
	if sel.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	names := volumeAttributesClassNames(pvc)
	if sel.Operator == corev1.ScopeSelectorOpExists {
		return names.Len() != 0, nil
	}
	selector, err := quota.ScopeSelectorAsLabelSelector(sel)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	if names.Len() == 0 {
		return selector.Matches(labels.Set{}), nil
	}
	for _, n := range sets.List(names) {
		if selector.Matches(labels.Set{string(corev1.ResourceQuotaScopeVolumeAttributesClass): n}) {
			return true, nil
		}
	}
	return false, nil
}

// toPVC asserts obj is a *corev1.PersistentVolumeClaim.
func toPVC(obj runtime.Object) (*corev1.PersistentVolumeClaim, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("expect *v1.PersistentVolumeClaim, got %T", obj)
	}
	return pvc, nil
}

// storageClass returns the beta annotation when present (even empty), else
// spec.storageClassName, else "".
func storageClass(pvc *corev1.PersistentVolumeClaim) string {
	if class, ok := pvc.Annotations[betaStorageClassAnnotation]; ok {
		return class
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// storageUsage returns the claim's storage charge, or nil when it requests none.
func storageUsage(pvc *corev1.PersistentVolumeClaim) *resource.Quantity {
	roundUp := func(q resource.Quantity) *resource.Quantity {
		rounded := q.DeepCopy()
		if !rounded.RoundUp(0) {
			return &rounded
		}
		return &q
	}
	req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil
	}
	result := roundUp(req)
	if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && quantity.Cmp(alloc, *result) > 0 {
		result = roundUp(alloc)
	}
	return result
}

// volumeAttributesClassNames returns the non-empty class names a claim refers to.
func volumeAttributesClassNames(pvc *corev1.PersistentVolumeClaim) sets.Set[string] {
	names := sets.New[string]()
	if n := pvc.Spec.VolumeAttributesClassName; n != nil && *n != "" {
		names.Insert(*n)
	}
	if n := pvc.Status.CurrentVolumeAttributesClassName; n != nil && *n != "" {
		names.Insert(*n)
	}
	if m := pvc.Status.ModifyVolumeStatus; m != nil && m.TargetVolumeAttributesClassName != "" {
		names.Insert(m.TargetVolumeAttributesClassName)
	}
	return names
}
