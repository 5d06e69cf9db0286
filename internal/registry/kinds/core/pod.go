package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Pod is the strategy of pods.
type Pod struct{}

// Default sets upstream's defaults.
func (Pod) Default(obj runtime.Object) { defaults.Pod(obj.(*corev1.Pod)) }

// Validate returns upstream's errors for a new object.
func (Pod) Validate(obj runtime.Object) field.ErrorList { return validation.Pod(obj.(*corev1.Pod)) }

// ValidateUpdate returns upstream's errors for an update.
func (Pod) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PodUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
}

// ConvertToTable prints upstream's columns.
func (Pod) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PodPrinter().Convert(objs, now, include, false)
}

// PrepareForCreate resets the status: a new pod is Pending, with its pod-level resources
// defaulted (1.37, after admission added every container) and its QoS class.
func (Pod) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	o := obj.(*corev1.Pod)
	o.Status = corev1.PodStatus{Phase: corev1.PodPending}
	defaults.PodLevelResources(o)
	o.Status.QOSClass = quota.ComputePodQOS(o)
}

// PrepareForUpdate keeps the pod-level resources an update from a client that does not know
// them dropped (1.37's PodLevelResourcesFixDefaulting).
func (Pod) PrepareForUpdate(obj, old runtime.Object, subresource string, _ metav1.Time) {
	o, prev := obj.(*corev1.Pod), old.(*corev1.Pod)
	if subresource == "" && o.Spec.Resources == nil && prev.Spec.Resources != nil {
		o.Spec.Resources = prev.Spec.Resources.DeepCopy()
	}
}

// GracePeriod is upstream's CheckGracefulDelete: the requested period, else
// spec.terminationGracePeriodSeconds (else 0); 0 for a pod not bound to a node or
// already terminal (Succeeded or Failed), which no node has to stop; a negative period is
// 1.
func (Pod) GracePeriod(obj runtime.Object, requested *int64) int64 {
	o := obj.(*corev1.Pod)
	period := int64(0)
	switch {
	case requested != nil:
		period = *requested
	case o.Spec.TerminationGracePeriodSeconds != nil:
		period = *o.Spec.TerminationGracePeriodSeconds
	}
	if o.Spec.NodeName == "" || o.Status.Phase == corev1.PodFailed || o.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// Fields adds upstream's pod field labels.
func (Pod) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*corev1.Pod)
	set["spec.nodeName"] = o.Spec.NodeName
	set["spec.restartPolicy"] = string(o.Spec.RestartPolicy)
	set["spec.schedulerName"] = o.Spec.SchedulerName
	set["spec.serviceAccountName"] = o.Spec.ServiceAccountName
	set["spec.hostNetwork"] = fmt.Sprint(o.Spec.HostNetwork)
	set["status.phase"] = string(o.Status.Phase)
	set["status.podIP"] = o.Status.PodIP
	set["status.nominatedNodeName"] = o.Status.NominatedNodeName
}
