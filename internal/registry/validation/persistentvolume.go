package validation

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

var supportedReclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{
	corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain,
}

// PersistentVolume validates a PersistentVolume on create (upstream
// ValidatePersistentVolume).
func PersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	errs := objectMeta(&pv.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	return append(errs, pvSpec(&pv.Spec, field.NewPath("spec"))...)
}

// pvSpec is upstream ValidatePersistentVolumeSpec for stored (not inline) volumes.
func pvSpec(s *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	// 1. Access modes: at least one, each known, ReadWriteOncePod alone.
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), ""))
	}
	known := sets.New(supportedAccessModes...)
	rwop, other := false, false
	for _, m := range s.AccessModes {
		if !known.Has(m) {
			errs = append(errs, field.NotSupported(p.Child("accessModes"), m, supportedAccessModes))
		}
		if m == corev1.ReadWriteOncePod {
			rwop = true
		} else if known.Has(m) {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	// 2. Capacity: storage only, positive.
	if len(s.Capacity) == 0 {
		errs = append(errs, field.Required(p.Child("capacity"), ""))
	}
	if _, ok := s.Capacity[corev1.ResourceStorage]; !ok || len(s.Capacity) > 1 {
		errs = append(errs, field.NotSupported(p.Child("capacity"), s.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	var names namesBuf
	for _, n := range sortedNames(s.Capacity, &names) {
		errs = append(errs, resourceQuantityValue(n, s.Capacity[n], p.Child("capacity").Key(string(n)))...)
		errs = append(errs, positiveQuantity(s.Capacity[n], p.Child("capacity").Key(string(n)))...)
	}
	// 3. Reclaim policy.
	if s.PersistentVolumeReclaimPolicy != "" && !sets.New(supportedReclaimPolicies...).Has(s.PersistentVolumeReclaimPolicy) {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), s.PersistentVolumeReclaimPolicy, supportedReclaimPolicies))
	}
	// 4. Exactly one volume source.
	errs = append(errs, pvSource(s, p)...)
	if s.HostPath != nil && path.Clean(s.HostPath.Path) == "/" && s.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	// 5. Class names and volume mode.
	if s.StorageClassName != "" {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && !sets.New(supportedVolumeModes...).Has(*s.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, supportedVolumeModes))
	}
	if s.VolumeAttributesClassName != nil {
		if *s.VolumeAttributesClassName == "" {
			errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			errs = append(errs, nameErrs(nameIsDNSSubdomain, *s.VolumeAttributesClassName, p.Child("volumeAttributesClassName"))...)
		}
		if s.CSI == nil {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return errs
}

// pvSource counts the volume sources in upstream's order: the first is
// validated, every later one is "may not specify more than 1 volume type".
func pvSource(s *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(set bool, name string, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 volume type"))
			return
		}
		n++
		if check != nil {
			errs = append(errs, check()...)
		}
	}
	src := &s.PersistentVolumeSource
	one(src.HostPath != nil, "hostPath", func() field.ErrorList { return hostPathSource(src.HostPath, p.Child("hostPath")) })
	one(src.GCEPersistentDisk != nil, "gcePersistentDisk", func() field.ErrorList {
		return requiredString(src.GCEPersistentDisk.PDName, p.Child("persistentDisk", "pdName"))
	})
	one(src.AWSElasticBlockStore != nil, "awsElasticBlockStore", func() field.ErrorList {
		return requiredString(src.AWSElasticBlockStore.VolumeID, p.Child("awsElasticBlockStore", "volumeID"))
	})
	one(src.Glusterfs != nil, "glusterfs", nil)
	one(src.Flocker != nil, "flocker", nil)
	one(src.NFS != nil, "nfs", func() field.ErrorList {
		np := p.Child("nfs")
		e := requiredString(src.NFS.Server, np.Child("server"))
		if src.NFS.Path == "" {
			e = append(e, field.Required(np.Child("path"), ""))
		} else if !path.IsAbs(src.NFS.Path) {
			e = append(e, field.Invalid(np.Child("path"), src.NFS.Path, "must be an absolute path"))
		}
		return e
	})
	one(src.RBD != nil, "rbd", nil)
	one(src.Quobyte != nil, "quobyte", nil)
	one(src.CephFS != nil, "cephFS", nil)
	one(src.ISCSI != nil, "iscsi", nil)
	one(src.Cinder != nil, "cinder", nil)
	one(src.FC != nil, "fc", nil)
	if src.FlexVolume != nil { // upstream counts it without the check
		n++
	}
	one(src.AzureFile != nil, "azureFile", nil)
	one(src.VsphereVolume != nil, "vsphereVolume", nil)
	one(src.PhotonPersistentDisk != nil, "photonPersistentDisk", nil)
	one(src.PortworxVolume != nil, "portworxVolume", nil)
	one(src.AzureDisk != nil, "azureDisk", nil)
	one(src.ScaleIO != nil, "scaleIO", nil)
	one(src.Local != nil, "local", func() field.ErrorList {
		e := requiredString(src.Local.Path, p.Child("local", "path"))
		if s.NodeAffinity == nil || s.NodeAffinity.Required == nil {
			e = append(e, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
		return e
	})
	one(src.StorageOS != nil, "storageos", nil)
	one(src.CSI != nil, "csi", func() field.ErrorList {
		cp := p.Child("csi")
		e := requiredString(src.CSI.Driver, cp.Child("driver"))
		return append(e, requiredString(src.CSI.VolumeHandle, cp.Child("volumeHandle"))...)
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

func requiredString(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

// PersistentVolumeUpdate validates an update of a PersistentVolume: the new
// object's validity, an immutable volume source and volume mode, and node
// affinity fixed once set.
func PersistentVolumeUpdate(n, o *corev1.PersistentVolume) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, PersistentVolume(n)...)
	nsrc := n.Spec.PersistentVolumeSource
	if o.Spec.CSI != nil && o.Spec.CSI.ControllerExpandSecretRef == nil && n.Spec.CSI != nil && n.Spec.CSI.ControllerExpandSecretRef != nil {
		csi := *n.Spec.CSI
		csi.ControllerExpandSecretRef = nil
		nsrc.CSI = &csi
	}
	if !semantic.DeepEqual(nsrc, o.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", diff.Diff(convert.InternalJSON(o.Spec.PersistentVolumeSource), convert.InternalJSON(nsrc)))))
	}
	errs = append(errs, immutable(n.Spec.VolumeMode, o.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if o.Spec.NodeAffinity != nil && !semantic.DeepEqual(n.Spec.NodeAffinity, o.Spec.NodeAffinity) {
		errs = append(errs, immutable(n.Spec.NodeAffinity, o.Spec.NodeAffinity, field.NewPath("nodeAffinity"))...)
	}
	if o.Spec.VolumeAttributesClassName != nil && n.Spec.VolumeAttributesClassName == nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return errs
}
