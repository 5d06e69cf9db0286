package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodWarnings is what kube-apiserver warns of when a pod is created: first the AppArmor
// annotations it copies to fields as it prepares the pod (every container annotation
// that gave, or could not give, a field), then its strategy's WarningsOnCreate: a name
// that is not a DNS label, then PodSpecWarnings.
func PodWarnings(pod *corev1.Pod) []string {
	// Upstream adds the AppArmor warnings as it prepares the pod, before the others.
	out := appArmorAnnotationWarnings(pod)
	if !isDNS1123Label(pod.Name) {
		out = append(out, fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", validation.IsDNS1123Label(pod.Name)))
	}
	return append(out, PodSpecWarnings(nil, &pod.Spec, &pod.ObjectMeta)...)
}

// PodTemplateWarnings is upstream's GetWarningsForPodTemplate: PodSpecWarnings of a
// workload's template at path (spec.template, spec.jobTemplate.spec.template…).
func PodTemplateWarnings(path *field.Path, t *corev1.PodTemplateSpec) []string {
	if t == nil {
		return nil
	}
	return PodSpecWarnings(path, &t.Spec, &t.ObjectMeta)
}

// deprecatedNodeLabels are upstream's (pkg/api/node).
var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

// deprecatedPodAnnotations are upstream's deprecatedAnnotations of pods.
var deprecatedPodAnnotations = []struct{ key, message string }{
	{`scheduler.alpha.kubernetes.io/critical-pod`, `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{`security.alpha.kubernetes.io/sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
	{`security.alpha.kubernetes.io/unsafe-sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
}

// PodSpecWarnings is upstream's warningsForPodSpecAndMeta (pkg/api/pod/warnings.go), in its
// order and with its texts; path is nil for a pod, the template's path for a workload.
func PodSpecWarnings(path *field.Path, spec *corev1.PodSpec, meta *metav1.ObjectMeta) []string {
	var w []string
	sp := path.Child("spec")
	// Deprecated node labels in selectors, affinity and topology.
	if len(spec.NodeSelector) > 0 {
		for _, k := range sets.List(sets.KeySet(spec.NodeSelector)) {
			if msg, ok := deprecatedNodeLabels[k]; ok {
				w = append(w, fmt.Sprintf("%s: %s", sp.Child("nodeSelector").Key(k), msg))
			}
		}
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		n := spec.Affinity.NodeAffinity
		if n.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			tp := sp.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			for i, term := range n.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				w = append(w, nodeSelectorTermWarnings(term, false, tp.Index(i))...)
			}
		}
		pp := sp.Child("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
		for i, term := range n.PreferredDuringSchedulingIgnoredDuringExecution {
			w = append(w, nodeSelectorTermWarnings(term.Preference, true, pp.Index(i).Child("preference"))...)
		}
	}
	for i, t := range spec.TopologySpreadConstraints {
		tp := sp.Child("topologySpreadConstraints").Index(i)
		if msg, ok := deprecatedNodeLabels[t.TopologyKey]; ok {
			w = append(w, fmt.Sprintf("%s: %s is %s", tp.Child("topologyKey"), t.TopologyKey, msg))
		}
		if t.LabelSelector == nil {
			w = append(w, fmt.Sprintf("%s: a null labelSelector results in matching no pod", tp.Child("labelSelector")))
		}
	}
	// Deprecated annotations.
	// Paths are built only for the warnings that name them: most pods have none.
	ap := func() *field.Path { return path.Child("metadata", "annotations") }
	for _, d := range deprecatedPodAnnotations {
		if _, ok := meta.Annotations[d.key]; ok {
			w = append(w, fmt.Sprintf("%s: %s", ap().Key(d.key), d.message))
		}
	}
	// Deprecated and removed volume plugins.
	for i, v := range spec.Volumes {
		vp := func() *field.Path { return sp.Child("volumes").Index(i) }
		switch {
		case v.PhotonPersistentDisk != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.11, non-functional in v1.16+", vp().Child("photonPersistentDisk")))
		case v.GitRepo != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.11, and disabled by default in v1.33+", vp().Child("gitRepo")))
		case v.ScaleIO != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.16, non-functional in v1.22+", vp().Child("scaleIO")))
		case v.Flocker != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.22, non-functional in v1.25+", vp().Child("flocker")))
		case v.StorageOS != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.22, non-functional in v1.25+", vp().Child("storageOS")))
		case v.Quobyte != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.22, non-functional in v1.25+", vp().Child("quobyte")))
		case v.Glusterfs != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.25, non-functional in v1.26+", vp().Child("glusterfs")))
		case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
			w = append(w, PVCSpecWarnings(vp().Child("ephemeral").Child("volumeClaimTemplate").Child("spec"), &v.Ephemeral.VolumeClaimTemplate.Spec)...)
		case v.CephFS != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.28, non-functional in v1.31+", vp().Child("cephfs")))
		case v.RBD != nil:
			w = append(w, fmt.Sprintf("%s: deprecated in v1.28, non-functional in v1.31+", vp().Child("rbd")))
		}
	}
	w = append(w, overlappingPathWarnings(spec.Volumes)...)
	// Duplicate hostAliases and imagePullSecrets, empty imagePullSecret names.
	w = append(w, duplicateWarnings(len(spec.HostAliases), func(i int) string { return spec.HostAliases[i].IP }, sp, "hostAliases", "ip", "duplicate ip")...)
	w = append(w, duplicateWarnings(len(spec.ImagePullSecrets), func(i int) string { return spec.ImagePullSecrets[i].Name }, sp, "imagePullSecrets", "name", "duplicate name")...)
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			w = append(w, fmt.Sprintf("%s: invalid empty name %q", sp.Child("imagePullSecrets").Index(i).Child("name"), s.Name))
		}
	}
	// Fractional bytes.
	overhead := func() *field.Path { return sp.Child("overhead") }
	w = append(w, fractionalBytes(spec.Overhead, corev1.ResourceMemory, overhead)...)
	w = append(w, fractionalBytes(spec.Overhead, corev1.ResourceEphemeralStorage, overhead)...)
	// The pod's seccomp annotation without the field.
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if _, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			w = append(w, fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, ap().Key(corev1.SeccompPodAnnotationKey)))
		}
	}
	var podAppArmor *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podAppArmor = spec.SecurityContext.AppArmorProfile
	}
	visitContainers(spec, sp, func(c *corev1.Container, cp containerAt) bool {
		if len(meta.Annotations) > 0 && (c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil) {
			if _, ok := meta.Annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
				w = append(w, fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, ap().Key(corev1.SeccompContainerAnnotationKeyPrefix+c.Name)))
			}
		}
		// A template's AppArmor annotation without the field (a pod's: appArmorAnnotationWarnings).
		if path != nil && len(meta.Annotations) > 0 && (c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil) {
			key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
			if v, ok := meta.Annotations[key]; ok && (podAppArmor == nil || !apiequality.Semantic.DeepEqual(podAppArmor, appArmorFieldForAnnotation(v))) {
				w = append(w, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, ap().Key(key)))
			}
		}
		limits := func() *field.Path { return cp.path().Child("resources", "limits") }
		requests := func() *field.Path { return cp.path().Child("resources", "requests") }
		w = append(w, fractionalBytes(c.Resources.Limits, corev1.ResourceMemory, limits)...)
		w = append(w, fractionalBytes(c.Resources.Requests, corev1.ResourceMemory, requests)...)
		w = append(w, fractionalBytes(c.Resources.Limits, corev1.ResourceEphemeralStorage, limits)...)
		w = append(w, fractionalBytes(c.Resources.Requests, corev1.ResourceEphemeralStorage, requests)...)
		// Duplicate env names that hide an earlier definition.
		if len(c.Env) < 2 {
			return true
		}
		seen := sets.New[string]()
		for i, e := range c.Env {
			if !seen.Has(e.Name) {
				seen.Insert(e.Name)
				continue
			}
			ref := fmt.Sprintf("$(%s)", e.Name)
			if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
				w = append(w, fmt.Sprintf("%s: hides previous definition of %q, which may be dropped when using apply", cp.path().Child("env").Index(i), e.Name))
			}
		}
		return true
	})
	w = append(w, portWarnings(spec, sp)...)
	if spec.TerminationGracePeriodSeconds != nil && *spec.TerminationGracePeriodSeconds < 0 {
		w = append(w, fmt.Sprintf("%s: must be >= 0; negative values are invalid and will be treated as 1", sp.Child("terminationGracePeriodSeconds")))
	}
	if spec.Affinity != nil {
		for _, a := range []struct {
			name string
			a    *corev1.PodAffinity
		}{{"podAffinity", spec.Affinity.PodAffinity}, {"podAntiAffinity", podAntiAffinity(spec.Affinity.PodAntiAffinity)}} {
			if a.a == nil {
				continue
			}
			rp := sp.Child("affinity", a.name, "requiredDuringSchedulingIgnoredDuringExecution")
			for i, t := range a.a.RequiredDuringSchedulingIgnoredDuringExecution {
				if t.LabelSelector == nil {
					w = append(w, fmt.Sprintf("%s: a null labelSelector results in matching no pod", rp.Index(i).Child("labelSelector")))
				}
			}
			pp := sp.Child("affinity", a.name, "preferredDuringSchedulingIgnoredDuringExecution")
			for i, t := range a.a.PreferredDuringSchedulingIgnoredDuringExecution {
				if t.PodAffinityTerm.LabelSelector == nil {
					w = append(w, fmt.Sprintf("%s: a null labelSelector results in matching no pod", pp.Index(i).Child("podAffinityTerm", "labelSelector")))
				}
			}
		}
	}
	// IP addresses in deprecated forms.
	if spec.DNSConfig != nil {
		for i, ns := range spec.DNSConfig.Nameservers {
			w = append(w, ipWarnings(sp.Child("dnsConfig", "nameservers").Index(i), ns)...)
		}
	}
	for i, h := range spec.HostAliases {
		w = append(w, ipWarnings(sp.Child("hostAliases").Index(i).Child("ip"), h.IP)...)
	}
	return w
}

// podAntiAffinity views anti-affinity terms as affinity terms (the same shape).
func podAntiAffinity(a *corev1.PodAntiAffinity) *corev1.PodAffinity {
	if a == nil {
		return nil
	}
	return &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: a.RequiredDuringSchedulingIgnoredDuringExecution,
		PreferredDuringSchedulingIgnoredDuringExecution: a.PreferredDuringSchedulingIgnoredDuringExecution}
}

// ipWarnings is apimachinery's GetWarningsForIP, for an address validation accepted.
func ipWarnings(p *field.Path, v string) []string {
	if len(validation.IsValidIPForLegacyField(p, v, false, nil)) != 0 {
		return nil
	}
	return validation.GetWarningsForIP(p, v)
}

// PVCSpecWarnings is upstream's GetWarningsForPersistentVolumeClaimSpec.
func PVCSpecWarnings(p *field.Path, spec *corev1.PersistentVolumeClaimSpec) []string {
	var w []string
	for _, kind := range []string{"requests", "limits"} {
		list := spec.Resources.Requests
		if kind == "limits" {
			list = spec.Resources.Limits
		}
		v := list[corev1.ResourceStorage]
		if v.MilliValue()%1000 != 0 {
			w = append(w, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", p.Child("resources").Child(kind).Key(string(corev1.ResourceStorage)), v.String()))
		}
	}
	return w
}

// nodeSelectorTermWarnings is upstream's GetWarningsForNodeSelectorTerm.
func nodeSelectorTermWarnings(term corev1.NodeSelectorTerm, checkValues bool, p *field.Path) []string {
	var w []string
	for i, e := range term.MatchExpressions {
		ep := p.Child("matchExpressions").Index(i)
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			w = append(w, fmt.Sprintf("%s: %s is %s", ep.Child("key"), e.Key, msg))
		}
		if checkValues {
			for j, v := range e.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					w = append(w, fmt.Sprintf("%s: %s is invalid, %s", ep.Child("values").Index(j), v, msg))
				}
			}
		}
	}
	return w
}

// duplicateWarnings warns of each item whose key an earlier item had.
func duplicateWarnings(n int, key func(int) string, sp *field.Path, list, child, what string) []string {
	if n < 2 {
		return nil
	}
	var w []string
	seen := sets.New[string]()
	for i := 0; i < n; i++ {
		k := key(i)
		if seen.Has(k) {
			w = append(w, fmt.Sprintf("%s: %s %q", sp.Child(list).Index(i).Child(child), what, k))
		}
		seen.Insert(k)
	}
	return w
}

// fractionalBytes warns of a byte quantity with a fractional part in the list at p (whose
// path is built only then).
func fractionalBytes(l corev1.ResourceList, name corev1.ResourceName, p func() *field.Path) []string {
	if v, ok := l[name]; ok && v.MilliValue()%1000 != 0 {
		return []string{fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", p().Key(string(name)), v.String())}
	}
	return nil
}

// portWarnings are upstream's warnings of containers' ports across the pod: a hostIP
// without a hostPort, duplicate, overlapping and ambiguous definitions, duplicate names.
func portWarnings(spec *corev1.PodSpec, sp *field.Path) []string {
	type block struct {
		p    *field.Path
		port corev1.ContainerPort
	}
	ports := false
	visitContainers(spec, sp, func(c *corev1.Container, _ containerAt) bool {
		ports = len(c.Ports) > 0
		return !ports
	})
	if !ports {
		return nil
	}
	var w []string
	all := map[string][]block{}
	visitContainers(spec, sp, func(c *corev1.Container, cp containerAt) bool {
		for i, port := range c.Ports {
			pp := cp.path().Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				w = append(w, fmt.Sprintf("%s: hostIP set without hostPort: %+v", pp, port))
			}
			k := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range all[k] {
				switch a, b := port.HostIP == "", other.port.HostIP == ""; {
				case port.HostIP == other.port.HostIP && port.HostPort == other.port.HostPort:
					w = append(w, fmt.Sprintf("%s: duplicate port definition with %s", pp, other.p))
				case port.HostPort == 0 || other.port.HostPort == 0:
					w = append(w, fmt.Sprintf("%s: overlapping port definition with %s", pp, other.p))
				case port.HostPort == other.port.HostPort && ((a || b) && !(a && b)):
					w = append(w, fmt.Sprintf("%s: dangerously ambiguous port definition with %s", pp, other.p))
				}
			}
			all[k] = append(all[k], block{pp, port})
		}
		return true
	})
	names := map[string]*field.Path{}
	visitContainers(spec, sp, func(c *corev1.Container, cp containerAt) bool {
		for i, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			pp := cp.path().Child("ports").Index(i)
			if other, ok := names[port.Name]; ok {
				w = append(w, fmt.Sprintf("%s: duplicate port name %q with %s, services and probes that select ports by name will use %s", pp, port.Name, other, other))
			} else {
				names[port.Name] = pp
			}
		}
		return true
	})
	return w
}

// overlappingPathWarnings is upstream's warningsForOverlappingVirtualPaths: items of one
// ConfigMap, Secret, DownwardAPI or projected volume written to the same path or one
// inside another.
func overlappingPathWarnings(volumes []corev1.Volume) []string {
	var w []string
	warn := func(vol, desc, body string) {
		w = append(w, fmt.Sprintf("volume %q (%s): overlapping paths: %s", vol, desc, body))
	}
	// The sources are named (ConfigMap "x") only when a warning prints them. The paths of
	// a volume are gathered in buffers on the stack: a pod's volumes have a few each.
	var buf, seen [8]pathSource
	keyPaths := func(items []corev1.KeyToPath, kind, name string) []pathSource {
		out := buf[:0]
		for _, it := range items {
			out = append(out, pathSource{path: it.Path, source: kind, name: name, named: kind != ""})
		}
		return out
	}
	downwardPaths := func(items []corev1.DownwardAPIVolumeFile, source string) []pathSource {
		out := buf[:0]
		for _, it := range items {
			out = append(out, pathSource{path: it.Path, source: source})
		}
		return out
	}
	for _, v := range volumes {
		if v.ConfigMap != nil && v.ConfigMap.Items != nil {
			for _, o := range mappingOverlaps(keyPaths(v.ConfigMap.Items, "", "")) {
				warn(v.Name, fmt.Sprintf("ConfigMap %q", v.ConfigMap.Name), o)
			}
		}
		if v.Secret != nil && v.Secret.Items != nil {
			for _, o := range mappingOverlaps(keyPaths(v.Secret.Items, "", "")) {
				warn(v.Name, fmt.Sprintf("Secret %q", v.Secret.SecretName), o)
			}
		}
		if v.DownwardAPI != nil && v.DownwardAPI.Items != nil {
			for _, o := range mappingOverlaps(downwardPaths(v.DownwardAPI.Items, "")) {
				warn(v.Name, "DownwardAPI", o)
			}
		}
		if v.Projected == nil {
			continue
		}
		all := seen[:0]
		for _, src := range v.Projected.Sources {
			if src == (corev1.VolumeProjection{}) { // every field a pointer: == is DeepEqual
				w = append(w, fmt.Sprintf("volume %q (Projected) has no sources provided", v.Name))
				continue
			}
			var paths []pathSource
			switch {
			case src.ConfigMap != nil && src.ConfigMap.Items != nil:
				paths = keyPaths(src.ConfigMap.Items, "ConfigMap", src.ConfigMap.Name)
			case src.Secret != nil && src.Secret.Items != nil:
				paths = keyPaths(src.Secret.Items, "Secret", src.Secret.Name)
			case src.DownwardAPI != nil && src.DownwardAPI.Items != nil:
				paths = downwardPaths(src.DownwardAPI.Items, "DownwardAPI")
			case src.ServiceAccountToken != nil:
				paths = append(buf[:0], pathSource{path: src.ServiceAccountToken.Path, source: "ServiceAccountToken"})
			case src.ClusterTrustBundle != nil:
				name := ""
				if src.ClusterTrustBundle.Name != nil {
					name = *src.ClusterTrustBundle.Name
				} else if src.ClusterTrustBundle.SignerName != nil {
					name = *src.ClusterTrustBundle.SignerName
				}
				paths = append(buf[:0], pathSource{path: src.ClusterTrustBundle.Path, source: "ClusterTrustBundle", name: name, named: true})
			case src.PodCertificate != nil:
				pc := src.PodCertificate
				paths = buf[:0]
				for _, p := range [...]pathSource{{path: pc.CertificateChainPath, source: "PodCertificate chain"}, {path: pc.KeyPath, source: "PodCertificate key"}, {path: pc.CredentialBundlePath, source: "PodCertificate credential bundle"}} {
					if p.path != "" {
						paths = append(paths, p)
					}
				}
			}
			for _, ps := range paths {
				ps.path = strings.TrimRight(ps.path, "/")
				for _, c := range pathCollisions(all, ps) {
					warn(v.Name, "Projected", fmt.Sprintf("%s with %s", ps, c))
				}
				all = append(all, ps)
			}
		}
	}
	return w
}

// pathSource is a path a volume writes and where it comes from.
type pathSource struct {
	path, source, name string
	named              bool // source is a kind, name its object's name
}

func (p pathSource) String() string {
	if p.named {
		return fmt.Sprintf("%q (%s %q)", p.path, p.source, p.name)
	}
	if p.source != "" {
		return fmt.Sprintf("%q (%s)", p.path, p.source)
	}
	return fmt.Sprintf("%q", p.path)
}

// mappingOverlaps is upstream's checkVolumeMappingForOverlap.
func mappingOverlaps(paths []pathSource) []string {
	var w []string
	var seen [8]pathSource
	all := seen[:0]
	for _, ps := range paths {
		ps.path = strings.TrimRight(ps.path, "/")
		for _, c := range pathCollisions(all, ps) {
			w = append(w, fmt.Sprintf("%s with %s", ps, c))
		}
		all = append(all, ps)
	}
	return w
}

// within reports whether path a is b or inside it (upstream: a+"/" has the prefix b+"/").
func within(a, b string) bool {
	return strings.HasPrefix(a, b) && (len(a) == len(b) || a[len(b)] == '/')
}

// pathCollisions is upstream's checkForOverlap.
func pathCollisions(haystack []pathSource, needle pathSource) []pathSource {
	if needle.path == "" {
		return nil
	}
	var out []pathSource
	for _, item := range haystack {
		switch {
		case item.path == "":
		case item == needle, within(item.path, needle.path), within(needle.path, item.path):
			out = append(out, item)
		}
	}
	return out
}

// appArmorAnnotationWarnings are the warnings upstream's applyAppArmorVersionSkew adds as
// a pod is created, told from the pod as created: each container AppArmor annotation that
// could not be made a valid field, or that was (the container's field now equals the
// annotation's profile, which differs from the pod's). A client that sent both the
// annotation and the equal field is warned too (upstream, which sees the pod before, does
// not).
func appArmorAnnotationWarnings(pod *corev1.Pod) []string {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return nil
	}
	if len(pod.Annotations) == 0 {
		return nil
	}
	var podProfile *corev1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	var w []string
	visitContainers(&pod.Spec, nil, func(c *corev1.Container, _ containerAt) bool {
		key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
		v, ok := pod.Annotations[key]
		if !ok {
			return true
		}
		prof := appArmorFieldForAnnotation(v)
		if prof != nil && len(appArmorProfileField(prof, &field.Path{})) != 0 {
			prof = nil
		}
		var have *corev1.AppArmorProfile
		if c.SecurityContext != nil {
			have = c.SecurityContext.AppArmorProfile
		}
		copied := prof != nil && !apiequality.Semantic.DeepEqual(prof, podProfile) && apiequality.Semantic.DeepEqual(prof, have)
		if (prof == nil && have == nil) || copied {
			w = append(w, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, field.NewPath("metadata", "annotations").Key(key)))
		}
		return true
	})
	return w
}

// appArmorFieldForAnnotation is upstream's ApparmorFieldForAnnotation.
func appArmorFieldForAnnotation(v string) *corev1.AppArmorProfile {
	switch {
	case v == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case v == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		name := strings.TrimPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}
