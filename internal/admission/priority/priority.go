package priority

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

// Names and values of the built-in priority classes.
const (
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
	// SystemCriticalPriority is the value of system-cluster-critical; system-node-critical
	// is 1000 above it.
	SystemCriticalPriority int32 = 2000000000
)

// SystemClasses returns the built-in priority classes the server creates at startup, in
// upstream's order, as freshly allocated values the caller may change.
func SystemClasses() []schedulingv1.PriorityClass {
	nodePolicy, clusterPolicy := corev1.PreemptLowerPriority, corev1.PreemptLowerPriority
	return []schedulingv1.PriorityClass{
		{
			ObjectMeta:       metav1.ObjectMeta{Name: SystemNodeCritical},
			Value:            SystemCriticalPriority + 1000,
			Description:      "Used for system critical pods that must not be moved from their current node.",
			PreemptionPolicy: &nodePolicy,
		},
		{
			ObjectMeta:       metav1.ObjectMeta{Name: SystemClusterCritical},
			Value:            SystemCriticalPriority,
			Description:      "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
			PreemptionPolicy: &clusterPolicy,
		},
	}
}

// systemClass returns the built-in class called name, if there is one.
func systemClass(name string) (*schedulingv1.PriorityClass, bool) {
	for _, pc := range SystemClasses() {
		if pc.Name == name {
			return &pc, true
		}
	}
	return nil, false
}

var (
	podResource           = schema.GroupResource{Resource: "pods"}
	priorityClassResource = schema.GroupResource{Group: schedulingv1.GroupName, Resource: "priorityclasses"}
	priorityClassGVR      = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
)

// Plugin is the Priority admission plugin.
type Plugin struct {
	r admission.Reader
}

var (
	_ admission.Handler   = (*Plugin)(nil)
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading PriorityClasses through r.
func New(r admission.Reader) *Plugin {
	return &Plugin{r: r}
}

// Name returns "Priority".
func (p *Plugin) Name() string { return admission.Priority }

// Handles reports true for CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Admit resolves the priority of pods being created and keeps it on pod updates.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource() != podResource {
		return nil
	}
	switch a.Operation {
	case admission.Create:
		return p.admitPodCreate(ctx, a)
	case admission.Update:
		return admitPodUpdate(a)
	}
	return nil
}

// Validate refuses a second globalDefault PriorityClass and deleting a system class.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource() != priorityClassResource {
		return nil
	}
	switch a.Operation {
	case admission.Create, admission.Update:
		return p.validatePriorityClass(ctx, a)
	case admission.Delete:
		if _, ok := systemClass(a.Name); ok {
			return apierrors.NewForbidden(priorityClassResource, a.Name, errors.New("this is a system priority class and cannot be deleted"))
		}
	}
	return nil
}

// admitPodUpdate carries priority and preemptionPolicy over from the stored pod when the
// update omits them (validation refuses any other change to them).
func admitPodUpdate(a *admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.Priority == nil && old.Spec.Priority != nil {
		v := *old.Spec.Priority
		pod.Spec.Priority = &v
	}
	if pod.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
		v := *old.Spec.PreemptionPolicy
		pod.Spec.PreemptionPolicy = &v
	}
	return nil
}

// admitPodCreate sets spec.priority (and spec.preemptionPolicy) from the pod's class, or
// from the global default class (whose name it also sets) when the pod names none.
func (p *Plugin) admitPodCreate(ctx context.Context, a *admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}

	// 1. Resolve the class: the named one, else the global default, else none.
	var priority int32
	var policy *corev1.PreemptionPolicy
	if pod.Spec.PriorityClassName == "" {
		dpc, err := p.defaultClass(ctx)
		if err != nil {
			return fmt.Errorf("failed to get default priority class: %v", err)
		}
		if dpc != nil {
			pod.Spec.PriorityClassName = dpc.Name
			priority, policy = dpc.Value, dpc.PreemptionPolicy
		} else {
			lower := corev1.PreemptLowerPriority
			policy = &lower
		}
	} else {
		pc, err := p.class(ctx, pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return admission.NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return fmt.Errorf("failed to get PriorityClass with name %s: %v", pod.Spec.PriorityClassName, err)
		}
		priority, policy = pc.Value, pc.PreemptionPolicy
	}

	// 2. A priority the client set must agree with the class.
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return admission.NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority

	// 3. So must a preemption policy, when the class has one.
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return admission.NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		v := *policy
		pod.Spec.PreemptionPolicy = &v
	}
	return nil
}

// validatePriorityClass refuses to mark a class globalDefault while another one is.
func (p *Plugin) validatePriorityClass(ctx context.Context, a *admission.Attributes) error {
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		return nil
	}
	dpc, err := p.defaultClass(ctx)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if dpc != nil && (a.Operation == admission.Create || dpc.Name != pc.Name) {
		return admission.NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dpc.Name))
	}
	return nil
}

// class returns the stored class called name, or the built-in one of that name; the error
// is NotFound when neither exists.
func (p *Plugin) class(ctx context.Context, name string) (*schedulingv1.PriorityClass, error) {
	obj, err := p.r.Get(ctx, priorityClassGVR, "", name)
	if apierrors.IsNotFound(err) {
		if pc, ok := systemClass(name); ok {
			return pc, nil
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	pc, ok := obj.(*schedulingv1.PriorityClass)
	if !ok {
		return nil, fmt.Errorf("unexpected object type %T", obj)
	}
	return pc, nil
}

// defaultClass returns the global default class (lowest value, then smallest name, when
// several claim it), or nil when there is none.
func (p *Plugin) defaultClass(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	objs, err := p.r.List(ctx, priorityClassGVR, "")
	if err != nil {
		return nil, err
	}
	var dpc *schedulingv1.PriorityClass
	for _, obj := range objs {
		pc, ok := obj.(*schedulingv1.PriorityClass)
		if !ok {
			return nil, fmt.Errorf("unexpected object type %T", obj)
		}
		if !pc.GlobalDefault {
			continue
		}
		if dpc == nil || pc.Value < dpc.Value || (pc.Value == dpc.Value && pc.Name < dpc.Name) {
			dpc = pc
		}
	}
	return dpc, nil
}
