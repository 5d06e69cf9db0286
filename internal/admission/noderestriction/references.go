package noderestriction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// apiObjectReference is upstream's HasAPIObjectReference: whether a (mirror) pod refers to
// an API object, and to which resource: its ServiceAccount, a Secret or ConfigMap (env,
// envFrom, imagePullSecrets, volumes), a ResourceClaim, or a volume that reads the API.
func apiObjectReference(pod *corev1.Pod) (bool, string, error) {
	if pod.Spec.ServiceAccountName != "" {
		return true, "serviceaccounts", nil
	}
	if hasSecret(pod) {
		return true, "secrets", nil
	}
	if hasConfigMap(pod) {
		return true, "configmaps", nil
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return true, "resourceclaims", nil
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.AWSElasticBlockStore != nil, v.AzureDisk != nil, v.CephFS != nil, v.Cinder != nil,
			v.DownwardAPI != nil, v.EmptyDir != nil, v.FC != nil, v.FlexVolume != nil, v.Flocker != nil, v.GCEPersistentDisk != nil,
			v.GitRepo != nil, v.HostPath != nil, v.Image != nil, v.ISCSI != nil, v.NFS != nil, v.PhotonPersistentDisk != nil,
			v.PortworxVolume != nil, v.Quobyte != nil, v.RBD != nil, v.ScaleIO != nil, v.StorageOS != nil, v.VsphereVolume != nil:
			continue
		case v.ConfigMap != nil:
			return true, "configmaps (via configmap volumes)", nil
		case v.Secret != nil:
			return true, "secrets (via secret volumes)", nil
		case v.CSI != nil:
			return true, "csidrivers (via CSI volumes)", nil
		case v.Glusterfs != nil:
			return true, "endpoints (via glusterFS volumes)", nil
		case v.PersistentVolumeClaim != nil:
			return true, "persistentvolumeclaims", nil
		case v.Ephemeral != nil:
			return true, "persistentvolumeclaims (via ephemeral volumes)", nil
		case v.AzureFile != nil:
			return true, "secrets (via azureFile volumes)", nil
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					return true, "configmaps (via projected volumes)", nil
				case s.Secret != nil:
					return true, "secrets (via projected volumes)", nil
				case s.ServiceAccountToken != nil:
					return true, "serviceaccounts (via projected volumes)", nil
				case s.ClusterTrustBundle != nil:
					return true, "clustertrustbundles", nil
				case s.PodCertificate != nil:
					return true, "podcertificates", nil
				case s.DownwardAPI != nil:
					continue
				default:
					return true, "", fmt.Errorf("unknown source for projected volume %q", v.Name)
				}
			}
		default:
			return true, "", fmt.Errorf("unknown volume type for volume  %q", v.Name)
		}
	}
	return false, "", nil
}

// containers calls f for every init, regular and ephemeral container until it returns true.
func containers(spec *corev1.PodSpec, f func(*corev1.Container) bool) bool {
	for i := range spec.InitContainers {
		if f(&spec.InitContainers[i]) {
			return true
		}
	}
	for i := range spec.Containers {
		if f(&spec.Containers[i]) {
			return true
		}
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		if f(&c) {
			return true
		}
	}
	return false
}

// hasSecret reports whether a pod names a Secret (upstream's VisitPodSecretNames).
func hasSecret(pod *corev1.Pod) bool {
	for _, s := range pod.Spec.ImagePullSecrets {
		if s.Name != "" {
			return true
		}
	}
	if containers(&pod.Spec, func(c *corev1.Container) bool {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil && e.SecretRef.Name != "" {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" {
				return true
			}
		}
		return false
	}) {
		return true
	}
	for _, v := range pod.Spec.Volumes {
		var name string
		switch {
		case v.AzureFile != nil:
			name = v.AzureFile.SecretName
		case v.CephFS != nil && v.CephFS.SecretRef != nil:
			name = v.CephFS.SecretRef.Name
		case v.Cinder != nil && v.Cinder.SecretRef != nil:
			name = v.Cinder.SecretRef.Name
		case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
			name = v.FlexVolume.SecretRef.Name
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil && s.Secret.Name != "" {
					return true
				}
			}
		case v.RBD != nil && v.RBD.SecretRef != nil:
			name = v.RBD.SecretRef.Name
		case v.Secret != nil:
			name = v.Secret.SecretName
		case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
			name = v.ScaleIO.SecretRef.Name
		case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
			name = v.ISCSI.SecretRef.Name
		case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
			name = v.StorageOS.SecretRef.Name
		case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
			name = v.CSI.NodePublishSecretRef.Name
		}
		if name != "" {
			return true
		}
	}
	return false
}

// hasConfigMap reports whether a pod names a ConfigMap (upstream's VisitPodConfigmapNames).
func hasConfigMap(pod *corev1.Pod) bool {
	if containers(&pod.Spec, func(c *corev1.Container) bool {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil && e.ConfigMapRef.Name != "" {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name != "" {
				return true
			}
		}
		return false
	}) {
		return true
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil && s.ConfigMap.Name != "" {
					return true
				}
			}
		case v.ConfigMap != nil && v.ConfigMap.Name != "":
			return true
		}
	}
	return false
}
