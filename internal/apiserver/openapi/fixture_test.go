package openapi

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtin returns a built-in resource for the test fixtures.
func builtin(gv schema.GroupVersion, plural, kind string, namespaced bool, obj, list any, subresources ...string) Resource {
	return Resource{
		GVK:          gv.WithKind(kind),
		Plural:       plural,
		Namespaced:   namespaced,
		Subresources: subresources,
		Type:         reflect.TypeOf(obj),
		ListType:     reflect.TypeOf(list),
	}
}

// crontabs is a custom resource with a structural schema, status and scale.
func crontabs() Resource {
	return Resource{
		GVK:          schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"},
		Plural:       "crontabs",
		Namespaced:   true,
		Verbs:        []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"},
		Subresources: []string{"status", "scale"},
		CRDSchema: &apiextensionsv1.JSONSchemaProps{
			Type:        "object",
			Description: "CronTab runs a command on a schedule.",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"cronSpec": {Type: "string", Description: "cronSpec is the schedule."},
						"replicas": {Type: "integer", Format: "int32"},
						"size":     {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
						"ports": {
							Type:         "array",
							XListType:    ptr("map"),
							XListMapKeys: []string{"name"},
							Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
								Type:     "object",
								Required: []string{"name"},
								Properties: map[string]apiextensionsv1.JSONSchemaProps{
									"name": {Type: "string"},
									"port": {Type: "integer"},
								},
							}},
						},
					},
				},
				"status": {Type: "object", XPreserveUnknownFields: ptr(true)},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// served is the fixture: the kinds quotad serves plus one custom resource.
func served() []Resource {
	core := corev1.SchemeGroupVersion
	apps := appsv1.SchemeGroupVersion
	batch := batchv1.SchemeGroupVersion
	ns := builtin(core, "namespaces", "Namespace", false, corev1.Namespace{}, corev1.NamespaceList{}, "status")
	ns.Verbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	return []Resource{
		ns,
		builtin(core, "nodes", "Node", false, corev1.Node{}, corev1.NodeList{}, "status"),
		builtin(core, "pods", "Pod", true, corev1.Pod{}, corev1.PodList{}, "status"),
		builtin(core, "services", "Service", true, corev1.Service{}, corev1.ServiceList{}, "status"),
		builtin(core, "secrets", "Secret", true, corev1.Secret{}, corev1.SecretList{}),
		builtin(core, "configmaps", "ConfigMap", true, corev1.ConfigMap{}, corev1.ConfigMapList{}),
		builtin(core, "persistentvolumeclaims", "PersistentVolumeClaim", true, corev1.PersistentVolumeClaim{}, corev1.PersistentVolumeClaimList{}, "status"),
		builtin(core, "replicationcontrollers", "ReplicationController", true, corev1.ReplicationController{}, corev1.ReplicationControllerList{}, "status", "scale"),
		builtin(core, "resourcequotas", "ResourceQuota", true, corev1.ResourceQuota{}, corev1.ResourceQuotaList{}, "status"),
		builtin(core, "limitranges", "LimitRange", true, corev1.LimitRange{}, corev1.LimitRangeList{}),
		builtin(core, "events", "Event", true, corev1.Event{}, corev1.EventList{}),
		builtin(core, "serviceaccounts", "ServiceAccount", true, corev1.ServiceAccount{}, corev1.ServiceAccountList{}),
		builtin(apps, "deployments", "Deployment", true, appsv1.Deployment{}, appsv1.DeploymentList{}, "status", "scale"),
		builtin(apps, "replicasets", "ReplicaSet", true, appsv1.ReplicaSet{}, appsv1.ReplicaSetList{}, "status", "scale"),
		builtin(apps, "statefulsets", "StatefulSet", true, appsv1.StatefulSet{}, appsv1.StatefulSetList{}, "status", "scale"),
		builtin(apps, "daemonsets", "DaemonSet", true, appsv1.DaemonSet{}, appsv1.DaemonSetList{}, "status"),
		builtin(batch, "jobs", "Job", true, batchv1.Job{}, batchv1.JobList{}, "status"),
		builtin(batch, "cronjobs", "CronJob", true, batchv1.CronJob{}, batchv1.CronJobList{}, "status"),
		builtin(schedulingv1.SchemeGroupVersion, "priorityclasses", "PriorityClass", false, schedulingv1.PriorityClass{}, schedulingv1.PriorityClassList{}),
		builtin(storagev1.SchemeGroupVersion, "storageclasses", "StorageClass", false, storagev1.StorageClass{}, storagev1.StorageClassList{}),
		builtin(apiextensionsv1.SchemeGroupVersion, "customresourcedefinitions", "CustomResourceDefinition", false, apiextensionsv1.CustomResourceDefinition{}, apiextensionsv1.CustomResourceDefinitionList{}, "status"),
		crontabs(),
	}
}
