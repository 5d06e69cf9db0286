package resourceclaim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/registry"
)

// component is the source of the controller's Events, as upstream's.
const component = "resource_claim"

// Options configure the controller.
type Options struct {
	// Clock tells the time (nil: the real clock).
	Clock  clock.WithTicker
	Panics controller.PanicObserver
	// Workers is the number of pods handled at once (0: 10).
	Workers int
	// Pods, when set, is the watch of pods shared with the other controllers watching
	// every pod (nil: a watch of its own).
	Pods *controller.SharedPods
}

// Controller creates pods' ResourceClaims from their templates.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	rec   *record.Recorder
	opts  Options
	// pods delivers every pod event (the controller keeps none).
	pods *controller.PodSub
}

// New returns the controller.
func New(store controller.Client, log *slog.Logger, opts Options) *Controller {
	if log == nil {
		log = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Workers <= 0 {
		opts.Workers = 10
	}
	return &Controller{store: store, log: log, opts: opts,
		rec:  record.NewRecorder(store, component, opts.Clock, log),
		loop: controller.NewLoop("resourceclaim", store, log, opts.Panics, opts.Clock), pods: opts.Pods.Sub(controller.PodFilter{})}
}

func (c *Controller) res(resource string) *registry.Resource {
	if resource == "pods" {
		return c.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource(resource))
	}
	return c.store.Catalogue().Get(resourcev1.SchemeGroupVersion.WithResource(resource))
}

// Start runs the controller until ctx ends: pods with a claim from a template are
// synced when they change, and when a claim one of them controls changes or goes (a
// deleted claim is created anew).
func (c *Controller) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := controller.NewQueue("resource_claim")
	c.pods.Start(ctx, c.loop, controller.On(func(p *corev1.Pod, deleted bool) {
		if !deleted && usesTemplates(p) {
			q.Add(p.Namespace + "/" + p.Name)
		}
	}))
	go c.loop.Watch(ctx, c.res("resourceclaims"), controller.On(func(claim *resourcev1.ResourceClaim, deleted bool) {
		if ref := metav1.GetControllerOfNoCopy(claim); ref != nil && ref.APIVersion == "v1" && ref.Kind == "Pod" {
			q.Add(claim.Namespace + "/" + ref.Name)
		}
	}))
	c.loop.Process(ctx, q, c.opts.Workers, c.Sync)
	return nil
}

// usesTemplates reports whether a pod has a claim to be made from a template.
func usesTemplates(p *corev1.Pod) bool {
	for _, pc := range p.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil {
			return true
		}
	}
	return false
}

// Sync handles one pod (namespace/name), as upstream's syncPod:
//  1. read it; nothing to do when it is gone or being deleted;
//  2. a done pod (Succeeded or Failed) has the unallocated claims it generated deleted;
//  3. for every pod claim from a template without its claim, find one generated earlier
//     or create it from the template (a failure is a Warning Event on the pod);
//  4. record the new claims' names in status.resourceClaimStatuses.
func (c *Controller) Sync(ctx context.Context, key string) (requeue time.Duration, err error) {
	ns, name, ok := splitKey(key)
	if !ok {
		return 0, nil
	}
	// 1. The pod.
	obj, err := c.store.Get(ctx, c.res("pods"), ns, name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	pod, err := controller.As[*corev1.Pod](obj)
	if err != nil {
		return 0, err
	}
	if pod.DeletionTimestamp != nil {
		return 0, nil
	}
	// 2. Done pods release their generated claims.
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, c.deleteUnused(ctx, pod)
	}
	// 3. Claims from templates.
	var newClaims map[string]string
	for _, pc := range pod.Spec.ResourceClaims {
		if err := c.handleClaim(ctx, pod, pc, &newClaims); err != nil {
			c.rec.Event(ctx, pod, corev1.EventTypeWarning, "FailedResourceClaimCreation", fmt.Sprintf("PodResourceClaim %s: %v", pc.Name, err))
			err = fmt.Errorf("pod %s/%s, PodResourceClaim %s: %w", ns, name, pc.Name, err)
			if apierrors.IsForbidden(err) {
				err = controller.Expected(err) // reported by the Event (a quota refusal)
			}
			return 0, err
		}
	}
	if newClaims == nil {
		return 0, nil
	}
	// 4. The pod's status names them (merged with what it names, sorted by pod claim).
	_, err = c.store.Update(ctx, c.res("pods"), ns, name, "status", func(cur runtime.Object) (runtime.Object, error) {
		p, err := controller.As[*corev1.Pod](cur)
		if err != nil {
			return nil, err
		}
		if p.UID != pod.UID {
			return nil, apierrors.NewConflict(c.res("pods").GroupResource(), name, errors.New("the pod was replaced"))
		}
		merged := map[string]string{}
		for _, s := range p.Status.ResourceClaimStatuses {
			if s.ResourceClaimName != nil {
				merged[s.Name] = *s.ResourceClaimName
			}
		}
		maps.Copy(merged, newClaims)
		p.Status.ResourceClaimStatuses = nil
		for _, n := range slices.Sorted(maps.Keys(merged)) {
			claimName := merged[n]
			p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, corev1.PodResourceClaimStatus{Name: n, ResourceClaimName: &claimName})
		}
		return p, nil
	}, registry.WriteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("update pod %s/%s ResourceClaimStatuses: %v", ns, name, err)
	}
	return 0, nil
}

// handleClaim makes sure the claim of one pod claim from a template exists (upstream's
// handleClaim), adding the name of a claim found or created to *newClaims.
func (c *Controller) handleClaim(ctx context.Context, pod *corev1.Pod, pc corev1.PodResourceClaim, newClaims *map[string]string) error {
	if pc.ResourceClaimTemplateName == nil {
		return nil // a claim named by the pod: the user's to create
	}
	// The claim the status names, when it still exists and is the pod's.
	if claimName, ok := statusName(pod, pc.Name); ok {
		if claimName == nil {
			return nil // intentionally not created
		}
		obj, err := c.store.Get(ctx, c.res("resourceclaims"), pod.Namespace, *claimName)
		switch {
		case err == nil:
			if claim, err := controller.As[*resourcev1.ResourceClaim](obj); err == nil && ownedBy(claim, pod) {
				return nil
			}
			c.log.Warn("Claim that was created for the pod is no longer owned by the pod, creating a new one",
				"pod", pod.Namespace+"/"+pod.Name, "podClaim", pc.Name, "resourceClaim", *claimName)
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("checking claim existence: %w", err)
		}
	}
	claim, err := c.findClaim(ctx, pod, pc.Name)
	if err != nil {
		return fmt.Errorf("finding ResourceClaim for claim %s in pod %s/%s failed: %w", pc.Name, pod.Namespace, pod.Name, err)
	}
	if claim == nil {
		obj, err := c.store.Get(ctx, c.res("resourceclaimtemplates"), pod.Namespace, *pc.ResourceClaimTemplateName)
		if err != nil {
			return fmt.Errorf("resource claim template %q: %w", *pc.ResourceClaimTemplateName, err)
		}
		template, err := controller.As[*resourcev1.ResourceClaimTemplate](obj)
		if err != nil {
			return err
		}
		want := claimFor(pod, pc.Name, template)
		res, err := c.store.Create(ctx, c.res("resourceclaims"), pod.Namespace, want, registry.WriteOptions{})
		if err != nil {
			// want.Name is empty (generateName), as in upstream's message.
			return fmt.Errorf("create ResourceClaim %s: %w", want.Name, err)
		}
		if claim, err = controller.As[*resourcev1.ResourceClaim](res.Object); err != nil {
			return err
		}
		c.log.Debug("Created ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "pod", pod.Namespace+"/"+pod.Name)
	}
	if *newClaims == nil {
		*newClaims = map[string]string{}
	}
	(*newClaims)[pc.Name] = claim.Name
	return nil
}

// statusName is the claim name status.resourceClaimStatuses records for a pod claim
// (nil: intentionally none), and whether it records one.
func statusName(pod *corev1.Pod, podClaim string) (*string, bool) {
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == podClaim {
			return s.ResourceClaimName, true
		}
	}
	return nil, false
}

// findClaim returns a claim generated earlier for the pod claim: controlled by the pod
// and annotated with the pod claim's name (nil when there is none).
func (c *Controller) findClaim(ctx context.Context, pod *corev1.Pod, podClaim string) (*resourcev1.ResourceClaim, error) {
	claims, err := c.generated(ctx, pod)
	if err != nil {
		return nil, err
	}
	for _, claim := range claims {
		if claim.Annotations[resourcev1.PodResourceClaimAnnotation] == podClaim {
			return claim, nil
		}
	}
	return nil, nil
}

// generated lists the claims the controller generated for pod, oldest first.
func (c *Controller) generated(ctx context.Context, pod *corev1.Pod) ([]*resourcev1.ResourceClaim, error) {
	objs, _, err := c.store.ListObjects(ctx, c.res("resourceclaims"), pod.Namespace)
	if err != nil {
		return nil, err
	}
	var out []*resourcev1.ResourceClaim
	for _, o := range objs {
		claim, err := controller.As[*resourcev1.ResourceClaim](o)
		if err != nil {
			return nil, err
		}
		if _, ok := claim.Annotations[resourcev1.PodResourceClaimAnnotation]; ok && ownedBy(claim, pod) {
			out = append(out, claim)
		}
	}
	slices.SortStableFunc(out, func(a, b *resourcev1.ResourceClaim) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return out, nil
}

// ownedBy reports whether the pod controls claim.
func ownedBy(claim *resourcev1.ResourceClaim, pod *corev1.Pod) bool {
	ref := metav1.GetControllerOfNoCopy(claim)
	return ref != nil && ref.UID == pod.UID
}

// deleteUnused deletes the claims a done pod generated that are neither allocated nor
// reserved (upstream deletes a generated claim once its pod no longer needs it), guarded
// by their UIDs.
func (c *Controller) deleteUnused(ctx context.Context, pod *corev1.Pod) error {
	claims, err := c.generated(ctx, pod)
	if err != nil {
		return err
	}
	for _, claim := range claims {
		if claim.DeletionTimestamp != nil || claim.Status.Allocation != nil || len(claim.Status.ReservedFor) > 0 {
			continue
		}
		uid := claim.UID
		_, err := c.store.Delete(ctx, c.res("resourceclaims"), claim.Namespace, claim.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete ResourceClaim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
	}
	return nil
}

// maxBaseLen leaves room for the hyphen and 5 random characters of a 63-character name.
const maxBaseLen = 57

// claimFor is the claim upstream creates for a pod claim from template: generateName
// "<pod>-<claim>-" (both shortened in proportion, without the hyphen at the end, when
// longer than 57), the template's labels and annotations plus
// resource.kubernetes.io/pod-claim-name, controlled by the pod, the template's spec.
func claimFor(pod *corev1.Pod, podClaim string, template *resourcev1.ResourceClaimTemplate) *resourcev1.ResourceClaim {
	annotations := maps.Clone(template.Spec.ObjectMeta.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[resourcev1.PodResourceClaimAnnotation] = podClaim
	generateName := pod.Name + "-" + podClaim + "-"
	if len(generateName) > maxBaseLen {
		generateName = pod.Name[0:len(pod.Name)*maxBaseLen/len(generateName)] +
			"-" +
			podClaim[0:len(podClaim)*maxBaseLen/len(generateName)]
	}
	isTrue := true
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: generateName,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &isTrue,
			}},
			Annotations: annotations,
			Labels:      maps.Clone(template.Spec.ObjectMeta.Labels),
		},
		Spec: *template.Spec.Spec.DeepCopy(),
	}
	return claim
}

// splitKey splits "namespace/name".
func splitKey(key string) (ns, name string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:], key[:i] != "" && key[i+1:] != ""
		}
	}
	return "", "", false
}
