package node

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/auth"
)

// Upstream's names for node identities.
const (
	// UserPrefix starts a node's user name: system:node:<name>.
	UserPrefix = "system:node:"
	// Group is the group every node's credentials are in.
	Group = "system:nodes"
	// LeaseNamespace holds the nodes' heartbeat Leases.
	LeaseNamespace = "kube-node-lease"
)

// Identity returns the node a user is, as upstream's default node identifier: a user named
// system:node:<name> in group system:nodes is node <name> (isNode with an empty name when
// nothing follows the prefix); anyone else is not a node.
func Identity(u auth.User) (name string, isNode bool) {
	if !strings.HasPrefix(u.Name, UserPrefix) || !u.InGroup(Group) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, UserPrefix), true
}

// Lookup reads stored objects at the latest revision (typed objects, read-only).
type Lookup interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	// List returns every object of a resource in a namespace.
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]runtime.Object, error)
}

// The resources whose objects the Lookup reads.
var (
	podsGVR         = corev1.SchemeGroupVersion.WithResource("pods")
	pvsGVR          = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	attachmentsGVR  = storagev1.SchemeGroupVersion.WithResource("volumeattachments")
	slicesGVR       = resourcev1.SchemeGroupVersion.WithResource("resourceslices")
	pcrsGVR         = certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests")
	sliceNodeField  = "spec.nodeName"
	podNodeField    = "spec.nodeName"
	pcrNodeField    = "spec.nodeName"
	coreGroup       = ""
	resourceGroup   = resourcev1.GroupName
	storageGroup    = storagev1.GroupName
	certsGroup      = certificatesv1.GroupName
	coordination    = "coordination.k8s.io"
	allowed         = auth.Allow
	noOpinion       = auth.NoOpinion
	notRelatedBlank = "no relationship found between node '%s' and this object"
)

// Authorizer is the Node authorizer (upstream's NodeAuthorizer with the feature gates of
// v1.37 at their defaults: ServiceAccount reads and PodCertificateRequests on, CSINode
// status off).
type Authorizer struct {
	graph  *Graph
	lookup Lookup
	rules  []rbacv1.PolicyRule
}

var _ auth.Authorizer = (*Authorizer)(nil)

// New returns the authorizer answering from g, asking lookup (when not nil) before refusing
// what g does not relate, and allowing the rest of what rules (upstream's NodeRules) allow.
func New(g *Graph, lookup Lookup, rules []rbacv1.PolicyRule) *Authorizer {
	return &Authorizer{graph: g, lookup: lookup, rules: rules}
}

// Authorize decides a node's request; every other user's is NoOpinion.
func (z *Authorizer) Authorize(ctx context.Context, a auth.Attributes) (auth.Decision, string, error) {
	node, isNode := Identity(a.User)
	if !isNode {
		return noOpinion, "", nil
	}
	if node == "" {
		return noOpinion, fmt.Sprintf("unknown node for user %q", a.User.Name), nil
	}
	if a.ResourceRequest {
		switch {
		case a.APIGroup == coreGroup && a.Resource == "secrets":
			return z.readNamespaced(ctx, node, kindSecret, &a)
		case a.APIGroup == coreGroup && a.Resource == "configmaps":
			return z.readNamespaced(ctx, node, kindConfigMap, &a)
		case a.APIGroup == coreGroup && a.Resource == "persistentvolumeclaims":
			if a.Subresource == "status" {
				return z.statusUpdate(ctx, node, kindPVC, &a)
			}
			return z.get(ctx, node, kindPVC, &a)
		case a.APIGroup == coreGroup && a.Resource == "persistentvolumes":
			return z.get(ctx, node, kindPV, &a)
		case a.APIGroup == resourceGroup && a.Resource == "resourceclaims":
			return z.get(ctx, node, kindResourceClaim, &a)
		case a.APIGroup == storageGroup && a.Resource == "volumeattachments":
			return z.get(ctx, node, kindVolumeAttachment, &a)
		case a.APIGroup == coreGroup && a.Resource == "serviceaccounts":
			return z.serviceAccount(ctx, node, &a)
		case a.APIGroup == coordination && a.Resource == "leases":
			return lease(node, &a)
		case a.APIGroup == storageGroup && a.Resource == "csinodes":
			return csiNode(node, &a)
		case a.APIGroup == resourceGroup && a.Resource == "resourceslices":
			return z.resourceSlice(ctx, node, &a)
		case a.APIGroup == coreGroup && a.Resource == "nodes":
			return nodeObject(node, &a)
		case a.APIGroup == coreGroup && a.Resource == "pods":
			return z.pod(ctx, node, &a)
		case a.APIGroup == certsGroup && a.Resource == "podcertificaterequests":
			return z.podCertificateRequest(ctx, node, &a)
		}
	}
	// Everything else: upstream's static node rules.
	if auth.RulesAllow(z.rules, &a) {
		return allowed, "", nil
	}
	return noOpinion, "", nil
}

// statusUpdate allows update and patch of the status of a related object.
func (z *Authorizer) statusUpdate(ctx context.Context, node string, k kind, a *auth.Attributes) (auth.Decision, string, error) {
	if a.Verb != "update" && a.Verb != "patch" {
		return noOpinion, "can only get/update/patch this type", nil
	}
	return z.related(ctx, node, k, a)
}

// get allows get of a related object.
func (z *Authorizer) get(ctx context.Context, node string, k kind, a *auth.Attributes) (auth.Decision, string, error) {
	if a.Verb != "get" {
		return noOpinion, "can only get individual resources of this type", nil
	}
	if a.Subresource != "" {
		return noOpinion, "cannot get subresource", nil
	}
	return z.related(ctx, node, k, a)
}

// readNamespaced allows get, list and watch of one related namespaced object (a list or
// watch names it with a metadata.name field selector).
func (z *Authorizer) readNamespaced(ctx context.Context, node string, k kind, a *auth.Attributes) (auth.Decision, string, error) {
	switch a.Verb {
	case "get", "list", "watch":
	default:
		return noOpinion, "can only read resources of this type", nil
	}
	if a.Subresource != "" {
		return noOpinion, "cannot read subresource", nil
	}
	if a.Namespace == "" {
		return noOpinion, "can only read namespaced object of this type", nil
	}
	return z.related(ctx, node, k, a)
}

// related allows a request for the named object when node reaches it.
func (z *Authorizer) related(ctx context.Context, node string, k kind, a *auth.Attributes) (auth.Decision, string, error) {
	if a.Name == "" {
		return noOpinion, "No Object name found", nil
	}
	if z.reaches(ctx, node, ref{kind: k, namespace: a.Namespace, name: a.Name}) {
		return allowed, "", nil
	}
	return noOpinion, fmt.Sprintf(notRelatedBlank, node), nil
}

// reaches asks the graph, then (when it says no) the stored objects.
func (z *Authorizer) reaches(ctx context.Context, node string, r ref) bool {
	if z.graph.reaches(node, r) {
		return true
	}
	return z.lookup != nil && storedReaches(ctx, z.lookup, node, r)
}

func (z *Authorizer) serviceAccount(ctx context.Context, node string, a *auth.Attributes) (auth.Decision, string, error) {
	if a.Verb == "get" && a.Subresource == "" {
		return z.readNamespaced(ctx, node, kindServiceAccount, a)
	}
	if a.Verb != "create" || a.Name == "" {
		return noOpinion, "can only create tokens for individual service accounts", nil
	}
	if a.Subresource != "token" {
		return noOpinion, "can only create token subresource of serviceaccount", nil
	}
	if z.reaches(ctx, node, ref{kind: kindServiceAccount, namespace: a.Namespace, name: a.Name}) {
		return allowed, "", nil
	}
	return noOpinion, fmt.Sprintf(notRelatedBlank, node), nil
}

func lease(node string, a *auth.Attributes) (auth.Decision, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return noOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if a.Namespace != LeaseNamespace {
		return noOpinion, fmt.Sprintf("can only access leases in the %q system namespace", LeaseNamespace), nil
	}
	// A create's name is checked by NodeRestriction, which sees the object.
	if a.Verb != "create" && a.Name != node {
		return noOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return allowed, "", nil
}

func csiNode(node string, a *auth.Attributes) (auth.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get", "create", "update", "patch", "delete":
		default:
			return noOpinion, "can only get, create, update, patch, or delete a CSINode", nil
		}
	case "status":
		// CSIVolumeHealth is off in v1.37 by default.
		return noOpinion, "CSINode status access requires CSIVolumeHealth feature", nil
	default:
		return noOpinion, "cannot authorize CSINode subresources", nil
	}
	if a.Verb != "create" && a.Name != node {
		return noOpinion, "can only access CSINode with the same name as the requesting node", nil
	}
	return allowed, "", nil
}

func (z *Authorizer) resourceSlice(ctx context.Context, node string, a *auth.Attributes) (auth.Decision, string, error) {
	if a.Subresource != "" {
		return noOpinion, "cannot authorize ResourceSlice subresources", nil
	}
	switch a.Verb {
	case "create":
		// NodeRestriction checks the new slice's nodeName.
		return allowed, "", nil
	case "get", "update", "patch", "delete":
		return z.related(ctx, node, kindResourceSlice, a)
	case "watch", "list", "deletecollection":
		if selects(a, sliceNodeField, node) {
			return allowed, "", nil
		}
		return noOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	default:
		return noOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
	}
}

func (z *Authorizer) podCertificateRequest(ctx context.Context, node string, a *auth.Attributes) (auth.Decision, string, error) {
	if a.Subresource != "" {
		return noOpinion, "nodes may not access the status subresource of PodCertificateRequests", nil
	}
	switch a.Verb {
	case "create":
		// NodeRestriction checks the new request.
		return allowed, "", nil
	case "get":
		return z.related(ctx, node, kindPodCertificateRequest, a)
	case "list", "watch":
		if selects(a, pcrNodeField, node) {
			return allowed, "", nil
		}
		return noOpinion, "can only list/watch podcertificaterequests with nodeName field selector", nil
	}
	return noOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", a.Verb), nil
}

func nodeObject(node string, a *auth.Attributes) (auth.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "create", "update", "patch":
			// NodeRestriction limits a node to its own Node.
			return allowed, "", nil
		case "get", "list", "watch":
			switch a.Name {
			case node:
				return allowed, "", nil
			case "":
				return noOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			default:
				return noOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.Name), nil
			}
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return allowed, "", nil
		}
	}
	return noOpinion, "", nil
}

func (z *Authorizer) pod(ctx context.Context, node string, a *auth.Attributes) (auth.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get":
			return z.get(ctx, node, kindPod, a)
		case "list", "watch":
			if selects(a, podNodeField, node) {
				return allowed, "", nil
			}
			if a.Name != "" {
				return z.related(ctx, node, kindPod, a)
			}
			return noOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			// Mirror pods; NodeRestriction limits them to the node's own.
			return allowed, "", nil
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return allowed, "", nil
		}
	case "eviction":
		if a.Verb == "create" {
			return allowed, "", nil
		}
	}
	return noOpinion, "", nil
}

// selects reports whether a's field selector requires field to equal value.
func selects(a *auth.Attributes, field, value string) bool {
	if a.Fields == nil {
		return false
	}
	v, ok := a.Fields.RequiresExactMatch(field)
	return ok && v == value
}

// storedReaches answers reaches from the stored objects, for what the graph does not
// relate yet: a pod's node and references, a PV's claim, an attachment's, slice's or
// certificate request's node. (A Secret a PV exposes is related by the graph only.)
func storedReaches(ctx context.Context, l Lookup, node string, r ref) bool {
	switch r.kind {
	case kindPod:
		obj, err := l.Get(ctx, podsGVR, r.namespace, r.name)
		p, ok := obj.(*corev1.Pod)
		return err == nil && ok && p.Spec.NodeName == node
	case kindVolumeAttachment:
		obj, err := l.Get(ctx, attachmentsGVR, "", r.name)
		v, ok := obj.(*storagev1.VolumeAttachment)
		return err == nil && ok && v.Spec.NodeName == node
	case kindResourceSlice:
		obj, err := l.Get(ctx, slicesGVR, "", r.name)
		s, ok := obj.(*resourcev1.ResourceSlice)
		return err == nil && ok && s.Spec.NodeName != nil && *s.Spec.NodeName == node
	case kindPodCertificateRequest:
		obj, err := l.Get(ctx, pcrsGVR, r.namespace, r.name)
		p, ok := obj.(*certificatesv1.PodCertificateRequest)
		return err == nil && ok && string(p.Spec.NodeName) == node
	case kindPV:
		obj, err := l.Get(ctx, pvsGVR, "", r.name)
		pv, ok := obj.(*corev1.PersistentVolume)
		if err != nil || !ok || pv.Spec.ClaimRef == nil {
			return false
		}
		return storedPodsReference(ctx, l, node, ref{kind: kindPVC, namespace: pv.Spec.ClaimRef.Namespace, name: pv.Spec.ClaimRef.Name})
	default:
		return storedPodsReference(ctx, l, node, r)
	}
}

// storedPodsReference reports whether a stored pod of r's namespace bound to node
// references r.
func storedPodsReference(ctx context.Context, l Lookup, node string, r ref) bool {
	objs, err := l.List(ctx, podsGVR, r.namespace)
	if err != nil {
		return false
	}
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Spec.NodeName != node {
			continue
		}
		for _, pr := range podRefs(p) {
			if pr == r {
				return true
			}
		}
	}
	return false
}
