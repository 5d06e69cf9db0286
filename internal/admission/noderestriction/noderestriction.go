package noderestriction

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/auth/node"
)

// Name is the plugin's name.
const Name = admission.NodeRestriction

var (
	podResource      = schema.GroupResource{Resource: "pods"}
	nodeResource     = schema.GroupResource{Resource: "nodes"}
	pvcResource      = schema.GroupResource{Resource: "persistentvolumeclaims"}
	saResource       = schema.GroupResource{Resource: "serviceaccounts"}
	leaseResource    = schema.GroupResource{Group: coordinationv1.GroupName, Resource: "leases"}
	csiNodeResource  = schema.GroupResource{Group: storagev1.GroupName, Resource: "csinodes"}
	sliceResource    = schema.GroupResource{Group: resourcev1.GroupName, Resource: "resourceslices"}
	csrResource      = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}
	pcrResource      = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "podcertificaterequests"}
	podsGVR          = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR         = corev1.SchemeGroupVersion.WithResource("nodes")
	pvcsGVR          = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	pvsGVR           = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	sasGVR           = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	csiDriversGVR    = storagev1.SchemeGroupVersion.WithResource("csidrivers")
	mirrorAnnotation = corev1.MirrorPodAnnotationKey
)

// Plugin is the NodeRestriction admission plugin.
type Plugin struct {
	r admission.Reader
	// Authorizer decides whether a node may ask a token for an audience its pod does not
	// use (upstream's request-serviceaccounts-token-audience check), and a pod certificate
	// for a signer its pod does not mount (request-serviceaccounts-podcertificate-signer);
	// nil refuses them.
	Authorizer auth.Authorizer
}

var (
	_ admission.Handler   = (*Plugin)(nil)
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading pods, nodes, claims, volumes and CSI drivers through r,
// which must read the latest revision.
func New(r admission.Reader) *Plugin { return &Plugin{r: r} }

// Name returns "NodeRestriction".
func (p *Plugin) Name() string { return Name }

// Handles reports true for CREATE, UPDATE and DELETE, as upstream.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Admit checks a node's request in the mutating phase, as upstream's plugin does.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.admit(ctx, a)
}

// Validate checks a node's update of a subresource (pods/status, nodes/status,
// persistentvolumeclaims/status), which the registry admits in the validating phase only.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || a.Subresource == "" {
		return nil
	}
	return p.admit(ctx, a)
}

func (p *Plugin) admit(ctx context.Context, a *admission.Attributes) error {
	nodeName, isNode := node.Identity(a.User)
	if !isNode {
		return nil
	}
	if nodeName == "" {
		return forbidden(a, fmt.Errorf("could not determine node from user %q", a.User.Name))
	}
	switch a.Resource.GroupResource() {
	case podResource:
		switch a.Subresource {
		case "":
			return p.admitPod(ctx, nodeName, a)
		case "status":
			return admitPodStatus(nodeName, a)
		case "eviction":
			return p.admitPodEviction(ctx, nodeName, a)
		default:
			return forbidden(a, fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource))
		}
	case nodeResource:
		return admitNode(nodeName, a)
	case pvcResource:
		if a.Subresource != "status" {
			return forbidden(a, fmt.Errorf("may only update PVC status"))
		}
		return admitPVCStatus(nodeName, a)
	case saResource:
		return p.admitServiceAccount(ctx, nodeName, a)
	case leaseResource:
		return admitLease(nodeName, a)
	case csiNodeResource:
		return admitCSINode(nodeName, a)
	case sliceResource:
		return admitResourceSlice(nodeName, a)
	case csrResource:
		return admitCSR(nodeName, a)
	case pcrResource:
		return p.admitPodCertificateRequest(ctx, nodeName, a)
	}
	return nil
}

// forbidden is upstream's admission.NewForbidden.
func forbidden(a *admission.Attributes, err error) error { return admission.NewForbidden(a, err) }

func unexpectedType(a *admission.Attributes, obj any) error {
	return forbidden(a, fmt.Errorf("unexpected type %T", obj))
}

// getPod reads a pod: a NotFound is returned as is, any other failure as a 403.
func (p *Plugin) getPod(ctx context.Context, a *admission.Attributes, ns, name string) (*corev1.Pod, error) {
	obj, err := p.r.Get(ctx, podsGVR, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, forbidden(a, err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, unexpectedType(a, obj)
	}
	return pod, nil
}

func (p *Plugin) admitPod(ctx context.Context, nodeName string, a *admission.Attributes) error {
	switch a.Operation {
	case admission.Create:
		return p.admitPodCreate(ctx, nodeName, a)
	case admission.Delete:
		pod, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			var err error
			if pod, err = p.getPod(ctx, a, a.Namespace, a.Name); err != nil {
				return err
			}
		}
		if pod.Spec.NodeName != nodeName {
			return forbidden(a, fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", nodeName))
		}
		return nil
	default:
		return forbidden(a, fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, nodeName))
	}
}

func (p *Plugin) admitPodCreate(ctx context.Context, nodeName string, a *admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	// 1. Only mirror pods, bound to the node.
	if _, mirror := pod.Annotations[mirrorAnnotation]; !mirror {
		return forbidden(a, fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", mirrorAnnotation, nodeName))
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", nodeName))
	}
	// 2. One owner reference: the node's own Node, as controller, not blocking deletion.
	switch len(pod.OwnerReferences) {
	case 0:
		return forbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", nodeName))
	case 1:
	default:
		return forbidden(a, fmt.Errorf("node %q can only create pods with a single owner reference set to itself", nodeName))
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != corev1.SchemeGroupVersion.String() || owner.Kind != "Node" || owner.Name != nodeName {
		return forbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", nodeName))
	}
	if owner.Controller == nil || !*owner.Controller {
		return forbidden(a, fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", nodeName))
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return forbidden(a, fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", nodeName))
	}
	obj, err := p.r.Get(ctx, nodesGVR, "", nodeName)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return forbidden(a, fmt.Errorf("error looking up node %s to verify uid: %v", nodeName, err))
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return unexpectedType(a, obj)
	}
	if owner.UID != n.UID {
		return forbidden(a, fmt.Errorf("node %s UID mismatch: expected %s got %s", nodeName, owner.UID, n.UID))
	}
	// 3. No reference to an API object.
	refers, resource, err := apiObjectReference(pod)
	if err != nil {
		return forbidden(a, fmt.Errorf("error checking mirror pod for API references: %w", err))
	}
	if refers {
		return forbidden(a, fmt.Errorf("node %q can not create pods that reference %s", nodeName, resource))
	}
	return nil
}

func admitPodStatus(nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Update {
		return forbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	oldPod, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return unexpectedType(a, a.OldObject)
	}
	if oldPod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", nodeName))
	}
	newPod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	if !labels.Equals(oldPod.Labels, newPod.Labels) {
		return forbidden(a, fmt.Errorf("node %q cannot update labels through pod status", nodeName))
	}
	if !claimStatusesEqual(oldPod.Status.ResourceClaimStatuses, newPod.Status.ResourceClaimStatuses) {
		return forbidden(a, fmt.Errorf("node %q cannot update resource claim statues", nodeName))
	}
	if !extendedClaimStatusEqual(oldPod.Status.ExtendedResourceClaimStatus, newPod.Status.ExtendedResourceClaimStatus) {
		return forbidden(a, fmt.Errorf("node %q cannot update extended resource claim status", nodeName))
	}
	if !apiequality.Semantic.DeepEqual(oldPod.Status.NodeAllocatableResourceClaimStatuses, newPod.Status.NodeAllocatableResourceClaimStatuses) {
		return forbidden(a, fmt.Errorf("node %q cannot update node allocatable resource claim statuses", nodeName))
	}
	return nil
}

func claimStatusesEqual(x, y []corev1.PodResourceClaimStatus) bool {
	return slices.EqualFunc(x, y, func(a, b corev1.PodResourceClaimStatus) bool {
		if a.Name != b.Name || (a.ResourceClaimName == nil) != (b.ResourceClaimName == nil) {
			return false
		}
		return a.ResourceClaimName == nil || *a.ResourceClaimName == *b.ResourceClaimName
	})
}

func extendedClaimStatusEqual(x, y *corev1.PodExtendedResourceClaimStatus) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.ResourceClaimName == y.ResourceClaimName && slices.Equal(x.RequestMappings, y.RequestMappings)
}

func (p *Plugin) admitPodEviction(ctx context.Context, nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return forbidden(a, fmt.Errorf("unexpected operation %s", a.Operation))
	}
	ev, ok := a.Object.(*policyv1.Eviction)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	podName := a.Name
	if podName == "" {
		if ev.Name == "" {
			return forbidden(a, fmt.Errorf("could not determine pod from request data"))
		}
		podName = ev.Name
	}
	pod, err := p.getPod(ctx, a, a.Namespace, podName)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", nodeName))
	}
	return nil
}

func admitPVCStatus(nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Update {
		return forbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	oldPVC, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return unexpectedType(a, a.OldObject)
	}
	newPVC, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	// Only capacity, conditions and the allocation fields (RecoverVolumeExpansionFailure is
	// GA) may change.
	clear := func(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		c = c.DeepCopy()
		c.ResourceVersion = ""
		c.Status.Capacity = nil
		c.Status.Conditions = nil
		c.Status.AllocatedResourceStatuses = nil
		c.Status.AllocatedResources = nil
		c.ManagedFields = nil
		return c
	}
	o, n := clear(oldPVC), clear(newPVC)
	if !apiequality.Semantic.DeepEqual(o, n) {
		return forbidden(a, fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions: %v", nodeName, diff.Diff(o, n)))
	}
	return nil
}

func admitNode(nodeName string, a *admission.Attributes) error {
	if a.Name != nodeName {
		return forbidden(a, fmt.Errorf("node %q is not allowed to modify node %q", nodeName, a.Name))
	}
	switch a.Operation {
	case admission.Create:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return unexpectedType(a, a.Object)
		}
		if n.Spec.ConfigSource != nil {
			return forbidden(a, fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", nodeName))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, nil)); len(bad) > 0 {
			return forbidden(a, fmt.Errorf("node %q is not allowed to set the following labels: %s", nodeName, strings.Join(bad, ", ")))
		}
	case admission.Update:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return unexpectedType(a, a.Object)
		}
		old, ok := a.OldObject.(*corev1.Node)
		if !ok {
			return unexpectedType(a, a.Object)
		}
		if n.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return forbidden(a, fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", nodeName))
		}
		if !apiequality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return forbidden(a, fmt.Errorf("node %q is not allowed to modify taints", nodeName))
		}
		if !apiequality.Semantic.DeepEqual(n.OwnerReferences, old.OwnerReferences) {
			return forbidden(a, fmt.Errorf("node %q is not allowed to modify ownerReferences", nodeName))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, old.Labels)); len(bad) > 0 {
			return forbidden(a, fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", ")))
		}
	}
	return nil
}

// modifiedLabels returns the keys whose values differ between x and y.
func modifiedLabels(x, y map[string]string) map[string]bool {
	out := map[string]bool{}
	for k, v := range x {
		if w, ok := y[k]; !ok || v != w {
			out[k] = true
		}
	}
	for k, v := range y {
		if w, ok := x[k]; !ok || v != w {
			out[k] = true
		}
	}
	return out
}

// kubeletLabels are the kubernetes.io labels a kubelet may set on its Node (k8s.io/kubelet's
// well-known labels), besides the [*.]kubelet.kubernetes.io and [*.]node.kubernetes.io
// namespaces.
var kubeletLabels = map[string]bool{
	corev1.LabelHostname: true, corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true,
	corev1.LabelFailureDomainBetaZone: true, corev1.LabelFailureDomainBetaRegion: true,
	corev1.LabelInstanceType: true, corev1.LabelInstanceTypeStable: true, corev1.LabelOSStable: true,
	corev1.LabelArchStable: true, "beta.kubernetes.io/os": true, "beta.kubernetes.io/arch": true,
}

func labelNamespace(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}

func inNamespace(ns, domain string) bool { return ns == domain || strings.HasSuffix(ns, "."+domain) }

func isKubeletLabel(key string) bool {
	ns := labelNamespace(key)
	return kubeletLabels[key] || inNamespace(ns, corev1.LabelNamespaceSuffixKubelet) || inNamespace(ns, corev1.LabelNamespaceSuffixNode)
}

// forbiddenLabels returns, sorted, the modified labels a node may not set: those under
// node-restriction.kubernetes.io/ and the kubernetes.io and k8s.io ones that are not the
// kubelet's.
func forbiddenLabels(modified map[string]bool) []string {
	var out []string
	for key := range modified {
		ns := labelNamespace(key)
		restricted := inNamespace(ns, corev1.LabelNamespaceNodeRestriction)
		k8s := inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")
		if restricted || (k8s && !isKubeletLabel(key)) {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

func (p *Plugin) admitServiceAccount(ctx context.Context, nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "token" {
		return nil
	}
	tr, ok := a.Object.(*authenticationv1.TokenRequest)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	// 1. Bound to a pod, with its UID.
	r := tr.Spec.BoundObjectRef
	if r == nil || r.APIVersion != "v1" || r.Kind != "Pod" || r.Name == "" {
		return forbidden(a, fmt.Errorf("node requested token not bound to a pod"))
	}
	if r.UID == "" {
		return forbidden(a, fmt.Errorf("node requested token with a pod binding without a uid"))
	}
	// 2. That pod, bound to this node.
	pod, err := p.getPod(ctx, a, a.Namespace, r.Name)
	if err != nil {
		return err
	}
	if r.UID != pod.UID {
		return forbidden(a, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", r.UID))
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node requested token bound to a pod scheduled on a different node"))
	}
	// 3. For an audience the pod uses (ServiceAccountNodeAudienceRestriction, on by default).
	if err := p.checkAudience(ctx, tr, pod, a); err != nil {
		return forbidden(a, err)
	}
	return nil
}

func (p *Plugin) checkAudience(ctx context.Context, tr *authenticationv1.TokenRequest, pod *corev1.Pod, a *admission.Attributes) error {
	audience := ""
	switch len(tr.Spec.Audiences) {
	case 0:
	case 1:
		audience = tr.Spec.Audiences[0]
	default:
		return fmt.Errorf("node may only request 0 or 1 audiences")
	}
	found, err := p.podUsesAudience(ctx, pod, audience)
	if err != nil {
		return fmt.Errorf("error validating audience %q: %w", audience, err)
	}
	if found {
		return nil
	}
	if p.Authorizer != nil {
		d, _, err := p.Authorizer.Authorize(ctx, auth.Attributes{User: a.User, Verb: "request-serviceaccounts-token-audience",
			APIGroup: a.Resource.Group, APIVersion: a.Resource.Version, Resource: audience, Namespace: a.Namespace, Name: a.Name, ResourceRequest: true})
		if d == auth.Allow {
			return nil
		}
		if err != nil {
			return fmt.Errorf("error authorizing %s to request tokens for audience %q: %w", a.User.Name, audience, err)
		}
	}
	return fmt.Errorf("%s is not authorized to request tokens for audience %q", a.User.Name, audience)
}

// podUsesAudience reports whether a pod's projected service account tokens or the CSI
// drivers of its volumes ask for audience. (In-tree volumes migrated to CSI are not
// translated: quotad has none of the in-tree drivers' translations.)
func (p *Plugin) podUsesAudience(ctx context.Context, pod *corev1.Pod, audience string) (bool, error) {
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil && s.ServiceAccountToken.Audience == audience {
					return true, nil
				}
			}
		}
		var driver string
		var err error
		switch {
		case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
			driver, err = p.csiDriverOfClaim(ctx, pod.Namespace, ephemeral.VolumeClaimName(pod, v))
		case v.PersistentVolumeClaim != nil:
			driver, err = p.csiDriverOfClaim(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		case v.CSI != nil:
			driver = v.CSI.Driver
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if driver == "" {
			continue
		}
		obj, err := p.r.Get(ctx, csiDriversGVR, "", driver)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d, ok := obj.(*storagev1.CSIDriver); ok {
			for _, t := range d.Spec.TokenRequests {
				if t.Audience == audience {
					return true, nil
				}
			}
		}
	}
	return false, utilerrors.NewAggregate(errs)
}

func (p *Plugin) csiDriverOfClaim(ctx context.Context, ns, claim string) (string, error) {
	obj, err := p.r.Get(ctx, pvcsGVR, ns, claim)
	if err != nil {
		return "", err
	}
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return "", fmt.Errorf("unexpected type %T", obj)
	}
	obj, err = p.r.Get(ctx, pvsGVR, "", pvc.Spec.VolumeName)
	if err != nil {
		return "", err
	}
	if pv, ok := obj.(*corev1.PersistentVolume); ok && pv.Spec.CSI != nil {
		return pv.Spec.CSI.Driver, nil
	}
	return "", nil
}

func admitLease(nodeName string, a *admission.Attributes) error {
	if a.Namespace != node.LeaseNamespace {
		return forbidden(a, fmt.Errorf("can only access leases in the %q system namespace", node.LeaseNamespace))
	}
	name := a.Name
	if a.Operation == admission.Create {
		l, ok := a.Object.(*coordinationv1.Lease)
		if !ok {
			return unexpectedType(a, a.Object)
		}
		name = l.Name
	}
	if name != nodeName {
		return forbidden(a, fmt.Errorf("can only access node lease with the same name as the requesting node"))
	}
	return nil
}

func admitCSINode(nodeName string, a *admission.Attributes) error {
	name := a.Name
	if a.Operation == admission.Create {
		m, err := meta.Accessor(a.Object)
		if err != nil {
			return forbidden(a, fmt.Errorf("unable to access the object name"))
		}
		name = m.GetName()
	}
	if name != nodeName {
		return forbidden(a, fmt.Errorf("can only access CSINode with the same name as the requesting node"))
	}
	if a.Subresource == "status" {
		return forbidden(a, fmt.Errorf("CSIVolumeHealth feature gate is disabled"))
	}
	return nil
}

func admitResourceSlice(nodeName string, a *admission.Attributes) error {
	switch a.Operation {
	case admission.Create:
		s, ok := a.Object.(*resourcev1.ResourceSlice)
		if !ok {
			return unexpectedType(a, a.Object)
		}
		if s.Spec.NodeName == nil || *s.Spec.NodeName != nodeName {
			return forbidden(a, errors.New("can only create ResourceSlice with the same NodeName as the requesting node"))
		}
	case admission.Delete:
		s, ok := a.OldObject.(*resourcev1.ResourceSlice)
		if !ok {
			return unexpectedType(a, a.OldObject)
		}
		if s.Spec.NodeName == nil || *s.Spec.NodeName != nodeName {
			return forbidden(a, errors.New("can only delete ResourceSlice with the same NodeName as the requesting node"))
		}
	}
	return nil
}

// admitCSR lets a node ask kubelet client and serving certificates only for itself.
func admitCSR(nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName && csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return nil
	}
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		return forbidden(a, fmt.Errorf("unable to parse csr: %w", err))
	}
	if req.Subject.CommonName != fmt.Sprintf("system:node:%s", nodeName) {
		return forbidden(a, fmt.Errorf("can only create a node CSR with CN=system:node:%s", nodeName))
	}
	return nil
}

// parseCSR is upstream's certificates.ParseCSR.
func parseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
