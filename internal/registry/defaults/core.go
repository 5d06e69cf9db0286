package defaults

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// milliScale is the scale every defaulted resource quantity is rounded up to
// (upstream SetDefaults_ResourceList, kubernetes#18538).
const milliScale = -3

// resourceList rounds every quantity in l up to milli precision.
func resourceList(l corev1.ResourceList) {
	for k, v := range l {
		v.RoundUp(milliScale)
		l[k] = v
	}
}

// Pod sets the defaults of a Pod: the pod-only defaults (requests from
// limits, enableServiceLinks, host-network ports)
// followed by the defaults shared with pod templates.
func Pod(p *corev1.Pod) {
	// 1. Requests default to limits for every resource that has a limit but no
	//    request (containers and init containers; not ephemeral containers).
	requestsFromLimits(p.Spec.Containers)
	requestsFromLimits(p.Spec.InitContainers)
	// 2. Pod-level resources are defaulted when the pod is created (PodLevelResources), as
	//    1.37 does, after admission has added every container.
	if p.Spec.EnableServiceLinks == nil {
		v := corev1.DefaultEnableServiceLinks
		p.Spec.EnableServiceLinks = &v
	}
	if p.Spec.HostNetwork {
		hostNetworkPorts(p.Spec.Containers)
		hostNetworkPorts(p.Spec.InitContainers)
	}
	// 3. Everything a pod template gets too.
	PodSpec(&p.Spec)
}

// PodStatus sets the defaults decoding gives a pod's status (upstream's
// SetDefaults_PodStatus and the status's resource lists in SetObjectDefaults_Pod): podIP
// and podIPs kept in step (the list from podIP when it is missing or its first address
// differs, podIP from the list when podIP is missing), and the containers' and the pod's
// allocated and actual resources rounded up to milli precision.
func PodStatus(st *corev1.PodStatus) {
	hasIP, hasIPs := st.PodIP != "", len(st.PodIPs) > 0
	switch {
	case hasIP && !hasIPs:
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	case !hasIP && hasIPs:
		st.PodIP = st.PodIPs[0].IP
	case hasIP && hasIPs && st.PodIPs[0].IP != st.PodIP:
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	for _, cs := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range cs {
			resourceList(cs[i].AllocatedResources)
			if r := cs[i].Resources; r != nil {
				resourceList(r.Limits)
				resourceList(r.Requests)
			}
		}
	}
	resourceList(st.AllocatedResources)
	if r := st.Resources; r != nil {
		resourceList(r.Limits)
		resourceList(r.Requests)
	}
}

// requestsFromLimits copies each limit into requests where no request for the
// same resource is set.
func requestsFromLimits(cs []corev1.Container) {
	for i := range cs {
		r := &cs[i].Resources
		if r.Limits == nil {
			continue
		}
		if r.Requests == nil {
			r.Requests = make(corev1.ResourceList)
		}
		for k, v := range r.Limits {
			if _, ok := r.Requests[k]; !ok {
				r.Requests[k] = v.DeepCopy()
			}
		}
	}
}

// hostNetworkPorts defaults hostPort to containerPort for host-network pods.
func hostNetworkPorts(cs []corev1.Container) {
	for i := range cs {
		for j := range cs[i].Ports {
			if cs[i].Ports[j].HostPort == 0 {
				cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
			}
		}
	}
}

// PodTemplate sets the defaults of a PodTemplate object.
func PodTemplate(t *corev1.PodTemplate) {
	PodSpec(&t.Template.Spec)
}

// PodSpec sets the defaults shared by pods and pod templates (upstream
// SetDefaults_PodSpec plus the nested defaults of volumes, containers,
// probes and resource lists). It does not default requests from limits:
// upstream does that for Pod objects only.
func PodSpec(s *corev1.PodSpec) {
	// The deprecated serviceAccount is an alias of serviceAccountName, kept in step (1.37:
	// serviceAccountName wins when both are set).
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount //nolint:staticcheck // SA1019: kept in step as upstream keeps it
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName //nolint:staticcheck // SA1019: kept in step as upstream keeps it
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		v := int64(corev1.DefaultTerminationGracePeriodSeconds)
		s.TerminationGracePeriodSeconds = &v
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range s.Volumes {
		volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		container(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		container((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	resourceList(s.Overhead)
	if s.Resources != nil {
		resourceList(s.Resources.Limits)
		resourceList(s.Resources.Requests)
	}
}

// container sets the defaults of one container.
func container(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		vf := c.Env[i].ValueFrom
		if vf == nil {
			continue
		}
		if vf.FieldRef != nil {
			fieldSelector(vf.FieldRef)
		}
		if vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
			f := false
			vf.FileKeyRef.Optional = &f
		}
	}
	resourceList(c.Resources.Limits)
	resourceList(c.Resources.Requests)
	probe(c.LivenessProbe)
	probe(c.ReadinessProbe)
	probe(c.StartupProbe)
	if c.Lifecycle != nil {
		lifecycleHandler(c.Lifecycle.PostStart)
		lifecycleHandler(c.Lifecycle.PreStop)
	}
}

// pullPolicyFor is Always for images whose tag is "latest" (an image with
// neither tag nor digest is tagged latest), IfNotPresent otherwise, including
// for names that do not parse.
func pullPolicyFor(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	httpGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		s := ""
		p.GRPC.Service = &s
	}
}

func lifecycleHandler(h *corev1.LifecycleHandler) {
	if h != nil {
		httpGet(h.HTTPGet)
	}
}

func httpGet(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

func fieldSelector(s *corev1.ObjectFieldSelector) {
	if s.APIVersion == "" {
		s.APIVersion = "v1"
	}
}

// volumeSourceEmpty reports whether every field of the volume source is nil.
func volumeSourceEmpty(vs *corev1.VolumeSource) bool {
	v := reflect.ValueOf(vs).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}

// volume sets the defaults of a pod volume and of its source.
func volume(v *corev1.Volume) {
	if volumeSourceEmpty(&v.VolumeSource) {
		v.VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	vs := &v.VolumeSource
	if vs.Image != nil && vs.Image.PullPolicy == "" {
		vs.Image.PullPolicy = pullPolicyFor(vs.Image.Reference)
	}
	if vs.HostPath != nil {
		hostPath(vs.HostPath)
	}
	if vs.Secret != nil && vs.Secret.DefaultMode == nil {
		m := corev1.SecretVolumeSourceDefaultMode
		vs.Secret.DefaultMode = &m
	}
	if vs.ConfigMap != nil && vs.ConfigMap.DefaultMode == nil {
		m := corev1.ConfigMapVolumeSourceDefaultMode
		vs.ConfigMap.DefaultMode = &m
	}
	if vs.DownwardAPI != nil {
		if vs.DownwardAPI.DefaultMode == nil {
			m := corev1.DownwardAPIVolumeSourceDefaultMode
			vs.DownwardAPI.DefaultMode = &m
		}
		downwardAPIItems(vs.DownwardAPI.Items)
	}
	if vs.Projected != nil {
		if vs.Projected.DefaultMode == nil {
			m := corev1.ProjectedVolumeSourceDefaultMode
			vs.Projected.DefaultMode = &m
		}
		for i := range vs.Projected.Sources {
			src := &vs.Projected.Sources[i]
			if src.DownwardAPI != nil {
				downwardAPIItems(src.DownwardAPI.Items)
			}
			if src.ServiceAccountToken != nil && src.ServiceAccountToken.ExpirationSeconds == nil {
				hour := int64(3600)
				src.ServiceAccountToken.ExpirationSeconds = &hour
			}
		}
	}
	if vs.ISCSI != nil && vs.ISCSI.ISCSIInterface == "" {
		vs.ISCSI.ISCSIInterface = "default"
	}
	if vs.RBD != nil {
		rbd(&vs.RBD.RBDPool, &vs.RBD.RadosUser, &vs.RBD.Keyring)
	}
	if vs.AzureDisk != nil {
		azureDisk(vs.AzureDisk)
	}
	if vs.ScaleIO != nil {
		scaleIO(&vs.ScaleIO.StorageMode, &vs.ScaleIO.FSType)
	}
	if vs.Ephemeral != nil && vs.Ephemeral.VolumeClaimTemplate != nil {
		pvcSpec(&vs.Ephemeral.VolumeClaimTemplate.Spec)
	}
}

func downwardAPIItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			fieldSelector(items[i].FieldRef)
		}
	}
}

func hostPath(h *corev1.HostPathVolumeSource) {
	if h.Type == nil {
		t := corev1.HostPathUnset
		h.Type = &t
	}
}

func rbd(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

func azureDisk(a *corev1.AzureDiskVolumeSource) {
	if a.CachingMode == nil {
		m := corev1.AzureDataDiskCachingReadWrite
		a.CachingMode = &m
	}
	if a.FSType == nil {
		s := "ext4"
		a.FSType = &s
	}
	if a.ReadOnly == nil {
		f := false
		a.ReadOnly = &f
	}
	if a.Kind == nil {
		k := corev1.AzureSharedBlobDisk
		a.Kind = &k
	}
}

func scaleIO(mode, fsType *string) {
	if *mode == "" {
		*mode = "ThinProvisioned"
	}
	if *fsType == "" {
		*fsType = "xfs"
	}
}

// Service sets the defaults of a Service. Cluster IPs and node ports are
// allocated by the server, not here; the IP family fields get the values an
// IPv4 single-stack cluster gives them.
func Service(s *corev1.Service) {
	sp := &s.Spec
	if sp.SessionAffinity == "" {
		sp.SessionAffinity = corev1.ServiceAffinityNone
	}
	if sp.SessionAffinity == corev1.ServiceAffinityNone {
		sp.SessionAffinityConfig = nil
	}
	if sp.SessionAffinity == corev1.ServiceAffinityClientIP {
		c := sp.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			t := corev1.DefaultClientIPServiceAffinitySeconds
			sp.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &t},
			}
		}
	}
	if sp.Type == "" {
		sp.Type = corev1.ServiceTypeClusterIP
	}
	for i := range sp.Ports {
		p := &sp.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	externallyAccessible := sp.Type == corev1.ServiceTypeLoadBalancer ||
		sp.Type == corev1.ServiceTypeNodePort ||
		(sp.Type == corev1.ServiceTypeClusterIP && len(sp.ExternalIPs) > 0)
	if externallyAccessible && sp.ExternalTrafficPolicy == "" {
		sp.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if sp.InternalTrafficPolicy == nil &&
		(sp.Type == corev1.ServiceTypeNodePort || sp.Type == corev1.ServiceTypeLoadBalancer || sp.Type == corev1.ServiceTypeClusterIP) {
		p := corev1.ServiceInternalTrafficPolicyCluster
		sp.InternalTrafficPolicy = &p
	}
	if sp.Type == corev1.ServiceTypeLoadBalancer {
		if sp.AllocateLoadBalancerNodePorts == nil {
			t := true
			sp.AllocateLoadBalancerNodePorts = &t
		}
		for i := range s.Status.LoadBalancer.Ingress {
			ing := &s.Status.LoadBalancer.Ingress[i]
			if ing.IP != "" && ing.IPMode == nil {
				m := corev1.LoadBalancerIPModeVIP
				ing.IPMode = &m
			}
		}
	}
	serviceIPFamilies(s)
}

// serviceIPFamilies fills ipFamilyPolicy and ipFamilies the way the service
// REST storage of an IPv4 single-stack cluster does: SingleStack/[IPv4] for
// services with cluster IPs, RequireDualStack for selector-less headless
// services, nothing for ExternalName.
func serviceIPFamilies(s *corev1.Service) {
	sp := &s.Spec
	if sp.Type == corev1.ServiceTypeExternalName {
		return
	}
	if sp.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		if sp.ClusterIP == corev1.ClusterIPNone && len(sp.Selector) == 0 {
			p = corev1.IPFamilyPolicyRequireDualStack
		}
		sp.IPFamilyPolicy = &p
	}
	if len(sp.IPFamilies) == 0 {
		sp.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
}

// PersistentVolumeClaim sets the defaults of a PersistentVolumeClaim.
func PersistentVolumeClaim(c *corev1.PersistentVolumeClaim) {
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
	pvcSpec(&c.Spec)
	resourceList(c.Status.Capacity)
	resourceList(c.Status.AllocatedResources)
}

func pvcSpec(s *corev1.PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		m := corev1.PersistentVolumeFilesystem
		s.VolumeMode = &m
	}
	resourceList(s.Resources.Limits)
	resourceList(s.Resources.Requests)
}

// PersistentVolume sets the defaults of a PersistentVolume.
func PersistentVolume(v *corev1.PersistentVolume) {
	if v.Status.Phase == "" {
		v.Status.Phase = corev1.VolumePending
	}
	if v.Spec.PersistentVolumeReclaimPolicy == "" {
		v.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if v.Spec.VolumeMode == nil {
		m := corev1.PersistentVolumeFilesystem
		v.Spec.VolumeMode = &m
	}
	resourceList(v.Spec.Capacity)
	src := &v.Spec.PersistentVolumeSource
	if src.HostPath != nil {
		hostPath(src.HostPath)
	}
	if src.RBD != nil {
		rbd(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if src.AzureDisk != nil {
		azureDisk(src.AzureDisk)
	}
	if src.ScaleIO != nil {
		scaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
}

// ReplicationController sets the defaults of a ReplicationController:
// selector and labels from the template labels, replicas 1, and the pod
// template defaults.
func ReplicationController(rc *corev1.ReplicationController) {
	if rc.Spec.Template != nil {
		if l := rc.Spec.Template.Labels; l != nil {
			if len(rc.Spec.Selector) == 0 {
				rc.Spec.Selector = copyMap(l)
			}
			if len(rc.Labels) == 0 {
				rc.Labels = copyMap(l)
			}
		}
		PodSpec(&rc.Spec.Template.Spec)
	}
	if rc.Spec.Replicas == nil {
		one := int32(1)
		rc.Spec.Replicas = &one
	}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Namespace sets the defaults of a Namespace: the kubernetes.io/metadata.name
// label (for named namespaces) and status.phase Active.
func Namespace(ns *corev1.Namespace) {
	if len(ns.Name) > 0 {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// PrepareNamespaceForCreate is upstream's namespace strategy step on create:
// status is reset to phase Active and the "kubernetes" finalizer is added to
// spec.finalizers if absent. Call it after the name is generated.
func PrepareNamespaceForCreate(ns *corev1.Namespace) {
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// Secret sets the defaults of a Secret (type Opaque) and folds stringData into data.
func Secret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	// stringData is write-only: its entries go into data, replacing theirs, as upstream's
	// conversion of a written Secret does; it is never stored or returned.
	for k, v := range s.StringData {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// ConfigMap sets the defaults of a ConfigMap: data becomes an empty map when
// absent. (It is omitted again when serialized, as upstream.)
func ConfigMap(c *corev1.ConfigMap) {
	if c.Data == nil {
		c.Data = map[string]string{}
	}
}

// LimitRange sets the defaults of a LimitRange: for Container items, default
// limits from max, default requests from default limits, then from min; all
// quantities rounded up to milli precision.
func LimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		it := &lr.Spec.Limits[i]
		if it.Type == corev1.LimitTypeContainer {
			if it.Default == nil {
				it.Default = corev1.ResourceList{}
			}
			if it.DefaultRequest == nil {
				it.DefaultRequest = corev1.ResourceList{}
			}
			for k, v := range it.Max {
				if _, ok := it.Default[k]; !ok {
					it.Default[k] = v.DeepCopy()
				}
			}
			for k, v := range it.Default {
				if _, ok := it.DefaultRequest[k]; !ok {
					it.DefaultRequest[k] = v.DeepCopy()
				}
			}
			for k, v := range it.Min {
				if _, ok := it.DefaultRequest[k]; !ok {
					it.DefaultRequest[k] = v.DeepCopy()
				}
			}
		}
		resourceList(it.Max)
		resourceList(it.Min)
		resourceList(it.Default)
		resourceList(it.DefaultRequest)
		resourceList(it.MaxLimitRequestRatio)
	}
}

// ResourceQuota rounds the quota's quantities up to milli precision.
func ResourceQuota(q *corev1.ResourceQuota) {
	resourceList(q.Spec.Hard)
	resourceList(q.Status.Hard)
	resourceList(q.Status.Used)
}

// Node sets the defaults of a Node: allocatable from capacity when absent.
func Node(n *corev1.Node) {
	// spec.podCIDR is the first of spec.podCIDRs, and wins when the two differ (upstream's
	// conversion, for older clients).
	if c := n.Spec.PodCIDR; c != "" && (len(n.Spec.PodCIDRs) == 0 || n.Spec.PodCIDRs[0] != c) {
		n.Spec.PodCIDRs = []string{c}
	}
	if len(n.Spec.PodCIDRs) > 0 {
		n.Spec.PodCIDR = n.Spec.PodCIDRs[0]
	}
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
	resourceList(n.Status.Capacity)
	resourceList(n.Status.Allocatable)
}

// Endpoints sets the defaults of an Endpoints object (port protocol TCP).
func Endpoints(e *corev1.Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if e.Subsets[i].Ports[j].Protocol == "" {
				e.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// NormalizeServiceClusterIPs is the service REST storage step that keeps
// spec.clusterIP and spec.clusterIPs in step for clients that set only the
// singular field; old is nil on create. Call it before validation.
func NormalizeServiceClusterIPs(svc, old *corev1.Service) {
	sp := &svc.Spec
	if old == nil {
		if sp.ClusterIP != "" && len(sp.ClusterIPs) == 0 {
			sp.ClusterIPs = []string{sp.ClusterIP}
		}
		return
	}
	if len(old.Spec.ClusterIPs) > 0 && len(sp.ClusterIPs) == 0 && old.Spec.ClusterIP == sp.ClusterIP {
		sp.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP == sp.ClusterIP {
		return
	}
	same := reflect.DeepEqual(old.Spec.ClusterIPs, sp.ClusterIPs)
	if old.Spec.ClusterIP != "" && sp.ClusterIP == "" {
		if same {
			sp.ClusterIPs = nil
		}
	} else if same {
		sp.ClusterIPs = []string{sp.ClusterIP}
	}
}

// PVCDataSources is what upstream's claim strategy does with a claim's data sources on
// create (old nil) and update (KEP 1495): without a dataSourceRef, a dataSource other than
// a claim or a VolumeSnapshot is dropped (unless the stored claim has a data source), then
// each of dataSource and dataSourceRef is filled from the other when it is empty (a
// dataSourceRef naming another namespace fills nothing).
func PVCDataSources(s, old *corev1.PersistentVolumeClaimSpec) {
	if (old == nil || (old.DataSource == nil && old.DataSourceRef == nil)) && s.DataSourceRef == nil && !claimOrSnapshot(s.DataSource) {
		s.DataSource = nil
	}
	NormalizePVCDataSources(s)
}

// NormalizePVCDataSources fills dataSource from dataSourceRef, or the other way round,
// when one is empty (upstream's NormalizeDataSources).
func NormalizePVCDataSources(s *corev1.PersistentVolumeClaimSpec) {
	switch {
	case s.DataSource != nil && s.DataSourceRef == nil:
		s.DataSourceRef = &corev1.TypedObjectReference{Kind: s.DataSource.Kind, Name: s.DataSource.Name}
		if g := s.DataSource.APIGroup; g != nil {
			v := *g
			s.DataSourceRef.APIGroup = &v
		}
	case s.DataSourceRef != nil && s.DataSource == nil && (s.DataSourceRef.Namespace == nil || *s.DataSourceRef.Namespace == ""):
		s.DataSource = &corev1.TypedLocalObjectReference{Kind: s.DataSourceRef.Kind, Name: s.DataSourceRef.Name}
		if g := s.DataSourceRef.APIGroup; g != nil {
			v := *g
			s.DataSource.APIGroup = &v
		}
	}
}

// claimOrSnapshot reports a data source naming a claim or a VolumeSnapshot.
func claimOrSnapshot(d *corev1.TypedLocalObjectReference) bool {
	if d == nil {
		return false
	}
	g := ""
	if d.APIGroup != nil {
		g = *d.APIGroup
	}
	return (d.Kind == "PersistentVolumeClaim" && g == "") || (d.Kind == "VolumeSnapshot" && g == "snapshot.storage.k8s.io")
}
