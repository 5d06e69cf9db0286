package table

import (
	"bytes"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

const (
	// loadBalancerWidth is where upstream clips non-wide load-balancer
	// addresses; the server always prints wide, so it never clips.
	loadBalancerWidth = 16
	// labelNodeRolePrefix and nodeLabelRole are the node role labels.
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	nodeLabelRole       = "kubernetes.io/role"
	// nodeUnreachablePodReason is the pod status reason set for pods on a
	// lost node (k8s.io/kubernetes/pkg/util/node.NodeUnreachablePodReason).
	nodeUnreachablePodReason = "NodeLost"
	// betaStorageClassAnnotation is read before spec.storageClassName.
	betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
)

// ---- Pod ----

func PodPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Pod"), func() *corev1.Pod { return &corev1.Pod{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
				{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
				{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
				ageColumn(),
				{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
				{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
				{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
				{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
			}
		}, podCells)
}

// podCells follows upstream printPod: READY counts ready containers
// (restartable init containers included), STATUS is the phase refined by the
// status reason, init/containers states, and deletion.
func podCells(pod *corev1.Pod, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
	restarts := 0
	restartableInitRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestart, lastRestartableInitRestart time.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	var conditions []metav1.TableRowCondition
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}

	// 1. Init containers: the first one not done decides the status.
	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		cs := pod.Status.InitContainerStatuses[i]
		restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil && lastRestart.Before(t.FinishedAt.Time) {
			lastRestart = t.FinishedAt.Time
		}
		restartable := isRestartableInitContainer(initContainers[cs.Name])
		if restartable {
			restartableInitRestarts += int(cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil && lastRestartableInitRestart.Before(t.FinishedAt.Time) {
				lastRestartableInitRestart = t.FinishedAt.Time
			}
		}
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case restartable && cs.Started != nil && *cs.Started:
			if cs.Ready {
				readyContainers++
			}
			continue
		case cs.State.Terminated != nil:
			if cs.State.Terminated.Reason == "" {
				if cs.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Init:Signal:%d", cs.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("Init:ExitCode:%d", cs.State.Terminated.ExitCode)
				}
			} else {
				reason = "Init:" + cs.State.Terminated.Reason
			}
			initializing = true
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + cs.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	// 2. Regular containers, last to first: the first listed wins.
	if !initializing || podConditionTrue(pod.Status.Conditions, corev1.PodInitialized) {
		restarts = restartableInitRestarts
		lastRestart = lastRestartableInitRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := pod.Status.ContainerStatuses[i]
			restarts += int(cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil && lastRestart.Before(t.FinishedAt.Time) {
				lastRestart = t.FinishedAt.Time
			}
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
				reason = cs.State.Terminated.Reason
			case cs.State.Terminated != nil:
				if cs.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Signal:%d", cs.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", cs.State.Terminated.ExitCode)
				}
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// Back to Running if a container still runs.
		if reason == "Completed" && hasRunning {
			if podConditionTrue(pod.Status.Conditions, corev1.PodReady) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	// 3. Deletion.
	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
		reason = "Terminating"
	}

	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, since(metav1.NewTime(lastRestart), now))
	}

	// 4. Wide cells.
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if podIP == "" {
		podIP = "<none>"
	}
	nodeName := pod.Spec.NodeName
	if nodeName == "" {
		nodeName = "<none>"
	}
	nominatedNodeName := pod.Status.NominatedNodeName
	if nominatedNodeName == "" {
		nominatedNodeName = "<none>"
	}
	readinessGates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		trueConditions := 0
		for _, gate := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == gate.ConditionType {
					if c.Status == corev1.ConditionTrue {
						trueConditions++
					}
					break
				}
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
	}

	return []interface{}{
		pod.Name, fmt.Sprintf("%d/%d", readyContainers, totalContainers), reason, restartsStr, since(pod.CreationTimestamp, now),
		podIP, nodeName, nominatedNodeName, readinessGates,
	}, conditions
}

func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podConditionTrue reports whether the first condition of type t is True.
func podConditionTrue(conds []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ---- Service ----

func ServicePrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Service"), func() *corev1.Service { return &corev1.Service{} },
		func() []metav1.TableColumnDefinition {
			d := corev1.ServiceSpec{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Type", Type: "string", Description: d["type"]},
				{Name: "Cluster-IP", Type: "string", Description: d["clusterIP"]},
				{Name: "External-IP", Type: "string", Description: d["externalIPs"]},
				{Name: "Port(s)", Type: "string", Description: d["ports"]},
				ageColumn(),
				{Name: "Selector", Type: "string", Priority: 1, Description: d["selector"]},
			}
		},
		func(svc *corev1.Service, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			// v1 → internal conversion fills clusterIPs from clusterIP.
			internalIP := "<none>"
			if len(svc.Spec.ClusterIPs) > 0 {
				internalIP = svc.Spec.ClusterIPs[0]
			} else if svc.Spec.ClusterIP != "" {
				internalIP = svc.Spec.ClusterIP
			}
			ports := servicePorts(svc.Spec.Ports)
			if ports == "" {
				ports = "<none>"
			}
			return []interface{}{
				svc.Name, string(svc.Spec.Type), internalIP, serviceExternalIP(svc, true), ports, since(svc.CreationTimestamp, now),
				labels.FormatLabels(svc.Spec.Selector),
			}, nil
		})
}

func serviceExternalIP(svc *corev1.Service, wide bool) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lbIPs := loadBalancerStatus(svc.Status.LoadBalancer, wide)
		if len(svc.Spec.ExternalIPs) > 0 {
			var results []string
			if len(lbIPs) > 0 {
				results = append(results, strings.Split(lbIPs, ",")...)
			}
			results = append(results, svc.Spec.ExternalIPs...)
			return strings.Join(results, ",")
		}
		if len(lbIPs) > 0 {
			return lbIPs
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

func loadBalancerStatus(s corev1.LoadBalancerStatus, wide bool) string {
	result := sets.New[string]()
	for _, ing := range s.Ingress {
		if ing.IP != "" {
			result.Insert(ing.IP)
		} else if ing.Hostname != "" {
			result.Insert(ing.Hostname)
		}
	}
	r := strings.Join(sets.List(result), ",")
	if !wide && len(r) > loadBalancerWidth {
		r = r[0:(loadBalancerWidth-3)] + "..."
	}
	return r
}

func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

// ---- Namespace, Secret, ConfigMap, ServiceAccount ----

func NamespacePrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Namespace"), func() *corev1.Namespace { return &corev1.Namespace{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Status", Type: "string", Description: "The status of the namespace"},
				ageColumn(),
			}
		},
		func(ns *corev1.Namespace, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{ns.Name, string(ns.Status.Phase), since(ns.CreationTimestamp, now)}, nil
		})
}

func SecretPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Secret"), func() *corev1.Secret { return &corev1.Secret{} },
		func() []metav1.TableColumnDefinition {
			d := corev1.Secret{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Type", Type: "string", Description: d["type"]},
				{Name: "Data", Type: "string", Description: d["data"]},
				ageColumn(),
			}
		},
		func(s *corev1.Secret, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{s.Name, string(s.Type), int64(len(s.Data)), since(s.CreationTimestamp, now)}, nil
		})
}

func ConfigMapPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("ConfigMap"), func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
				ageColumn(),
			}
		},
		func(cm *corev1.ConfigMap, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), since(cm.CreationTimestamp, now)}, nil
		})
}

// ServiceAccountPrinter prints NAME AGE (1.37 dropped SECRETS).
func ServiceAccountPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("ServiceAccount"), func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				ageColumn(),
			}
		},
		func(sa *corev1.ServiceAccount, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{sa.Name, since(sa.CreationTimestamp, now)}, nil
		})
}

// ---- Node ----

func NodePrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Node"), func() *corev1.Node { return &corev1.Node{} },
		func() []metav1.TableColumnDefinition {
			info := corev1.NodeSystemInfo{}.SwaggerDoc()
			addresses := corev1.NodeStatus{}.SwaggerDoc()["addresses"]
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Status", Type: "string", Description: "The status of the node"},
				{Name: "Roles", Type: "string", Description: "The roles of the node"},
				ageColumn(),
				{Name: "Version", Type: "string", Description: info["kubeletVersion"]},
				{Name: "Internal-IP", Type: "string", Priority: 1, Description: addresses},
				{Name: "External-IP", Type: "string", Priority: 1, Description: addresses},
				{Name: "OS-Image", Type: "string", Priority: 1, Description: info["osImage"]},
				{Name: "Kernel-Version", Type: "string", Priority: 1, Description: info["kernelVersion"]},
				{Name: "Container-Runtime", Type: "string", Priority: 1, Description: info["containerRuntimeVersion"]},
			}
		},
		func(n *corev1.Node, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			var ready *corev1.NodeCondition
			for i := range n.Status.Conditions {
				if n.Status.Conditions[i].Type == corev1.NodeReady {
					ready = &n.Status.Conditions[i] // the last one wins, as upstream's map
				}
			}
			var status []string
			switch {
			case ready == nil:
				status = append(status, "Unknown")
			case ready.Status == corev1.ConditionTrue:
				status = append(status, string(corev1.NodeReady))
			default:
				status = append(status, "Not"+string(corev1.NodeReady))
			}
			if n.Spec.Unschedulable {
				status = append(status, "SchedulingDisabled")
			}
			roles := strings.Join(nodeRoles(n), ",")
			if roles == "" {
				roles = "<none>"
			}
			osImage, kernel, runtimeVersion := n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion, n.Status.NodeInfo.ContainerRuntimeVersion
			if osImage == "" {
				osImage = "<unknown>"
			}
			if kernel == "" {
				kernel = "<unknown>"
			}
			if runtimeVersion == "" {
				runtimeVersion = "<unknown>"
			}
			if arch := n.Status.NodeInfo.Architecture; arch != "" {
				kernel += " (" + arch + ")"
			}
			return []interface{}{
				n.Name, strings.Join(status, ","), roles, since(n.CreationTimestamp, now), n.Status.NodeInfo.KubeletVersion,
				nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP), osImage, kernel, runtimeVersion,
			}, nil
		})
}

func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// nodeRoles reads node-role.kubernetes.io/<role> and kubernetes.io/role=<role>.
func nodeRoles(n *corev1.Node) []string {
	roles := sets.New[string]()
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				roles.Insert(role)
			}
		case k == nodeLabelRole && v != "":
			roles.Insert(v)
		}
	}
	return sets.List(roles)
}

// ---- PersistentVolumeClaim, PersistentVolume ----

func PVCPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} },
		func() []metav1.TableColumnDefinition {
			st := corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
			sp := corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Status", Type: "string", Description: st["phase"]},
				{Name: "Volume", Type: "string", Description: sp["volumeName"]},
				{Name: "Capacity", Type: "string", Description: st["capacity"]},
				{Name: "Access Modes", Type: "string", Description: st["accessModes"]},
				{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
				{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
				ageColumn(),
				{Name: "VolumeMode", Type: "string", Priority: 1, Description: sp["volumeMode"]},
			}
		},
		func(pvc *corev1.PersistentVolumeClaim, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			phase := string(pvc.Status.Phase)
			if pvc.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			vac := "<unset>"
			if pvc.Spec.VolumeAttributesClassName != nil {
				vac = *pvc.Spec.VolumeAttributesClassName
			}
			capacity, accessModes := "", ""
			if pvc.Spec.VolumeName != "" {
				accessModes = accessModesString(pvc.Status.AccessModes)
				q := pvc.Status.Capacity[corev1.ResourceStorage]
				capacity = q.String()
			}
			volumeMode := "<unset>"
			if pvc.Spec.VolumeMode != nil {
				volumeMode = string(*pvc.Spec.VolumeMode)
			}
			class, found := pvc.Annotations[betaStorageClassAnnotation]
			if !found && pvc.Spec.StorageClassName != nil {
				class = *pvc.Spec.StorageClassName
			}
			return []interface{}{pvc.Name, phase, pvc.Spec.VolumeName, capacity, accessModes, class, vac, since(pvc.CreationTimestamp, now), volumeMode}, nil
		})
}

func PVPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("PersistentVolume"), func() *corev1.PersistentVolume { return &corev1.PersistentVolume{} },
		func() []metav1.TableColumnDefinition {
			sp := corev1.PersistentVolumeSpec{}.SwaggerDoc()
			st := corev1.PersistentVolumeStatus{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Capacity", Type: "string", Description: sp["capacity"]},
				{Name: "Access Modes", Type: "string", Description: sp["accessModes"]},
				{Name: "Reclaim Policy", Type: "string", Description: sp["persistentVolumeReclaimPolicy"]},
				{Name: "Status", Type: "string", Description: st["phase"]},
				{Name: "Claim", Type: "string", Description: sp["claimRef"]},
				{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
				{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
				{Name: "Reason", Type: "string", Description: st["reason"]},
				ageColumn(),
				{Name: "VolumeMode", Type: "string", Priority: 1, Description: sp["volumeMode"]},
			}
		},
		func(pv *corev1.PersistentVolume, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			claim := ""
			if pv.Spec.ClaimRef != nil {
				claim = pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
			}
			q := pv.Spec.Capacity[corev1.ResourceStorage]
			phase := string(pv.Status.Phase)
			if pv.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			volumeMode := "<unset>"
			if pv.Spec.VolumeMode != nil {
				volumeMode = string(*pv.Spec.VolumeMode)
			}
			vac := "<unset>"
			if pv.Spec.VolumeAttributesClassName != nil {
				vac = *pv.Spec.VolumeAttributesClassName
			}
			class, found := pv.Annotations[betaStorageClassAnnotation]
			if !found {
				class = pv.Spec.StorageClassName
			}
			return []interface{}{pv.Name, q.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
				phase, claim, class, vac, pv.Status.Reason, since(pv.CreationTimestamp, now), volumeMode}, nil
		})
}

// accessModesString renders access modes in the fixed order RWO,ROX,RWX,RWOP.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	has := sets.New(modes...)
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if has.Has(m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// ---- ReplicationController ----

func ReplicationControllerPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("ReplicationController"), func() *corev1.ReplicationController { return &corev1.ReplicationController{} },
		func() []metav1.TableColumnDefinition {
			return replicatedColumns(corev1.ReplicationControllerSpec{}.SwaggerDoc(), corev1.ReplicationControllerStatus{}.SwaggerDoc())
		},
		func(rc *corev1.ReplicationController, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return replicatedRow(&rc.ObjectMeta, rc.Spec.Replicas, rc.Status.Replicas, rc.Status.ReadyReplicas,
				rc.Spec.Template, labels.FormatLabels(rc.Spec.Selector), now), nil
		})
}

// replicatedColumns are the columns of ReplicaSets and ReplicationControllers, described
// from their spec's and status's documentation.
func replicatedColumns(spec, status map[string]string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Desired", Type: "integer", Description: spec["replicas"]},
		{Name: "Current", Type: "integer", Description: status["replicas"]},
		{Name: "Ready", Type: "integer", Description: status["readyReplicas"]},
		ageColumn(),
		containersColumn(),
		imagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: spec["selector"]},
	}
}

// replicatedRow is the row of a ReplicaSet or ReplicationController (template may be nil).
func replicatedRow(m *metav1.ObjectMeta, desired *int32, current, ready int32, template *corev1.PodTemplateSpec, selector string, now time.Time) []interface{} {
	var containers []corev1.Container
	if template != nil {
		containers = template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []interface{}{m.Name, int64(replicas(desired)), int64(current), int64(ready), since(m.CreationTimestamp, now), names, images, selector}
}

// replicas is spec.replicas as defaulted by the v1 API (nil means 1).
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// containerCells lays out container names and images, comma separated.
func containerCells(containers []corev1.Container) (names string, images string) {
	var n, i bytes.Buffer
	for idx, c := range containers {
		n.WriteString(c.Name)
		i.WriteString(c.Image)
		if idx != len(containers)-1 {
			n.WriteString(",")
			i.WriteString(",")
		}
	}
	return n.String(), i.String()
}

// ---- ResourceQuota ----

// Column texts of the ResourceQuota table.
const (
	quotaRequestDescription = "Request represents a minimum amount of cpu/memory that a container may consume."
	quotaLimitDescription   = "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."
)

// ResourceQuotaPrinter prints NAME REQUEST LIMIT AGE, as kube-apiserver 1.33 and later
// (1.32 and earlier printed AGE second).
func ResourceQuotaPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("ResourceQuota"), func() *corev1.ResourceQuota { return &corev1.ResourceQuota{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Request", Type: "string", Description: quotaRequestDescription},
				{Name: "Limit", Type: "string", Description: quotaLimitDescription},
				ageColumn(),
			}
		},
		func(q *corev1.ResourceQuota, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			request, limit := quotaCells(q)
			return []interface{}{q.Name, request, limit, since(q.CreationTimestamp, now)}, nil
		})
}

// quotaCells renders status.hard, names sorted, as "<name>: <used>/<hard>"
// joined by ", "; names whose first "."-separated piece is "limits" go to the
// Limit cell, all others to the Request cell. A missing used value is 0.
func quotaCells(q *corev1.ResourceQuota) (request, limit string) {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var req, lim []string
	for _, name := range names {
		used := q.Status.Used[corev1.ResourceName(name)]
		hard := q.Status.Hard[corev1.ResourceName(name)]
		entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if pieces := strings.Split(name, "."); len(pieces) > 1 && pieces[0] == "limits" {
			lim = append(lim, entry)
		} else {
			req = append(req, entry)
		}
	}
	return strings.Join(req, ", "), strings.Join(lim, ", ")
}

// ---- Event ----

func EventPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Event"), func() *corev1.Event { return &corev1.Event{} },
		func() []metav1.TableColumnDefinition {
			d := corev1.Event{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				{Name: "Last Seen", Type: "string", Description: d["lastTimestamp"]},
				{Name: "Type", Type: "string", Description: d["type"]},
				{Name: "Reason", Type: "string", Description: d["reason"]},
				{Name: "Object", Type: "string", Description: d["involvedObject"]},
				{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
				{Name: "Source", Type: "string", Priority: 1, Description: d["source"]},
				{Name: "Message", Type: "string", Description: d["message"]},
				{Name: "First Seen", Type: "string", Priority: 1, Description: d["firstTimestamp"]},
				{Name: "Count", Type: "string", Priority: 1, Description: d["count"]},
				{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: objectMetaDocs()["name"]},
			}
		},
		func(e *corev1.Event, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			first := since(e.FirstTimestamp, now)
			if e.FirstTimestamp.IsZero() {
				first = sinceMicro(e.EventTime, now)
			}
			last := since(e.LastTimestamp, now)
			if e.LastTimestamp.IsZero() {
				last = first
			}
			count := e.Count
			if e.Series != nil {
				last = sinceMicro(e.Series.LastObservedTime, now)
				count = e.Series.Count
			} else if count == 0 {
				count = 1 // singleton events of the new API have no count
			}
			target := strings.ToLower(e.InvolvedObject.Kind)
			if e.InvolvedObject.Name != "" {
				target += "/" + e.InvolvedObject.Name
			}
			return []interface{}{
				last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
				eventSource(e), strings.TrimSpace(e.Message), first, int64(count), e.Name,
			}, nil
		})
}

// eventSource is "component[, host]", falling back to the reporting fields.
func eventSource(e *corev1.Event) string {
	component, host := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if host == "" {
		host = e.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

// ---- Endpoints ----

func EndpointsPrinter() Printer {
	return typedPrinter(corev1.SchemeGroupVersion.WithKind("Endpoints"), func() *corev1.Endpoints { return &corev1.Endpoints{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
				ageColumn(),
			}
		},
		func(ep *corev1.Endpoints, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{ep.Name, formatEndpoints(ep), since(ep.CreationTimestamp, now)}, nil
		})
}

// formatEndpoints lists up to three addresses (host:port for each port) and
// "+ N more..." for the rest.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more := false
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			// Headless services may have no ports.
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}
