package serviceaccount

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/quotad/quotad/internal/admission"
)

// Upstream's names and values.
const (
	DefaultServiceAccountName = "default"
	// VolumeNamePrefix is followed by "-" and five random characters.
	VolumeNamePrefix = "kube-api-access"
	// MountPath is where every container finds the token, CA and namespace.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// TokenExpirationSeconds is the projected token's requested lifetime (an hour plus
	// seven seconds, so kubelets can tell it from one a user asked for).
	TokenExpirationSeconds = 3607
	rootCAConfigMap        = "kube-root-ca.crt"
	mirrorPodAnnotation    = "kubernetes.io/config.mirror"
	defaultMode            = int32(0o644)
	// defaultAttempts is how many times a missing default ServiceAccount is looked up
	// (the namespace controller creates it moments after the namespace), as upstream.
	defaultAttempts = 10
	retryInterval   = 100 * time.Millisecond
)

var (
	podResource = schema.GroupResource{Resource: "pods"}
	saGVR       = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// Plugin is the ServiceAccount admission plugin.
type Plugin struct {
	r admission.Reader
	// name returns a volume name for a prefix (random suffix); tests may fix it.
	name func(prefix string) string
}

var (
	_ admission.Handler = (*Plugin)(nil)
	_ admission.Mutator = (*Plugin)(nil)
)

// New returns the plugin reading ServiceAccounts through r.
func New(r admission.Reader) *Plugin {
	return &Plugin{r: r, name: func(prefix string) string { return prefix + utilrand.String(5) }}
}

// Name returns "ServiceAccount".
func (p *Plugin) Name() string { return admission.ServiceAccount }

// Handles reports true for CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit sets the pod's service account and mounts its API credentials.
//  1. Skip subresources, other resources and mirror pods.
//  2. Default serviceAccountName; look the ServiceAccount up (403 when missing).
//  3. Unless automounting is off, mount the projected volume in every container.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource() != podResource || a.Operation != admission.Create {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok || pod == nil {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // SA1019: set with it, as upstream sets it
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	mount := true
	switch {
	case pod.Spec.AutomountServiceAccountToken != nil:
		mount = *pod.Spec.AutomountServiceAccountToken
	case sa.AutomountServiceAccountToken != nil:
		mount = *sa.AutomountServiceAccountToken
	}
	if mount {
		p.mountToken(pod)
	}
	return nil
}

// serviceAccount reads the ServiceAccount, looking the default one up again a few times
// while the namespace controller may not have created it yet (as upstream does).
func (p *Plugin) serviceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = defaultAttempts
	}
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			t := time.NewTimer(retryInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		var obj interface{}
		obj, err = p.r.Get(ctx, saGVR, ns, name)
		if err == nil {
			if sa, ok := obj.(*corev1.ServiceAccount); ok {
				return sa, nil
			}
			return nil, fmt.Errorf("unexpected object %T", obj)
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccount"}, name)
}

// mountToken is upstream's mountServiceAccountToken.
func (p *Plugin) mountToken(pod *corev1.Pod) {
	volumeName := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumeNamePrefix+"-") {
			volumeName = v.Name
			break
		}
	}
	hasVolume := volumeName != ""
	if !hasVolume {
		volumeName = p.name(VolumeNamePrefix + "-")
	}
	vm := corev1.VolumeMount{Name: volumeName, ReadOnly: true, MountPath: MountPath}
	needs := false
	add := func(cs []corev1.Container) {
		for i := range cs {
			mounted := false
			for _, m := range cs[i].VolumeMounts {
				if m.MountPath == MountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, vm)
				needs = true
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	if !hasVolume && needs {
		pod.Spec.Volumes = append(pod.Spec.Volumes, TokenVolume(volumeName))
	}
}

// TokenVolume is the projected volume upstream mounts (defaults applied).
func TokenVolume(name string) corev1.Volume {
	exp := int64(TokenExpirationSeconds)
	mode := defaultMode
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}
