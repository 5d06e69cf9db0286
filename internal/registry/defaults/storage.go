package defaults

import (
	storagev1 "k8s.io/api/storage/v1"
)

// CSIDriver applies upstream's CSIDriver defaults (SELinuxMountReadWriteOncePod
// and VolumeLimitScaling are on in v1.37).
func CSIDriver(d *storagev1.CSIDriver) {
	s := &d.Spec
	falseIfNil := func(p **bool) {
		if *p == nil {
			*p = new(bool)
		}
	}
	if s.AttachRequired == nil {
		t := true
		s.AttachRequired = &t
	}
	falseIfNil(&s.PodInfoOnMount)
	falseIfNil(&s.StorageCapacity)
	if s.FSGroupPolicy == nil {
		p := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
		s.FSGroupPolicy = &p
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = append(s.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
	}
	falseIfNil(&s.RequiresRepublish)
	falseIfNil(&s.SELinuxMount)
	falseIfNil(&s.PreventPodSchedulingIfMissing)
}
