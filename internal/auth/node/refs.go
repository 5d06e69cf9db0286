package node

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/ephemeral"
)

// kind is the type of an object a node may be related to.
type kind uint8

const (
	kindSecret kind = iota
	kindConfigMap
	kindPVC
	kindPV
	kindResourceClaim
	kindServiceAccount
	kindPod
	kindVolumeAttachment
	kindResourceSlice
	kindPodCertificateRequest
)

// ref names one object of a kind.
type ref struct {
	kind      kind
	namespace string
	name      string
}

// podRefs returns what a pod bound to a node makes readable to that node, as upstream's
// graph adds it: the pod's ServiceAccount, the Secrets of its imagePullSecrets, containers'
// env and envFrom (init, regular and ephemeral) and volumes (projected ones included), its
// ConfigMaps likewise, the claims of its persistentVolumeClaim and ephemeral volumes, and its
// ResourceClaims (named ones, those its status names for templates, the extended resource
// claim). A mirror pod relates to nothing but its node.
func podRefs(pod *corev1.Pod) []ref {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	var out []ref
	add := func(k kind, name string) {
		if name != "" {
			out = append(out, ref{kind: k, namespace: pod.Namespace, name: name})
		}
	}
	add(kindServiceAccount, pod.Spec.ServiceAccountName)
	for _, s := range pod.Spec.ImagePullSecrets {
		add(kindSecret, s.Name)
	}
	visitContainers(&pod.Spec, func(c *corev1.Container) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				add(kindSecret, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add(kindConfigMap, e.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(kindSecret, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(kindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.AzureFile != nil:
			add(kindSecret, v.AzureFile.SecretName)
		case v.CephFS != nil && v.CephFS.SecretRef != nil:
			add(kindSecret, v.CephFS.SecretRef.Name)
		case v.Cinder != nil && v.Cinder.SecretRef != nil:
			add(kindSecret, v.Cinder.SecretRef.Name)
		case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
			add(kindSecret, v.FlexVolume.SecretRef.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					add(kindSecret, s.Secret.Name)
				}
				if s.ConfigMap != nil {
					add(kindConfigMap, s.ConfigMap.Name)
				}
			}
		case v.RBD != nil && v.RBD.SecretRef != nil:
			add(kindSecret, v.RBD.SecretRef.Name)
		case v.Secret != nil:
			add(kindSecret, v.Secret.SecretName)
		case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
			add(kindSecret, v.ScaleIO.SecretRef.Name)
		case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
			add(kindSecret, v.ISCSI.SecretRef.Name)
		case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
			add(kindSecret, v.StorageOS.SecretRef.Name)
		case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
			add(kindSecret, v.CSI.NodePublishSecretRef.Name)
		case v.ConfigMap != nil:
			add(kindConfigMap, v.ConfigMap.Name)
		}
		switch {
		case v.PersistentVolumeClaim != nil:
			add(kindPVC, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			add(kindPVC, ephemeral.VolumeClaimName(pod, v))
		}
	}
	for i := range pod.Spec.ResourceClaims {
		c := &pod.Spec.ResourceClaims[i]
		switch {
		case c.ResourceClaimName != nil:
			add(kindResourceClaim, *c.ResourceClaimName)
		case c.ResourceClaimTemplateName != nil:
			for _, st := range pod.Status.ResourceClaimStatuses {
				if st.Name == c.Name && st.ResourceClaimName != nil {
					add(kindResourceClaim, *st.ResourceClaimName)
				}
			}
		}
	}
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		add(kindResourceClaim, st.ResourceClaimName)
	}
	return out
}

// visitContainers calls f for every init, regular and ephemeral container.
func visitContainers(spec *corev1.PodSpec, f func(*corev1.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		f(&c)
	}
}

// pvSecrets returns the Secrets a bound PersistentVolume lets the kubelet read (the ones
// upstream calls kubeletVisible; a CSI volume's controller secrets are not), with their
// namespaces as upstream resolves them (the claim's namespace when the reference has none).
func pvSecrets(pv *corev1.PersistentVolume) []ref {
	claimNS := ""
	if pv.Spec.ClaimRef != nil {
		claimNS = pv.Spec.ClaimRef.Namespace
	}
	var out []ref
	add := func(ns, name string) {
		if name != "" {
			out = append(out, ref{kind: kindSecret, namespace: ns, name: name})
		}
	}
	or := func(ns string) string {
		if ns != "" {
			return ns
		}
		return claimNS
	}
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.AzureFile != nil:
		ns := claimNS
		if s.AzureFile.SecretNamespace != nil && *s.AzureFile.SecretNamespace != "" {
			ns = *s.AzureFile.SecretNamespace
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil && s.CephFS.SecretRef != nil:
		add(or(s.CephFS.SecretRef.Namespace), s.CephFS.SecretRef.Name)
	case s.Cinder != nil && s.Cinder.SecretRef != nil:
		add(s.Cinder.SecretRef.Namespace, s.Cinder.SecretRef.Name)
	case s.FlexVolume != nil && s.FlexVolume.SecretRef != nil:
		add(or(s.FlexVolume.SecretRef.Namespace), s.FlexVolume.SecretRef.Name)
	case s.RBD != nil && s.RBD.SecretRef != nil:
		add(or(s.RBD.SecretRef.Namespace), s.RBD.SecretRef.Name)
	case s.ScaleIO != nil && s.ScaleIO.SecretRef != nil:
		add(or(s.ScaleIO.SecretRef.Namespace), s.ScaleIO.SecretRef.Name)
	case s.ISCSI != nil && s.ISCSI.SecretRef != nil:
		add(or(s.ISCSI.SecretRef.Namespace), s.ISCSI.SecretRef.Name)
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		add(s.StorageOS.SecretRef.Namespace, s.StorageOS.SecretRef.Name)
	case s.CSI != nil:
		for _, r := range []*corev1.SecretReference{s.CSI.NodePublishSecretRef, s.CSI.NodeStageSecretRef, s.CSI.NodeExpandSecretRef} {
			if r != nil {
				add(r.Namespace, r.Name)
			}
		}
	}
	return out
}
