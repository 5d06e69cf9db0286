package validation

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// PodStatusUpdate is upstream's ValidatePodStatusUpdate (pods/status) with v1.37's
// default feature gates: container restart rules and the RestartAllContainers action on
// (ContainerRestartRules, RestartAllContainersOnContainerExits), NominatedNodeName not
// set on bound pods (ClearingNominatedNodeNameAfterBinding), strict IP parsing of new
// addresses (StrictIPCIDRValidation), image volume digests off (ImageVolumeWithDigest:
// their status is dropped, not validated). n is the pod as the status strategy prepared
// it (its spec is o's). The spec is not validated; only the metadata's update rules, the
// pod's annotations and the status are, in upstream's order.
func PodStatusUpdate(n, o *corev1.Pod) field.ErrorList {
	// 1. Metadata: the generic update rules and the pod's annotation rules.
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, podSpecificAnnotationUpdates(n, o, metaPath.Child("annotations"))...)

	// 2. Conditions, placement and the generation observed.
	sp := field.NewPath("status")
	errs = append(errs, podConditions(n.Status.Conditions, sp.Child("conditions"))...)
	if n.Spec.NodeName != o.Spec.NodeName {
		errs = append(errs, field.Forbidden(sp.Child("nodeName"), "may not be changed directly"))
	}
	if nn := n.Status.NominatedNodeName; nn != o.Status.NominatedNodeName && nn != "" {
		for _, msg := range nameIsDNSSubdomain(nn, false) {
			errs = append(errs, field.Invalid(sp.Child("nominatedNodeName"), nn, msg))
		}
	}
	if o.Spec.NodeName != "" && n.Status.NominatedNodeName != "" && n.Status.NominatedNodeName != o.Status.NominatedNodeName {
		errs = append(errs, field.Forbidden(sp.Child("nominatedNodeName"), "may not be set on pods that are already bound to a node"))
	}
	if n.Status.ObservedGeneration < 0 {
		errs = append(errs, field.Invalid(sp.Child("observedGeneration"), n.Status.ObservedGeneration, "must be a non-negative integer"))
	}
	if n.Status.QOSClass != o.Status.QOSClass {
		errs = append(errs, field.Invalid(sp.Child("qosClass"), n.Status.QOSClass, fieldImmutableErrorMsg))
	}

	// 3. Container states: a terminated container stays terminated unless it may restart.
	errs = append(errs, containerStateTransition(n.Status.ContainerStatuses, o.Status.ContainerStatuses, sp.Child("containerStatuses"), &o.Spec, o.Spec.Containers, false)...)
	errs = append(errs, containerStateTransition(n.Status.InitContainerStatuses, o.Status.InitContainerStatuses, sp.Child("initContainerStatuses"), &o.Spec, o.Spec.InitContainers, false)...)
	errs = append(errs, containerStateTransition(n.Status.EphemeralContainerStatuses, o.Status.EphemeralContainerStatuses, sp.Child("ephemeralContainerStatuses"), &o.Spec, nil, true)...)

	// 4. Resource claims, volume health.
	errs = append(errs, podResourceClaimStatuses(n.Status.ResourceClaimStatuses, n.Spec.ResourceClaims, sp.Child("resourceClaimStatuses"))...)
	errs = append(errs, podExtendedResourceClaimStatus(n.Status.ExtendedResourceClaimStatus, &n.Spec, sp.Child("extendedResourceClaimStatus"))...)
	errs = append(errs, nodeAllocatableResourceClaimStatuses(&n.Status, &n.Spec, sp.Child("nodeAllocatableResourceClaimStatuses"))...)
	if len(n.Status.VolumeHealth) > 0 {
		errs = append(errs, podVolumeHealth(n.Status.VolumeHealth, &n.Spec, sp.Child("volumeHealth"))...)
	}

	// 5. Addresses.
	errs = append(errs, podIPs(n, o)...)
	errs = append(errs, hostIPs(n, o)...)

	// 6. What the runtime reports of each container: its user, its devices' health.
	errs = append(errs, containerStatusUsers(n.Status.ContainerStatuses, sp.Child("containerStatuses"), n.Spec.OS)...)
	errs = append(errs, containerStatusUsers(n.Status.InitContainerStatuses, sp.Child("initContainerStatuses"), n.Spec.OS)...)
	errs = append(errs, containerStatusUsers(n.Status.EphemeralContainerStatuses, sp.Child("ephemeralContainerStatuses"), n.Spec.OS)...)
	errs = append(errs, allocatedResourcesStatus(n.Status.ContainerStatuses, sp.Child("containerStatuses"), n.Spec.Containers, &n.Status)...)
	errs = append(errs, allocatedResourcesStatus(n.Status.InitContainerStatuses, sp.Child("initContainerStatuses"), n.Spec.InitContainers, &n.Status)...)
	for i, cs := range n.Status.EphemeralContainerStatuses {
		if len(cs.AllocatedResourcesStatus) > 0 {
			errs = append(errs, field.Forbidden(sp.Child("ephemeralContainerStatuses").Index(i).Child("allocatedResourcesStatus"), "must not be specified in container status"))
		}
	}
	return errs
}

// fieldImmutableErrorMsg is apimachinery's ValidateImmutableField detail.
const fieldImmutableErrorMsg = "field is immutable"

// podConditions is upstream's validatePodConditions: observed generations non-negative,
// and the type of every condition but PodScheduled, Ready and Initialized a qualified
// name (its path's "Type" capitalized, as upstream's).
func podConditions(cs []corev1.PodCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		if c.ObservedGeneration < 0 {
			errs = append(errs, field.Invalid(p.Index(i).Child("observedGeneration"), c.ObservedGeneration, "must be a non-negative integer"))
		}
		switch c.Type {
		case corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized:
			continue
		}
		for _, msg := range validation.IsQualifiedName(string(c.Type)) {
			errs = append(errs, field.Invalid(p.Index(i).Child("Type"), string(c.Type), msg))
		}
	}
	return errs
}

// containerStateTransition is upstream's ValidateContainerStateTransition,
// ValidateInitContainerStateTransition (specs: the containers of its kind) and, with
// ephemeral, ValidateEphemeralContainerStateTransition, with container restart rules
// on: a container terminated in the stored status may leave that state only when it
// would be restarted for its exit code (every container may when any container has a
// RestartAllContainers rule); an ephemeral container never.
func containerStateTransition(news, olds []corev1.ContainerStatus, p *field.Path, spec *corev1.PodSpec, specs []corev1.Container, ephemeral bool) field.ErrorList {
	var errs field.ErrorList
	if !ephemeral && allContainersCouldRestart(spec) {
		return nil
	}
	for i, old := range olds {
		if old.State.Terminated == nil {
			continue
		}
		for _, cur := range news {
			if cur.Name != old.Name || cur.State.Terminated != nil {
				continue
			}
			allowed := false
			if !ephemeral {
				for _, c := range specs {
					if c.Name == old.Name {
						allowed = containerShouldRestart(&c, spec, old.State.Terminated.ExitCode)
						break
					}
				}
			}
			if !allowed {
				errs = append(errs, field.Forbidden(p.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
			if !ephemeral {
				break
			}
		}
	}
	return errs
}

// allContainersCouldRestart is upstream's AllContainersCouldRestart: some container or
// init container has a RestartAllContainers rule.
func allContainersCouldRestart(spec *corev1.PodSpec) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, r := range c.RestartPolicyRules {
				if r.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// containerShouldRestart is upstream's ContainerShouldRestart: the container's first
// rule matching the exit code (Restart and RestartAllContainers restart), else its
// restart policy, else the pod's (unset: Always).
func containerShouldRestart(c *corev1.Container, spec *corev1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if r, ok := matchingRestartRule(c, exitCode); ok {
			switch r.Action {
			case corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers:
				return true
			}
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	case corev1.RestartPolicyNever:
		return false
	}
	return true
}

// matchingRestartRule is upstream's FindMatchingContainerRestartRule.
func matchingRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		matched := false
		for _, v := range r.ExitCodes.Values {
			if v == exitCode {
				matched = true
			}
		}
		switch r.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if matched {
				return r, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !matched {
				return r, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}

// podResourceClaimStatuses is upstream's validatePodResourceClaimStatuses.
func podResourceClaimStatuses(sts []corev1.PodResourceClaimStatus, claims []corev1.PodResourceClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, st := range sts {
		ip := p.Index(i)
		found := false
		for _, c := range claims {
			if c.Name == st.Name {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, field.Invalid(ip.Child("name"), st.Name, "must match the name of an entry in `spec.resourceClaims`"))
		}
		if names.Has(st.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), st.Name))
		} else {
			names.Insert(st.Name)
		}
		if st.ResourceClaimName != nil {
			for _, msg := range nameIsDNSSubdomain(*st.ResourceClaimName, false) {
				errs = append(errs, field.Invalid(ip.Child("resourceClaimName"), st.ResourceClaimName, msg))
			}
		}
	}
	return errs
}

// podExtendedResourceClaimStatus is upstream's validatePodExtendedResourceClaimStatus.
// Like upstream's, a request name's errors are reported at the status's requestName
// (not the mapping's).
func podExtendedResourceClaimStatus(st *corev1.PodExtendedResourceClaimStatus, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	if st == nil {
		return nil
	}
	containers := map[string]*corev1.Container{}
	for i := range spec.InitContainers {
		containers[spec.InitContainers[i].Name] = &spec.InitContainers[i]
	}
	for i := range spec.Containers {
		containers[spec.Containers[i].Name] = &spec.Containers[i]
	}
	var errs field.ErrorList
	mp := p.Child("requestMappings")
	if len(st.RequestMappings) == 0 {
		errs = append(errs, field.Required(mp, "at least one request mapping is required"))
	}
	type key struct{ container, resource, request string }
	seen := map[key]bool{}
	for i, rm := range st.RequestMappings {
		ip := mp.Index(i)
		if c, ok := containers[rm.ContainerName]; ok {
			if _, ok := c.Resources.Requests[corev1.ResourceName(rm.ResourceName)]; !ok {
				errs = append(errs, field.Invalid(ip.Child("resourceName"), rm.ResourceName, "must match the extended resource name of an entry in spec.initContainers.resources.requests or spec.containers.resources.requests"))
			}
		} else {
			errs = append(errs, field.Invalid(ip.Child("containerName"), rm.ContainerName, "must match the name of an entry in spec.initContainers.name or spec.containers.name"))
		}
		for _, msg := range validation.IsDNS1123Label(rm.RequestName) {
			errs = append(errs, field.Invalid(p.Child("requestName"), rm.RequestName, msg))
		}
		k := key{rm.ContainerName, rm.ResourceName, rm.RequestName}
		if seen[k] {
			errs = append(errs, field.Duplicate(ip.Child("containerName"), rm.ContainerName),
				field.Duplicate(ip.Child("resourceName"), rm.ResourceName),
				field.Duplicate(ip.Child("requestName"), rm.RequestName))
		}
		seen[k] = true
	}
	if st.ResourceClaimName == "" {
		errs = append(errs, field.Required(p.Child("resourceClaimName"), ""))
	} else {
		for _, msg := range nameIsDNSSubdomain(st.ResourceClaimName, false) {
			errs = append(errs, field.Invalid(p.Child("resourceClaimName"), st.ResourceClaimName, msg))
		}
	}
	return errs
}

// nodeAllocatableResourceClaimStatuses is upstream's
// validateNodeAllocatableResourceClaimStatus (DRANodeAllocatableResources is off in
// v1.37: the statuses reach validation only when the stored pod has some).
func nodeAllocatableResourceClaimStatuses(st *corev1.PodStatus, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range st.NodeAllocatableResourceClaimStatuses {
		ip := p.Index(i)
		if s.ResourceClaimName == "" {
			continue
		}
		found := false
		for _, c := range spec.ResourceClaims {
			if c.ResourceClaimName != nil && *c.ResourceClaimName == s.ResourceClaimName {
				found = true
				break
			}
		}
		for _, c := range st.ResourceClaimStatuses {
			if !found && c.ResourceClaimName != nil && *c.ResourceClaimName == s.ResourceClaimName {
				found = true
			}
		}
		if !found {
			errs = append(errs, field.Invalid(ip.Child("resourceClaimName"), s.ResourceClaimName, "no mapping found in pod reference"))
		}
		for j, m := range s.Mapping {
			mp := ip.Child("mapping").Index(j)
			if !nodeAllocatableResourceName(m.Name) {
				errs = append(errs, field.Invalid(mp.Child("name"), m.Name, "must be a node allocatable resource name"))
			}
			if m.Quantity != nil && m.Quantity.Cmp(resource.Quantity{}) < 0 {
				errs = append(errs, field.Invalid(mp.Child("quantity"), m.Quantity.String(), "must be non-negative"))
			}
		}
		for j, o := range s.Overhead {
			op := ip.Child("overhead").Index(j)
			if !nodeAllocatableResourceName(o.Name) {
				errs = append(errs, field.Invalid(op.Child("name"), o.Name, "must be a node allocatable resource name"))
			}
			if o.PerPod == nil && o.PerContainer == nil {
				errs = append(errs, field.Invalid(op, "", "at least one of perPod or perContainer must be set"))
				continue
			}
			if o.PerPod != nil && o.PerPod.Cmp(resource.Quantity{}) < 0 {
				errs = append(errs, field.Invalid(op.Child("perPod"), o.PerPod.String(), "must be non-negative"))
			}
			if o.PerContainer != nil && o.PerContainer.Cmp(resource.Quantity{}) < 0 {
				errs = append(errs, field.Invalid(op.Child("perContainer"), o.PerContainer.String(), "must be non-negative"))
			}
		}
	}
	return errs
}

// nodeAllocatableResourceName is upstream's IsNodeAllocatableResourceName: cpu, memory
// or hugepages.
func nodeAllocatableResourceName(n corev1.ResourceName) bool {
	return n == corev1.ResourceCPU || n == corev1.ResourceMemory || isHugePages(n)
}

// podVolumeHealth is upstream's validatePodVolumeHealth (CSIVolumeHealth is off in
// v1.37: reached only when the stored pod reports volume health).
func podVolumeHealth(vhs []corev1.PodVolumeHealth, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, v := range spec.Volumes {
		names.Insert(v.Name)
	}
	for i, vh := range vhs {
		ip := p.Index(i)
		if vh.Name != "" && !names.Has(vh.Name) {
			errs = append(errs, field.NotFound(ip.Child("name"), vh.Name))
		}
		for j, c := range vh.HealthConditions {
			if c.Reason == "" {
				continue
			}
			for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
				errs = append(errs, field.Invalid(ip.Child("healthConditions").Index(j).Child("reason"), c.Reason, msg))
			}
		}
	}
	return errs
}

// internalIP is how upstream's errors print a pod's or host's address: its internal
// type's field, which has no JSON tag.
type internalIP struct{ IP string }

// shownIPs returns the addresses as upstream's errors print them (nil stays nil: null).
func shownIPs(ips []string, isNil bool) []internalIP {
	if isNil {
		return nil
	}
	out := make([]internalIP, len(ips))
	for i, ip := range ips {
		out[i] = internalIP{ip}
	}
	return out
}

// podIPs is upstream's validatePodIPs: new addresses valid (stored ones may stay), at
// most one per family, and podIP the first of podIPs.
func podIPs(n, o *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "podIPs")
	old := make([]string, len(o.Status.PodIPs))
	for i, ip := range o.Status.PodIPs {
		old[i] = ip.IP
	}
	ips := make([]string, len(n.Status.PodIPs))
	for i, ip := range n.Status.PodIPs {
		errs = append(errs, validation.IsValidIPForLegacyField(p.Index(i), ip.IP, true, old)...)
		ips[i] = ip.IP
	}
	shown := shownIPs(ips, n.Status.PodIPs == nil)
	errs = append(errs, dualStack(p, ips, shown)...)
	hasIP, hasIPs := n.Status.PodIP != "", len(n.Status.PodIPs) > 0
	switch {
	case hasIP != hasIPs:
		errs = append(errs, field.Invalid(p, shown, "podIP and podIPs must either both be set or both be unset"))
	case hasIPs && n.Status.PodIP != n.Status.PodIPs[0].IP:
		errs = append(errs, field.Invalid(p.Index(0).Child("ip"), n.Status.PodIPs[0].IP, "must be equal to `podIP`"))
	}
	return errs
}

// hostIPs is upstream's validateHostIPs: with any hostIPs, hostIP the first of them, new
// addresses valid (stored ones may stay) and at most one per family.
func hostIPs(n, o *corev1.Pod) field.ErrorList {
	if len(n.Status.HostIPs) == 0 {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("status", "hostIPs")
	if n.Status.HostIP != n.Status.HostIPs[0].IP {
		errs = append(errs, field.Invalid(p.Index(0).Child("ip"), n.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
	}
	old := make([]string, len(o.Status.HostIPs))
	for i, ip := range o.Status.HostIPs {
		old[i] = ip.IP
	}
	ips := make([]string, len(n.Status.HostIPs))
	for i, ip := range n.Status.HostIPs {
		errs = append(errs, validation.IsValidIPForLegacyField(p.Index(i), ip.IP, true, old)...)
		ips[i] = ip.IP
	}
	return append(errs, dualStack(p, ips, shownIPs(ips, false))...)
}

// dualStack refuses more than one address, unless two of different families.
func dualStack(p *field.Path, ips []string, shown []internalIP) field.ErrorList {
	if len(ips) <= 1 {
		return nil
	}
	var errs field.ErrorList
	ds, err := netutils.IsDualStackIPStrings(ips)
	if err != nil {
		errs = append(errs, field.InternalError(p, fmt.Errorf("failed to check for dual stack with error:%v", err)))
	}
	if !ds || len(ips) > 2 {
		errs = append(errs, field.Invalid(p, shown, "may specify no more than one IP for each IP family"))
	}
	return errs
}

// containerStatusUsers is upstream's validateContainerStatusUsers: no Linux user for a
// Windows pod; for a Linux one (the default), a UID within uint32 and valid group IDs.
func containerStatusUsers(sts []corev1.ContainerStatus, p *field.Path, os *corev1.PodOS) field.ErrorList {
	var errs field.ErrorList
	osName := corev1.Linux
	if os != nil {
		osName = os.Name
	}
	for i, st := range sts {
		if st.User == nil || st.User.Linux == nil {
			continue
		}
		up := p.Index(i).Child("user").Child("linux")
		switch osName {
		case corev1.Windows:
			errs = append(errs, field.Forbidden(up, "cannot be set for a windows pod"))
		case corev1.Linux:
			u := st.User.Linux
			if u.UID < 0 || u.UID > math.MaxUint32 {
				errs = append(errs, field.Invalid(up.Child("uid"), u.UID, fmt.Sprintf("must be between 0 and %d, inclusive", int64(math.MaxUint32))))
			}
			for _, msg := range validation.IsValidGroupID(u.GID) {
				errs = append(errs, field.Invalid(up.Child("gid"), u.GID, msg))
			}
			for g, gid := range u.SupplementalGroups {
				for _, msg := range validation.IsValidGroupID(gid) {
					errs = append(errs, field.Invalid(up.Child("supplementalGroups").Index(g), gid, msg))
				}
			}
		}
	}
	return errs
}

// allocatedResourcesStatus is upstream's validateContainerStatusAllocatedResourcesStatus:
// each reported resource names one of its container's requests or claims ("claim:<claim>"
// or "claim:<claim>/<request>", or a request the extended resource claim maps), and its
// devices have a known health, a non-empty message of at most 1024 bytes and unique IDs.
// A status of a container the spec does not have is not matched (upstream's issue
// 124915).
func allocatedResourcesStatus(sts []corev1.ContainerStatus, p *field.Path, containers []corev1.Container, st *corev1.PodStatus) field.ErrorList {
	var errs field.ErrorList
	health := sets.New(corev1.ResourceHealthStatusHealthy, corev1.ResourceHealthStatusUnhealthy, corev1.ResourceHealthStatusUnknown)
	for i, cs := range sts {
		for j, ar := range cs.AllocatedResourcesStatus {
			ap := p.Index(i).Child("allocatedResourcesStatus").Index(j)
			var container *corev1.Container
			for k := range containers {
				if containers[k].Name == cs.Name {
					container = &containers[k]
					break
				}
			}
			if container != nil {
				found, detail := false, "must match one of the container's resource requests"
				if strings.HasPrefix(string(ar.Name), "claim:") {
					detail = "must match one of the container's resource claims as 'claim:<claimName>/<requestName>' when container.resources.claims[*].request is set or 'claim:<claimName>' when it is empty"
					for _, c := range container.Resources.Claims {
						if claimStatusName(c.Name, c.Request) == ar.Name {
							found = true
							break
						}
					}
					if !found {
						found = matchesExtendedResourceClaim(ar.Name, container, st.ExtendedResourceClaimStatus)
					}
				} else {
					_, found = container.Resources.Requests[ar.Name]
				}
				if !found {
					errs = append(errs, field.Invalid(ap.Child("name"), ar.Name, detail))
				}
			}
			ids := sets.New[corev1.ResourceID]()
			for k, r := range ar.Resources {
				rp := ap.Child("resources").Index(k)
				if !health.Has(r.Health) {
					errs = append(errs, field.NotSupported(rp.Child("health"), r.Health, sets.List(health)))
				}
				if r.Message != nil {
					if *r.Message == "" {
						errs = append(errs, field.Required(rp.Child("message"), "must be non-empty if specified"))
					} else if len(*r.Message) > corev1.ResourceHealthMessageMaxLength {
						errs = append(errs, field.TooLong(rp.Child("message"), *r.Message, corev1.ResourceHealthMessageMaxLength))
					}
				}
				if ids.Has(r.ResourceID) {
					errs = append(errs, field.Duplicate(rp.Child("resourceID"), r.ResourceID))
				} else {
					ids.Insert(r.ResourceID)
				}
			}
		}
	}
	return errs
}

// claimStatusName is upstream's resourceStatusName.
func claimStatusName(claim, request string) corev1.ResourceName {
	if request == "" {
		return corev1.ResourceName("claim:" + claim)
	}
	return corev1.ResourceName("claim:" + claim + "/" + request)
}

// matchesExtendedResourceClaim is upstream's matchesExtendedResourceClaimStatus: name is
// "claim:<the extended resource claim>/<request>" and the request is mapped to a
// non-zero request of the container.
func matchesExtendedResourceClaim(name corev1.ResourceName, c *corev1.Container, st *corev1.PodExtendedResourceClaimStatus) bool {
	if st == nil {
		return false
	}
	ref, ok := strings.CutPrefix(string(name), "claim:")
	if !ok {
		return false
	}
	claim, request, hasRequest := strings.Cut(ref, "/")
	if claim == "" || !hasRequest || request == "" || claim != st.ResourceClaimName {
		return false
	}
	for _, m := range st.RequestMappings {
		if m.ContainerName != c.Name || m.RequestName != request {
			continue
		}
		if q, ok := c.Resources.Requests[corev1.ResourceName(m.ResourceName)]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

// PodStatusWarnings is upstream's podStatusStrategy.WarningsOnUpdate: a warning for each
// pod IP and host IP not in its canonical form (utilvalidation.GetWarningsForIP).
func PodStatusWarnings(pod *corev1.Pod) []string {
	var ws []string
	for i, ip := range pod.Status.PodIPs {
		ws = append(ws, validation.GetWarningsForIP(field.NewPath("status", "podIPs").Index(i).Child("ip"), ip.IP)...)
	}
	for i, ip := range pod.Status.HostIPs {
		ws = append(ws, validation.GetWarningsForIP(field.NewPath("status", "hostIPs").Index(i).Child("ip"), ip.IP)...)
	}
	return ws
}
