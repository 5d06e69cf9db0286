package validation

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

// volumes is upstream ValidateVolumes: it returns the valid volumes by name
// for the mount checks.
func volumes(vols []corev1.Volume, podName string, p *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	names := sets.Set[string]{}
	created := sets.Set[string]{}
	if podName != "" {
		for _, v := range vols {
			if v.Ephemeral != nil {
				created.Insert(podName + "-" + v.Name)
			}
		}
	}
	out := map[string]corev1.VolumeSource{}
	for i := range vols {
		v := &vols[i]
		ip := p.Index(i)
		np := ip.Child("name")
		el := volumeSource(&v.VolumeSource, ip, v.Name, podName)
		if v.Name == "" {
			el = append(el, field.Required(np, ""))
		} else {
			el = append(el, dns1123Label(v.Name, np)...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(np, v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
			out[v.Name] = v.VolumeSource
		} else {
			errs = append(errs, el...)
		}
		if v.PersistentVolumeClaim != nil && created.Has(v.PersistentVolumeClaim.ClaimName) {
			errs = append(errs, field.Invalid(ip.Child("persistentVolumeClaim").Child("claimName"), v.PersistentVolumeClaim.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return out, errs
}

// volumeSource is upstream validateVolumeSource: exactly one source, and the
// detailed checks of the sources workloads commonly use.
func volumeSource(s *corev1.VolumeSource, p *field.Path, volName, podName string) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(set bool, child string, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(child), "may not specify more than 1 volume type"))
			return
		}
		n++
		if check != nil {
			errs = append(errs, check()...)
		}
	}
	one(s.EmptyDir != nil, "emptyDir", func() field.ErrorList {
		if s.EmptyDir.SizeLimit != nil && s.EmptyDir.SizeLimit.Sign() < 0 {
			return field.ErrorList{field.Forbidden(p.Child("emptyDir").Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
		}
		return nil
	})
	one(s.HostPath != nil, "hostPath", func() field.ErrorList { return hostPathSource(s.HostPath, p.Child("hostPath")) })
	one(s.GitRepo != nil, "gitRepo", func() field.ErrorList {
		var e field.ErrorList
		if s.GitRepo.Repository == "" {
			e = append(e, field.Required(p.Child("gitRepo").Child("repository"), ""))
		}
		return append(e, localDescendingPath(s.GitRepo.Directory, p.Child("gitRepo").Child("directory"))...)
	})
	one(s.GCEPersistentDisk != nil, "gcePersistentDisk", nil)
	one(s.AWSElasticBlockStore != nil, "awsElasticBlockStore", nil)
	one(s.Secret != nil, "secret", func() field.ErrorList {
		return keyedSource(s.Secret.SecretName == "", "secretName", s.Secret.DefaultMode, s.Secret.Items, p.Child("secret"))
	})
	one(s.NFS != nil, "nfs", func() field.ErrorList {
		fp := p.Child("nfs")
		var e field.ErrorList
		if s.NFS.Server == "" {
			e = append(e, field.Required(fp.Child("server"), ""))
		}
		if s.NFS.Path == "" {
			e = append(e, field.Required(fp.Child("path"), ""))
		}
		if !path.IsAbs(s.NFS.Path) {
			e = append(e, field.Invalid(fp.Child("path"), s.NFS.Path, "must be an absolute path"))
		}
		return e
	})
	one(s.ISCSI != nil, "iscsi", nil)
	one(s.Glusterfs != nil, "glusterfs", nil)
	one(s.Flocker != nil, "flocker", nil)
	one(s.PersistentVolumeClaim != nil, "persistentVolumeClaim", func() field.ErrorList {
		if s.PersistentVolumeClaim.ClaimName == "" {
			return field.ErrorList{field.Required(p.Child("persistentVolumeClaim").Child("claimName"), "")}
		}
		return nil
	})
	one(s.RBD != nil, "rbd", nil)
	one(s.Cinder != nil, "cinder", nil)
	one(s.CephFS != nil, "cephFS", nil)
	one(s.Quobyte != nil, "quobyte", nil)
	one(s.DownwardAPI != nil, "downwarAPI", func() field.ErrorList {
		e := fileMode(s.DownwardAPI.DefaultMode, p.Child("downwardAPI"), "defaultMode")
		for i := range s.DownwardAPI.Items {
			e = append(e, downwardAPIFile(&s.DownwardAPI.Items[i], func() *field.Path { return p.Child("downwardAPI") })...)
		}
		return e
	})
	one(s.FC != nil, "fc", nil)
	one(s.FlexVolume != nil, "flexVolume", nil)
	one(s.ConfigMap != nil, "configMap", func() field.ErrorList {
		return keyedSource(s.ConfigMap.Name == "", "name", s.ConfigMap.DefaultMode, s.ConfigMap.Items, p.Child("configMap"))
	})
	one(s.AzureFile != nil, "azureFile", nil)
	one(s.VsphereVolume != nil, "vsphereVolume", nil)
	one(s.PhotonPersistentDisk != nil, "photonPersistentDisk", nil)
	one(s.PortworxVolume != nil, "portworxVolume", nil)
	one(s.AzureDisk != nil, "azureDisk", nil)
	one(s.StorageOS != nil, "storageos", nil)
	one(s.Projected != nil, "projected", func() field.ErrorList { return projectedSource(s.Projected, p.Child("projected")) })
	one(s.ScaleIO != nil, "scaleIO", nil)
	one(s.CSI != nil, "csi", func() field.ErrorList {
		if s.CSI.Driver == "" {
			return field.ErrorList{field.Required(p.Child("csi").Child("driver"), "")}
		}
		return nil
	})
	one(s.Ephemeral != nil, "ephemeral", func() field.ErrorList {
		fp := p.Child("ephemeral")
		if s.Ephemeral.VolumeClaimTemplate == nil {
			return field.ErrorList{field.Required(fp.Child("volumeClaimTemplate"), "")}
		}
		t := s.Ephemeral.VolumeClaimTemplate
		e := pvcSpec(&t.Spec, fp.Child("volumeClaimTemplate").Child("spec"))
		if podName != "" && volName != "" {
			pvcName := podName + "-" + volName
			for _, msg := range nameIsDNSSubdomain(pvcName, false) {
				e = append(e, field.Invalid(p.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
			}
		}
		return e
	})
	one(s.Image != nil, "image", func() field.ErrorList {
		fp := p.Child("image")
		var e field.ErrorList
		if s.Image.Reference == "" {
			e = append(e, field.Required(fp.Child("reference"), ""))
		}
		return append(e, pullPolicy(s.Image.PullPolicy, fp.Child("pullPolicy"))...)
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

var validHostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory, corev1.HostPathFileOrCreate,
	corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev,
}

func hostPathSource(h *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := pathNoBacksteps(h.Path, p.Child("path"))
	if h.Type != nil {
		ok := false
		for _, t := range validHostPathTypes {
			ok = ok || t == *h.Type
		}
		if !ok {
			errs = append(errs, field.NotSupported(p.Child("type"), *h.Type, validHostPathTypes))
		}
	}
	return errs
}

// fileMode checks the file mode at field child of p (a path built only for an error).
func fileMode(m *int32, p *field.Path, child string) field.ErrorList {
	if m != nil && (*m > 0777 || *m < 0) {
		return field.ErrorList{field.Invalid(p.Child(child), *m, fileModeErrorMsg)}
	}
	return nil
}

// keyToPath checks an item at the path at builds (only for errors).
func keyToPath(kp *corev1.KeyToPath, at func() *field.Path) field.ErrorList {
	return withPath(at, func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if kp.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		}
		if kp.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		errs = append(errs, under(p, "path", func(pp *field.Path) field.ErrorList { return localNonReservedPath(kp.Path, pp) })...)
		return append(errs, fileMode(kp.Mode, p, "mode")...)
	})
}

var validVolumeDownwardAPIFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid")

// downwardAPIFile checks a file at the path at builds (only for errors).
func downwardAPIFile(f *corev1.DownwardAPIVolumeFile, at func() *field.Path) field.ErrorList {
	return withPath(at, func(p *field.Path) field.ErrorList { return downwardAPIFileAt(f, p) })
}

func downwardAPIFileAt(f *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, under(p, "path", func(pp *field.Path) field.ErrorList { return localNonReservedPath(f.Path, pp) })...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, under(p, "fieldRef", func(fp *field.Path) field.ErrorList {
			return objectFieldSelector(f.FieldRef, validVolumeDownwardAPIFieldPaths, fp)
		})...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		errs = append(errs, resourceFieldSelector(f.ResourceFieldRef, p.Child("resourceFieldRef"), true)...)
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return append(errs, fileMode(f.Mode, p, "mode")...)
}

// keyedSource checks a secret or config map volume source at fp: its name (the field
// nameField, reported when noName), default mode and items.
func keyedSource(noName bool, nameField string, mode *int32, items []corev1.KeyToPath, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if noName {
		errs = append(errs, field.Required(fp.Child(nameField), ""))
	}
	errs = append(errs, fileMode(mode, fp, "defaultMode")...)
	for i := range items {
		errs = append(errs, keyToPath(&items[i], func() *field.Path { return fp.Child("items").Index(i) })...)
	}
	return errs
}

// projectedKeys checks a projected secret or config map (at sp) named name: the name is
// required, each item is a key-to-path, and no path may repeat one of the volume's (paths;
// a repeat is reported at the volume, p).
func projectedKeys(name string, items []corev1.KeyToPath, sp func() *field.Path, p *field.Path, paths sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(sp().Child("name"), ""))
	}
	for j := range items {
		kp := &items[j]
		errs = append(errs, keyToPath(kp, func() *field.Path { return sp().Child("items").Index(j) })...)
		if kp.Path != "" {
			if paths.Has(kp.Path) {
				errs = append(errs, field.Invalid(p, name, "conflicting duplicate paths"))
			}
			paths.Insert(kp.Path)
		}
	}
	return errs
}

func projectedSource(s *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := fileMode(s.DefaultMode, p, "defaultMode")
	paths := sets.Set[string]{}
	for i, src := range s.Sources {
		// Each source's paths are built only for its errors.
		sp := func() *field.Path { return p.Child("sources").Index(i) }
		n := 0
		if src.Secret != nil {
			n++
			errs = append(errs, projectedKeys(src.Secret.Name, src.Secret.Items, func() *field.Path { return sp().Child("secret") }, p, paths)...)
		}
		if src.ConfigMap != nil {
			n++
			errs = append(errs, projectedKeys(src.ConfigMap.Name, src.ConfigMap.Items, func() *field.Path { return sp().Child("configMap") }, p, paths)...)
		}
		if src.DownwardAPI != nil {
			n++
			for j := range src.DownwardAPI.Items {
				f := &src.DownwardAPI.Items[j]
				errs = append(errs, downwardAPIFile(f, func() *field.Path { return sp().Child("downwardAPI") })...)
				if f.Path != "" {
					if paths.Has(f.Path) {
						errs = append(errs, field.Invalid(p, f.Path, "conflicting duplicate paths"))
					}
					paths.Insert(f.Path)
				}
			}
		}
		if src.ServiceAccountToken != nil {
			n++
			tp := func() *field.Path { return sp().Child("serviceAccountToken") }
			t := src.ServiceAccountToken
			if t.ExpirationSeconds != nil {
				if *t.ExpirationSeconds < 10*60 {
					errs = append(errs, field.Invalid(tp().Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
				}
				if *t.ExpirationSeconds > 1<<32 {
					errs = append(errs, field.Invalid(tp().Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
				}
			}
			if t.Path == "" {
				errs = append(errs, field.Required(p.Child("path"), ""))
			} else {
				errs = append(errs, withPath(func() *field.Path { return tp().Child("path") }, func(pp *field.Path) field.ErrorList {
					return localNonReservedPath(t.Path, pp)
				})...)
				if paths.Has(t.Path) {
					errs = append(errs, field.Invalid(p, t.Path, "conflicting duplicate paths"))
				}
				paths.Insert(t.Path)
			}
		}
		if src.ClusterTrustBundle != nil {
			n++
		}
		if src.PodCertificate != nil {
			n++
			errs = append(errs, podCertificateProjection(src.PodCertificate, sp().Child("podCertificate"), p, paths)...)
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(sp(), "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

// podCertificateKeyTypes are the key types a podCertificate projection may ask for.
var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// podCertificateProjection is upstream's check of a podCertificate projected source (at
// pp, in the projected volume at p, whose file paths so far are paths): the signer, user
// annotations and user, a supported key type, maxExpirationSeconds within the signer's
// range, and at least one file path, each local and not another source's.
func podCertificateProjection(pc *corev1.PodCertificateProjection, pp, p *field.Path, paths sets.Set[string]) field.ErrorList {
	errs := signerName(pp.Child("signerName"), pc.SignerName)
	if pc.UserAnnotations != nil {
		errs = append(errs, userAnnotations(pc.UserAnnotations, pp.Child("userAnnotations"))...)
	}
	if pc.User != nil {
		for _, msg := range utilvalidation.IsValidUserID(*pc.User) {
			errs = append(errs, field.Invalid(pp.Child("user"), *pc.User, msg))
		}
	}
	if !slices.Contains(podCertificateKeyTypes, pc.KeyType) {
		errs = append(errs, field.NotSupported(pp.Child("keyType"), pc.KeyType, podCertificateKeyTypes))
	}
	if e := pc.MaxExpirationSeconds; e != nil {
		if *e < pcrMinMaxExpirationSeconds {
			errs = append(errs, field.Invalid(pp.Child("maxExpirationSeconds"), *e, "if provided, maxExpirationSeconds must be >= 3600"))
		}
		maxMax := int32(pcrMaxMaxExpirationSeconds)
		if isKubernetesSignerName(pc.SignerName) {
			maxMax = pcrKubernetesMaxMaxExpirationSeconds
		}
		if *e > maxMax {
			errs = append(errs, field.Invalid(pp.Child("maxExpirationSeconds"), *e, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", maxMax)))
		}
	}
	files := 0
	for _, f := range []struct{ name, path string }{{"credentialBundlePath", pc.CredentialBundlePath}, {"keyPath", pc.KeyPath}, {"certificateChainPath", pc.CertificateChainPath}} {
		if f.path == "" {
			continue
		}
		files++
		errs = append(errs, localNonReservedPath(f.path, pp.Child(f.name))...)
		if paths.Has(f.path) {
			errs = append(errs, field.Invalid(p, f.path, "conflicting duplicate paths"))
		}
		paths.Insert(f.path)
	}
	if files == 0 {
		errs = append(errs, field.Required(pp, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}

// pathNoBacksteps rejects paths with a ".." element.
func pathNoBacksteps(target string, p *field.Path) field.ErrorList {
	for rest, more := filepath.ToSlash(target), true; more; {
		var item string
		item, rest, more = strings.Cut(rest, "/")
		if item == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

// localDescendingPath requires a relative path without backsteps.
func localDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(errs, pathNoBacksteps(target, p)...)
}

// localNonReservedPath also forbids a leading "..".
func localNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := localDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}
