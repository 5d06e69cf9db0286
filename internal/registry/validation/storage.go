package validation

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// storage.k8s.io limits (upstream pkg/apis/storage/validation).
const (
	maxAttachedVolumeMetadataSize = 256 * (1 << 10)
	maxVolumeErrorMessageSize     = 1024
	csiNodeIDMaxLength            = 192
)

// csiDriverName is upstream core ValidateCSIDriverName.
func csiDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// nameMsgs turns a name rule's messages into Invalid errors at p.
func nameMsgs(rule NameFunc, v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range rule(v, false) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// CSIDriver validates a CSIDriver on create.
func CSIDriver(d *storagev1.CSIDriver) field.ErrorList {
	errs := objectMeta(&d.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	return append(errs, csiDriverSpec(&d.Spec, field.NewPath("spec"))...)
}

// CSIDriverUpdate validates an update of a CSIDriver: attachRequired and
// volumeLifecycleModes are immutable.
func CSIDriverUpdate(n, o *storagev1.CSIDriver) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, csiDriverSpec(&n.Spec, field.NewPath("spec"))...)
	errs = append(errs, immutable(n.Spec.AttachRequired, o.Spec.AttachRequired, field.NewPath("spec", "attachedRequired"))...)
	return append(errs, immutable(n.Spec.VolumeLifecycleModes, o.Spec.VolumeLifecycleModes, field.NewPath("spec", "volumeLifecycleModes"))...)
}

func csiDriverSpec(s *storagev1.CSIDriverSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	required := func(v *bool, name string) {
		if v == nil {
			errs = append(errs, field.Required(p.Child(name), ""))
		}
	}
	required(s.AttachRequired, "attachedRequired")
	required(s.PodInfoOnMount, "podInfoOnMount")
	required(s.StorageCapacity, "storageCapacity")
	if s.FSGroupPolicy != nil {
		switch *s.FSGroupPolicy {
		case storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy, storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy:
		default:
			errs = append(errs, field.NotSupported(p.Child("fsGroupPolicy"), s.FSGroupPolicy, []string{string(storagev1.FileFSGroupPolicy), string(storagev1.NoneFSGroupPolicy), string(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)}))
		}
	}
	audiences := map[string]bool{}
	for i, tr := range s.TokenRequests {
		ip := p.Child("tokenRequests").Index(i)
		if audiences[tr.Audience] {
			errs = append(errs, field.Duplicate(ip.Child("audience"), tr.Audience))
			continue
		}
		audiences[tr.Audience] = true
		if tr.ExpirationSeconds == nil {
			continue
		}
		if *tr.ExpirationSeconds < int64((10 * time.Minute).Seconds()) {
			errs = append(errs, field.Invalid(ip.Child("expirationSeconds"), *tr.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *tr.ExpirationSeconds > 1<<32 {
			errs = append(errs, field.Invalid(ip.Child("expirationSeconds"), *tr.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			errs = append(errs, field.NotSupported(p.Child("volumeLifecycleModes"), m, []string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}))
		}
	}
	required(s.SELinuxMount, "seLinuxMount")
	if v := s.NodeAllocatableUpdatePeriodSeconds; v != nil && *v < 10 {
		errs = append(errs, field.Invalid(p.Child("nodeAllocatableUpdatePeriodSeconds"), *v, "must be greater than or equal to 10 seconds"))
	}
	if s.ServiceAccountTokenInSecrets != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(p.Child("serviceAccountTokenInSecrets"), s.ServiceAccountTokenInSecrets, "serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	required(s.PreventPodSchedulingIfMissing, "preventPodSchedulingIfMissing")
	return errs
}

// CSINode validates a CSINode on create.
func CSINode(n *storagev1.CSINode) field.ErrorList {
	errs := objectMeta(&n.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	p := field.NewPath("spec", "drivers")
	names := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		ip := p.Index(i)
		errs = append(errs, csiDriverName(d.Name, ip.Child("name"))...)
		if d.NodeID == "" {
			errs = append(errs, field.Required(ip.Child("nodeID"), d.NodeID))
		}
		if len(d.NodeID) > csiNodeIDMaxLength {
			errs = append(errs, field.Invalid(ip.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
		}
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			errs = append(errs, nonnegative(int64(*d.Allocatable.Count), ip.Child("allocatable", "count"))...)
		}
		if names[d.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), d.Name))
		}
		names[d.Name] = true
		keys := map[string]bool{}
		for _, k := range d.TopologyKeys {
			if k == "" {
				errs = append(errs, field.Required(ip, k))
			}
			if keys[k] {
				errs = append(errs, field.Duplicate(ip, k))
			}
			keys[k] = true
			errs = append(errs, qualifiedName(k, ip)...)
		}
	}
	return errs
}

// CSINodeUpdate validates an update of a CSINode: an existing driver entry
// is immutable but for its allocatable count.
func CSINodeUpdate(n, o *storagev1.CSINode) field.ErrorList {
	errs := CSINode(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	for _, od := range o.Spec.Drivers {
		for _, nd := range n.Spec.Drivers {
			if od.Name == nd.Name {
				a, b := nd.DeepCopy(), od.DeepCopy()
				a.Allocatable, b.Allocatable = nil, nil
				errs = append(errs, immutable(*a, *b, field.NewPath("spec", "drivers"))...)
			}
		}
	}
	return errs
}

// VolumeAttachment validates a VolumeAttachment on create.
func VolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	errs := objectMeta(&va.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	sp := field.NewPath("spec")
	errs = append(errs, csiDriverName(va.Spec.Attacher, sp.Child("attacher"))...)
	src, srcPath := va.Spec.Source, sp.Child("source")
	switch {
	case src.InlineVolumeSpec == nil && src.PersistentVolumeName == nil:
		errs = append(errs, field.Required(srcPath, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.InlineVolumeSpec != nil && src.PersistentVolumeName != nil:
		errs = append(errs, field.Forbidden(srcPath, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		errs = append(errs, field.Required(srcPath.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	errs = append(errs, nameMsgs(nameIsDNSSubdomain, va.Spec.NodeName, sp.Child("nodeName"))...)
	st := field.NewPath("status")
	var size int64
	for k, v := range va.Status.AttachmentMetadata {
		size += int64(len(k)) + int64(len(v))
	}
	if size > maxAttachedVolumeMetadataSize {
		errs = append(errs, field.TooLong(st.Child("attachmentMetadata"), "", maxAttachedVolumeMetadataSize))
	}
	errs = append(errs, volumeError(va.Status.AttachError, st.Child("attachError"))...)
	errs = append(errs, volumeError(va.Status.DetachError, st.Child("detachError"))...)
	if pv := src.PersistentVolumeName; pv != nil && *pv != "" {
		errs = append(errs, nameMsgs(nameIsDNSSubdomain, *pv, field.NewPath("spec.source.persistentVolumeName"))...)
	}
	return errs
}

func volumeError(e *storagev1.VolumeError, p *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var errs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		errs = append(errs, field.TooLong(p.Child("message"), "", maxVolumeErrorMessageSize))
	}
	if e.ErrorCode != nil && *e.ErrorCode < 0 {
		errs = append(errs, field.Invalid(p.Child("errorCode"), *e.ErrorCode, utilvalidation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return errs
}

// VolumeAttachmentUpdate validates an update of a VolumeAttachment: spec is
// immutable.
func VolumeAttachmentUpdate(n, o *storagev1.VolumeAttachment) field.ErrorList {
	errs := VolumeAttachment(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	return append(errs, immutable(n.Spec, o.Spec, field.NewPath("spec"))...)
}

// CSIStorageCapacity validates a CSIStorageCapacity on create.
func CSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	errs = append(errs, metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))...)
	errs = append(errs, nameMsgs(nameIsDNSSubdomain, c.StorageClassName, field.NewPath("storageClassName"))...)
	if c.Capacity != nil {
		errs = append(errs, nonnegativeQuantity(*c.Capacity, field.NewPath("capacity"))...)
	}
	return errs
}

// CSIStorageCapacityUpdate validates an update of a CSIStorageCapacity:
// nodeTopology and storageClassName are immutable.
func CSIStorageCapacityUpdate(n, o *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := CSIStorageCapacity(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	if !equality.Semantic.DeepEqual(n.NodeTopology, o.NodeTopology) {
		errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), n.NodeTopology, "field is immutable"))
	}
	if n.StorageClassName != o.StorageClassName {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), n.StorageClassName, "field is immutable"))
	}
	return errs
}

// VolumeAttributesClass validates a VolumeAttributesClass on create.
func VolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	dp := field.NewPath("driverName")
	if c.DriverName == "" {
		errs = append(errs, field.Required(dp, c.DriverName))
	} else {
		errs = append(errs, qualifiedName(strings.ToLower(c.DriverName), dp)...)
	}
	pp := field.NewPath("parameters")
	errs = append(errs, storageClassParameters(c.Parameters, pp)...)
	if len(c.Parameters) == 0 {
		errs = append(errs, field.Required(pp, "must contain at least one key/value pair"))
	}
	return errs
}

// VolumeAttributesClassUpdate validates an update of a VolumeAttributesClass:
// driverName and parameters are immutable.
func VolumeAttributesClassUpdate(n, o *storagev1.VolumeAttributesClass) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	if n.DriverName != o.DriverName {
		errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(o.Parameters, n.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(errs, VolumeAttributesClass(n)...)
}
