package registry

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Fields returns the field set a field selector is matched against: metadata.name,
// metadata.namespace, and the extra fields upstream registers per kind.
func Fields(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if m.GetNamespace() != "" {
		set["metadata.namespace"] = m.GetNamespace()
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		set["spec.nodeName"] = o.Spec.NodeName
		set["spec.restartPolicy"] = string(o.Spec.RestartPolicy)
		set["spec.schedulerName"] = o.Spec.SchedulerName
		set["spec.serviceAccountName"] = o.Spec.ServiceAccountName
		set["spec.hostNetwork"] = fmt.Sprint(o.Spec.HostNetwork)
		set["status.phase"] = string(o.Status.Phase)
		set["status.podIP"] = o.Status.PodIP
		set["status.nominatedNodeName"] = o.Status.NominatedNodeName
	case *corev1.Event:
		set["involvedObject.kind"] = o.InvolvedObject.Kind
		set["involvedObject.namespace"] = o.InvolvedObject.Namespace
		set["involvedObject.name"] = o.InvolvedObject.Name
		set["involvedObject.uid"] = string(o.InvolvedObject.UID)
		set["involvedObject.apiVersion"] = o.InvolvedObject.APIVersion
		set["involvedObject.resourceVersion"] = o.InvolvedObject.ResourceVersion
		set["involvedObject.fieldPath"] = o.InvolvedObject.FieldPath
		set["reason"] = o.Reason
		set["reportingComponent"] = o.ReportingController
		set["source"] = o.Source.Component
		set["type"] = o.Type
	case *eventsv1.Event:
		// upstream's field label conversions of events.k8s.io
		r := o.Regarding
		for k, v := range map[string]string{"kind": r.Kind, "namespace": r.Namespace, "name": r.Name, "uid": string(r.UID),
			"apiVersion": r.APIVersion, "resourceVersion": r.ResourceVersion, "fieldPath": r.FieldPath} {
			set["regarding."+k] = v
		}
		set["reason"] = o.Reason
		set["reportingController"] = o.ReportingController
		set["type"] = o.Type
	case *corev1.Secret:
		set["type"] = string(o.Type)
	case *corev1.Namespace:
		set["status.phase"] = string(o.Status.Phase)
	case *corev1.Node:
		set["spec.unschedulable"] = fmt.Sprint(o.Spec.Unschedulable)
	case *corev1.ReplicationController:
		set["status.replicas"] = fmt.Sprint(o.Status.Replicas)
	case *appsv1.ReplicaSet:
		set["status.replicas"] = fmt.Sprint(o.Status.Replicas)
	case *batchv1.Job:
		set["status.successful"] = fmt.Sprint(o.Status.Succeeded)
	case *resourcev1.ResourceSlice:
		set["spec.driver"], set["spec.nodeName"] = o.Spec.Driver, ptr.Deref(o.Spec.NodeName, "")
	}
	return set
}

// Selector is a parsed label and field selector. One made by NewSelector is compiled:
// matching an object costs about as much as the object's labels and fields, whatever the
// selector's size (see selector.go); one made as a literal matches as apimachinery's
// selectors do, requirement by requirement.
type Selector struct {
	Label labels.Selector
	Field fields.Selector

	labels *labelMatcher
	fields *fieldMatcher
}

// Matches reports whether obj satisfies both selectors (nil selectors match everything).
func (s Selector) Matches(obj runtime.Object) bool {
	if s.Label != nil && !s.Label.Empty() {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		if s.labels != nil {
			if !s.labels.matches(m.GetLabels()) {
				return false
			}
		} else if !s.Label.Matches(labels.Set(m.GetLabels())) {
			return false
		}
	}
	if s.Field != nil && !s.Field.Empty() {
		if s.fields != nil {
			if !s.fields.matches(Fields(obj)) {
				return false
			}
		} else if !s.Field.Matches(Fields(obj)) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool {
	return (s.Label == nil || s.Label.Empty()) && (s.Field == nil || s.Field.Empty())
}
