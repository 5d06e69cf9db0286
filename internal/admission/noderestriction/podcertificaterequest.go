package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

// admitPodCertificateRequest is upstream's admitPodCertificateRequest: a node may only
// create requests for itself (its name and UID), for a pod bound to it (its UID, not a
// mirror pod) and that pod's service account (its name and UID), for a signer one of the
// pod's podCertificate volumes names unless authorized for it. A name or UID that differs
// only because the object was replaced is a plain error (a 500, which the kubelet retries),
// as upstream's, whose informers may lag; the rest are 403s.
func (p *Plugin) admitPodCertificateRequest(ctx context.Context, nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return forbidden(a, fmt.Errorf("unexpected operation %v", a.Operation))
	}
	if a.Subresource != "" {
		return forbidden(a, fmt.Errorf("unexpected subresource %v", a.Subresource))
	}
	req, ok := a.Object.(*certificatesv1.PodCertificateRequest)
	if !ok {
		return unexpectedType(a, a.Object)
	}
	ns, s := a.Namespace, &req.Spec
	podRef := ns + "/" + s.PodName
	// 1. The requesting node, by name and UID.
	if string(s.NodeName) != nodeName {
		return forbidden(a, fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", s.NodeName, nodeName))
	}
	obj, err := p.getAsLister(ctx, nodesGVR, "", string(s.NodeName))
	if err != nil {
		return lookupError(a, fmt.Sprintf("while retrieving node %q named in the PodCertificateRequest", s.NodeName), err)
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return unexpectedType(a, obj)
	}
	if node.UID != s.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", podRef, s.NodeUID, node.UID)
	}
	// 2. A pod bound to it, not a mirror pod.
	if obj, err = p.getAsLister(ctx, podsGVR, ns, s.PodName); err != nil {
		return lookupError(a, fmt.Sprintf("while retrieving pod %q named in the PodCertificateRequest", podRef), err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return unexpectedType(a, obj)
	}
	if s.PodUID != pod.UID {
		return fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", podRef, s.PodUID, string(pod.UID))
	}
	if pod.Spec.NodeName != string(s.NodeName) {
		return forbidden(a, fmt.Errorf("pod %q is not running on node %q named in the PodCertificateRequest", podRef, s.NodeName))
	}
	if _, mirror := pod.Annotations[mirrorAnnotation]; mirror {
		return forbidden(a, fmt.Errorf("pod %q is a mirror pod", podRef))
	}
	// 3. The pod's service account.
	if s.ServiceAccountName != pod.Spec.ServiceAccountName {
		return forbidden(a, fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", podRef, s.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	if obj, err = p.getAsLister(ctx, sasGVR, ns, s.ServiceAccountName); err != nil {
		return lookupError(a, fmt.Sprintf("while retrieving service account %q named in the PodCertificateRequest", ns+"/"+s.ServiceAccountName), err)
	}
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return unexpectedType(a, obj)
	}
	if s.ServiceAccountUID != sa.UID {
		return fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", podRef, s.ServiceAccountUID, sa.UID)
	}
	// 4. A signer the pod asks certificates of, or one the node is authorized for.
	if err := p.checkPodCertificateSigner(ctx, pod, req, a); err != nil {
		return forbidden(a, err)
	}
	return nil
}

// getAsLister reads an object as upstream's listers do: a missing one is the lister's
// NotFound, which names the resource in the singular ("node", "pod", "serviceaccount").
func (p *Plugin) getAsLister(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	obj, err := p.r.Get(ctx, gvr, ns, name)
	if apierrors.IsNotFound(err) {
		singular := strings.TrimSuffix(gvr.Resource, "s")
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gvr.Group, Resource: singular}, name)
	}
	return obj, err
}

// lookupError is upstream's answer to a failed read: a missing object is a plain error
// (the object may be about to appear), any other failure a 403. The cause is printed,
// not wrapped, so the answer is upstream's (a 500 with this text, not the cause's 404).
func lookupError(a *admission.Attributes, what string, err error) error {
	if apierrors.IsNotFound(err) {
		return errors.New(what + ": " + err.Error())
	}
	return forbidden(a, fmt.Errorf("%s: %w", what, err))
}

// checkPodCertificateSigner is upstream's validateNodePodCertificateSigner.
func (p *Plugin) checkPodCertificateSigner(ctx context.Context, pod *corev1.Pod, req *certificatesv1.PodCertificateRequest, a *admission.Attributes) error {
	for i := range pod.Spec.Volumes {
		if v := pod.Spec.Volumes[i].Projected; v != nil {
			for j := range v.Sources {
				if pc := v.Sources[j].PodCertificate; pc != nil && pc.SignerName == req.Spec.SignerName {
					return nil
				}
			}
		}
	}
	if p.Authorizer != nil {
		// RBAC cannot name a resource with a slash: the signer's "/" is ":", as in
		// ClusterTrustBundle names.
		signer := strings.ReplaceAll(req.Spec.SignerName, "/", ":")
		d, _, err := p.Authorizer.Authorize(ctx, auth.Attributes{User: a.User, Verb: "request-serviceaccounts-podcertificate-signer",
			APIGroup: a.Resource.Group, APIVersion: a.Resource.Version, Resource: signer, Namespace: a.Namespace, Name: req.Spec.ServiceAccountName, ResourceRequest: true})
		if d == auth.Allow {
			return nil
		}
		if err != nil {
			return fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", a.User.Name, req.Spec.SignerName, err)
		}
	}
	return fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", a.Namespace+"/"+req.Spec.PodName, req.Spec.SignerName)
}
