package server

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/noderestriction"
	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/auth/node"
	"github.com/quotad/quotad/internal/registry"
)

// nodeGraphFeed keeps the Node authorizer's graph current: a watch-fed cache (of names,
// UIDs and revisions only) per kind the graph follows (pods, PersistentVolumes, VolumeAttachments, ResourceSlices and, when
// served, PodCertificateRequests), also fed by this replica's own commits at once, each
// change handed to the graph as the cache applies it. The authorizer checks storage before
// refusing, so the caches' lag never refuses what a node may do.
type nodeGraphFeed struct {
	graph  *node.Graph
	caches map[schema.GroupVersionResource]*objectCache
}

func newNodeGraphFeed(ctx context.Context, store *registry.Store, log *slog.Logger) *nodeGraphFeed {
	f := &nodeGraphFeed{graph: node.NewGraph(), caches: map[schema.GroupVersionResource]*objectCache{}}
	for _, gvr := range []schema.GroupVersionResource{
		corev1.SchemeGroupVersion.WithResource("pods"),
		corev1.SchemeGroupVersion.WithResource("persistentvolumes"),
		storagev1.SchemeGroupVersion.WithResource("volumeattachments"),
		resourcev1.SchemeGroupVersion.WithResource("resourceslices"),
		certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"),
	} {
		res := store.Catalogue().Get(gvr)
		if res == nil {
			continue
		}
		c := &objectCache{byNS: map[string]map[string]runtime.Object{}, applied: f.apply, shared: true, keep: metaOnly, kind: res.Kind}
		f.caches[gvr] = c
		go c.run(ctx, store, res, log)
	}
	return f
}

// uidSources are the feed's caches the token index reads UIDs from: the pods'.
func (f *nodeGraphFeed) uidSources() map[string]uidSource {
	if c := f.caches[corev1.SchemeGroupVersion.WithResource("pods")]; c != nil {
		return map[string]uidSource{"pods": c}
	}
	return nil
}

// observe applies this replica's committed writes at once.
func (f *nodeGraphFeed) observe(res *registry.Resource, obj runtime.Object, deleted bool) {
	if c := f.caches[res.GVR]; c != nil {
		// The graph reads the object as the cache applies it; the cache keeps only its UID
		// and revision (metaOnly), so no copy is needed.
		c.observe(obj, deleted)
	}
}

// apply hands one change to the graph. A removal a relist finds is of what the cache kept
// (metaOnly: a PartialObjectMetadata naming the kind).
func (f *nodeGraphFeed) apply(obj runtime.Object, deleted bool) {
	g := f.graph
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		if !deleted {
			return
		}
		switch o.Kind {
		case "Pod":
			g.DeletePod(o.Namespace, o.Name)
		case "PersistentVolume":
			g.DeletePV(o.Name)
		case "VolumeAttachment":
			g.DeleteVolumeAttachment(o.Name)
		case "ResourceSlice":
			g.DeleteResourceSlice(o.Name)
		case "PodCertificateRequest":
			g.DeletePodCertificateRequest(o.Namespace, o.Name)
		}
	case *corev1.Pod:
		if deleted {
			g.DeletePod(o.Namespace, o.Name)
		} else {
			g.SetPod(o)
		}
	case *corev1.PersistentVolume:
		if deleted {
			g.DeletePV(o.Name)
		} else {
			g.SetPV(o)
		}
	case *storagev1.VolumeAttachment:
		if deleted {
			g.DeleteVolumeAttachment(o.Name)
		} else {
			g.SetVolumeAttachment(o.Name, o.Spec.NodeName)
		}
	case *resourcev1.ResourceSlice:
		if deleted || o.Spec.NodeName == nil {
			g.DeleteResourceSlice(o.Name)
		} else {
			g.SetResourceSlice(o.Name, *o.Spec.NodeName)
		}
	case *certificatesv1.PodCertificateRequest:
		if deleted {
			g.DeletePodCertificateRequest(o.Namespace, o.Name)
		} else {
			g.SetPodCertificateRequest(o.Namespace, o.Name, string(o.Spec.NodeName))
		}
	}
}

// unionAuthorizer asks each authorizer in turn, as upstream's authorization chain
// (--authorization-mode=Node,RBAC): the first Allow or Deny decides; when none has an
// opinion the reasons given are joined by newlines, and the errors.
type unionAuthorizer []auth.Authorizer

func (u unionAuthorizer) Authorize(ctx context.Context, a auth.Attributes) (auth.Decision, string, error) {
	var reasons []string
	var errs []error
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		if d != auth.NoOpinion {
			return d, reason, err
		}
	}
	return auth.NoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

// lazyStoreReader reads storage at the latest revision once the store exists (plugins are
// built before it).
type lazyStoreReader struct{ store **registry.Store }

func (r lazyStoreReader) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	return storeReader{*r.store}.Get(ctx, gvr, ns, name)
}

func (r lazyStoreReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	return storeReader{*r.store}.List(ctx, gvr, ns)
}

// subresourceAdmission admits the create of a subresource that stores nothing of its own
// (pods/eviction) through NodeRestriction, the one plugin that judges them, when it is
// enabled.
func subresourceAdmission(chain *admission.Chain, p *noderestriction.Plugin) func(ctx context.Context, a *admission.Attributes) error {
	if !slices.Contains(chain.Enabled(), admission.NodeRestriction) {
		return nil
	}
	return func(ctx context.Context, a *admission.Attributes) error {
		if u, ok := auth.UserFrom(ctx); ok {
			a.User = u
		}
		return p.Admit(ctx, a)
	}
}

// admittedTokenRequests admits a TokenRequest (serviceaccounts/<name>/token) through
// NodeRestriction before next answers it, as upstream's admission chain does on create.
func admittedTokenRequests(chain *admission.Chain, p *noderestriction.Plugin, next apiserver.TokenRequester) apiserver.TokenRequester {
	admit := subresourceAdmission(chain, p)
	if admit == nil {
		return next
	}
	return func(ctx context.Context, ns, name string, req *authenticationv1.TokenRequest, dryRun bool) (*authenticationv1.TokenRequest, []string, error) {
		a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("serviceaccounts"), Subresource: "token",
			Kind: authenticationv1.SchemeGroupVersion.WithKind("TokenRequest"), Namespace: ns, Name: name, Object: req, DryRun: dryRun}
		if err := admit(ctx, a); err != nil {
			return nil, nil, err
		}
		return next(ctx, ns, name, req, dryRun)
	}
}
