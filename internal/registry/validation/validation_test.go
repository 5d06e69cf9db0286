package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
)

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }

func podSpec1() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}}
}

func validPod() *corev1.Pod { return &corev1.Pod{ObjectMeta: meta("web"), Spec: podSpec1()} }

func template(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec1()}
}

var appLabels = map[string]string{"app": "web"}

func validDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: appLabels}, Template: template(appLabels)}}
}

func validJob() *batchv1.Job {
	t := template(nil)
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "u1"}, Spec: batchv1.JobSpec{Template: t}}
}

func validService() *corev1.Service {
	return &corev1.Service{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{Selector: appLabels, Ports: []corev1.ServicePort{{Port: 80}}}}
}

func validPVC() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: meta("data"), Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": q("1Gi")}}}}
}

// prepare applies what the registry does before validation.
func prepare(obj runtime.Object) runtime.Object {
	defaults.Apply(obj)
	switch o := obj.(type) {
	case *batchv1.Job:
		defaults.JobSelector(o)
	case *corev1.Service:
		defaults.NormalizeServiceClusterIPs(o, nil)
	}
	return obj
}

func errStrings(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name string
		obj  func() runtime.Object
		want []string
	}{
		{"valid pod", func() runtime.Object { return validPod() }, nil},
		{"valid deployment", func() runtime.Object { return validDeployment() }, nil},
		{"valid job", func() runtime.Object { return validJob() }, nil},
		{"valid service", func() runtime.Object { return validService() }, nil},
		{"valid pvc", func() runtime.Object { return validPVC() }, nil},
		{"pod name not a DNS subdomain", func() runtime.Object {
			p := validPod()
			p.Name = "Web_1"
			return p
		}, []string{`metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"pod without name", func() runtime.Object {
			p := validPod()
			p.Name = ""
			return p
		}, []string{`metadata.name: Required value: name or generateName is required`}},
		{"pod without containers", func() runtime.Object {
			p := validPod()
			p.Spec.Containers = nil
			return p
		}, []string{`spec.containers: Required value`}},
		{"container without image, bad name", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Name = "App"
			p.Spec.Containers[0].Image = ""
			return p
		}, []string{
			`spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			`spec.containers[0].image: Required value`,
		}},
		{"user and group IDs out of range", func() runtime.Object {
			p := validPod()
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(-1)), FSGroup: ptr(int64(1 << 31))}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsGroup: ptr(int64(-5))}
			return p
		}, []string{
			`spec.containers[0].securityContext.runAsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive`,
			`spec.securityContext.fsGroup: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive`,
			`spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
		}},
		{"secret and config map volumes", func() runtime.Object {
			p := validPod()
			p.Spec.Volumes = []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptr(int32(01000)), Items: []corev1.KeyToPath{{Path: "a"}}}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{Items: []corev1.KeyToPath{{Key: "k", Path: "../up"}}}}},
			}
			return p
		}, []string{
			`spec.volumes[0].secret.secretName: Required value`,
			`spec.volumes[0].secret.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive`,
			`spec.volumes[0].secret.items[0].key: Required value`,
			`spec.volumes[1].configMap.name: Required value`,
			`spec.volumes[1].configMap.items[0].path: Invalid value: "../up": must not contain '..'`,
		}},
		{"projected secret and config map", func() runtime.Object {
			p := validPod()
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{Items: []corev1.KeyToPath{{Key: "k", Path: "a"}}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "k", Path: "a"}, {Key: "", Path: "b"}}}},
			}}}}}
			return p
		}, []string{
			`spec.volumes[0].projected.sources[0].secret.name: Required value`,
			`spec.volumes[0].projected: Invalid value: "cm": conflicting duplicate paths`,
			`spec.volumes[0].projected.sources[1].configMap.items[1].key: Required value`,
		}},
		{"projected token, downward API and mixed sources; resources", func() runtime.Object {
			p := validPod()
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr(int32(01000)), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(60)), Path: "../x"}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "d", Mode: ptr(int32(-1))}}}},
				{Secret: &corev1.SecretProjection{Items: []corev1.KeyToPath{{Key: "k", Path: "/abs"}}}, ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
			}}}}}
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "example.com/x": resource.MustParse("1.5")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("-1")},
			}
			return p
		}, []string{
			`spec.volumes[0].projected.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive`,
			`spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`,
			`spec.volumes[0].projected.sources[0].serviceAccountToken.path: Invalid value: "../x": must not contain '..'`,
			`spec.volumes[0].projected.sources[1].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required`,
			`spec.volumes[0].projected.sources[1].downwardAPI.mode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive`,
			`spec.volumes[0].projected.sources[2].secret.name: Required value`,
			`spec.volumes[0].projected.sources[2].secret.items[0].path: Invalid value: "/abs": must be a relative path`,
			`spec.volumes[0].projected.sources[2]: Forbidden: may not specify more than 1 volume type per source`,
			`spec.containers[0].resources.limits[example.com/x]: Invalid value: "1500m": must be an integer`,
			`spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
			`spec.containers[0].resources.requests[example.com/x]: Invalid value: "1500m": must be an integer`,
			`spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0`,
			`spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be specified when serviceAccountName is not set`,
		}},
		{"tolerations, security context, DNS and the service account", func() runtime.Object {
			p := validPod()
			p.Spec.Tolerations = []corev1.Toleration{
				{Key: "ok", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(30))},
				{Key: "bad key!", Operator: "Maybe", Value: "v", Effect: "Sometimes", TolerationSeconds: ptr(int64(1))},
				{Operator: corev1.TolerationOpEqual, Value: "x"},
			}
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsGroup: ptr(int64(-2)), SeccompProfile: &corev1.SeccompProfile{Type: "Odd"}}
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.ServiceAccountName = "Not_A_Name"
			return p
		}, []string{
			"spec.securityContext.runAsGroup: Invalid value: -2: must be between 0 and 2147483647, inclusive",
			"spec.securityContext.seccompProfile.type: Unsupported value: \"Odd\": supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"",
			"spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
			"spec.serviceAccountName: Invalid value: \"Not_A_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
			"spec.tolerations[1].key: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
			"spec.tolerations[1].effect: Invalid value: \"Sometimes\": effect must be 'NoExecute' when `tolerationSeconds` is set",
			"spec.tolerations[1].operator: Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\"",
			"spec.tolerations[1].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
			"spec.tolerations[2].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
		}},
		{"unsupported policies", func() runtime.Object {
			p := validPod()
			p.Spec.RestartPolicy = "Sometimes"
			p.Spec.DNSPolicy = "Anything"
			p.Spec.Containers[0].ImagePullPolicy = "Maybe"
			return p
		}, []string{
			`spec.containers[0].imagePullPolicy: Unsupported value: "Maybe": supported values: "Always", "IfNotPresent", "Never"`,
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
			`spec.dnsPolicy: Unsupported value: "Anything": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`,
		}},
		{"duplicate container names", func() runtime.Object {
			p := validPod()
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "app", Image: "x:1"})
			return p
		}, []string{`spec.containers[1].name: Duplicate value: "app"`}},
		{"request above limit", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"cpu": q("500m")}, Requests: corev1.ResourceList{"cpu": q("1")}}
			return p
		}, []string{`spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m`}},
		{"negative quantity", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("-1Mi")}}
			return p
		}, []string{`spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0`}},
		{"unknown container resource", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"pods": q("1")}}
			return p
		}, []string{
			`spec.containers[0].resources.limits[pods]: Invalid value: "pods": must be a standard resource for containers`,
			// Requests are defaulted from limits, so the request is reported too.
			`spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for containers`,
		}},
		{"extended resource needs integer and equal request", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"example.com/gpu": q("2")}, Requests: corev1.ResourceList{"example.com/gpu": q("1500m")}}
			return p
		}, []string{
			`spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "1500m": must be an integer`,
			`spec.containers[0].resources.requests: Invalid value: "1500m": must be equal to example.com/gpu limit of 2`,
		}},
		{"bad restart policy", func() runtime.Object {
			p := validPod()
			p.Spec.RestartPolicy = "Sometimes"
			return p
		}, []string{`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`}},
		{"bad port protocol", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000, Protocol: "HTTP"}}
			return p
		}, []string{
			`spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`,
			`spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`,
		}},
		{"mount of unknown volume", func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			return p
		}, []string{`spec.containers[0].volumeMounts[0].name: Not found: "data"`}},
		{"two volume sources", func() runtime.Object {
			p := validPod()
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{}, Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
			return p
		}, []string{`spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type`}},
		{"namespace name must be a DNS label", func() runtime.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}
		}, []string{`metadata.name: Invalid value: "a.b": must not contain dots`}},
		{"non-standard finalizer", func() runtime.Object {
			p := validPod()
			p.Finalizers = []string{"cleanup"}
			return p
		}, []string{`metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified`}},
		{"service name must be a DNS-1035 label", func() runtime.Object {
			s := validService()
			s.Name = "1web"
			return s
		}, []string{`metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}},
		{"service without ports", func() runtime.Object {
			s := validService()
			s.Spec.Ports = nil
			return s
		}, []string{`spec.ports: Required value`}},
		{"service ports: names required and unique, duplicates", func() runtime.Object {
			s := validService()
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Port: 80}}
			return s
		}, []string{
			`spec.ports[1].name: Required value`,
			`spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}`,
		}},
		{"service bad type", func() runtime.Object {
			s := validService()
			s.Spec.Type = "Internal"
			return s
		}, []string{`spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`}},
		{"cluster ip service with node port", func() runtime.Object {
			s := validService()
			s.Spec.Ports[0].NodePort = 30080
			return s
		}, []string{`spec.ports[0].nodePort: Forbidden: may not be used when ` + "`type`" + ` is 'ClusterIP'`}},
		{"headless service needs no ports", func() runtime.Object {
			s := validService()
			s.Spec.Ports = nil
			s.Spec.ClusterIP = "None"
			return s
		}, nil},
		{"configmap key", func() runtime.Object {
			return &corev1.ConfigMap{ObjectMeta: meta("c"), Data: map[string]string{"a/b": "x"}}
		}, []string{`data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`}},
		{"tls secret keys", func() runtime.Object {
			return &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil}}
		}, []string{`data[tls.key]: Required value`}},
		{"pvc without access modes and storage", func() runtime.Object {
			c := validPVC()
			c.Spec.AccessModes = nil
			c.Spec.Resources.Requests = nil
			return c
		}, []string{
			`spec.accessModes: Required value: at least 1 access mode is required`,
			`spec.resources[storage]: Required value`,
		}},
		{"pvc zero storage", func() runtime.Object {
			c := validPVC()
			c.Spec.Resources.Requests["storage"] = q("0")
			return c
		}, []string{`spec.resources[storage]: Invalid value: "0": must be greater than zero`}},
		{"limit range ordering", func() runtime.Object {
			return &corev1.LimitRange{ObjectMeta: meta("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{"cpu": q("2")}, Max: corev1.ResourceList{"cpu": q("1")},
				Default: corev1.ResourceList{"cpu": q("1")}, DefaultRequest: corev1.ResourceList{"cpu": q("1")}}}}}
		}, []string{
			`spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1`,
			`spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than default request value 1`,
			`spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1`,
		}},
		{"limit range pod defaults and bad type", func() runtime.Object {
			return &corev1.LimitRange{ObjectMeta: meta("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
				{Type: corev1.LimitTypePod, Default: corev1.ResourceList{"cpu": q("1")}},
				{Type: "Node"},
				{Type: corev1.LimitTypePersistentVolumeClaim},
			}}}
		}, []string{
			`spec.limits[0].default: Forbidden: may not be specified when ` + "`type`" + ` is 'Pod'`,
			`spec.limits[1].type: Invalid value: "Node": must be a standard limit type or fully qualified`,
			`spec.limits[2].limits: Required value: either minimum or maximum storage value is required, but neither was provided`,
		}},
		{"deployment selector mismatch", func() runtime.Object {
			d := validDeployment()
			d.Spec.Template.Labels = map[string]string{"app": "other"}
			return d
		}, []string{"spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`"}},
		{"deployment without selector, negative replicas", func() runtime.Object {
			d := validDeployment()
			d.Spec.Selector = nil
			d.Spec.Replicas = ptr(int32(-1))
			return d
		}, []string{
			`spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
			`spec.selector: Required value`,
			// A nil selector parses as "nothing", which matches no labels.
			"spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`",
		}},
		{"replicaset restart policy", func() runtime.Object {
			rs := &appsv1.ReplicaSet{ObjectMeta: meta("rs"), Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: appLabels}, Template: template(appLabels)}}
			rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			return rs
		}, []string{`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`}},
		{"replication controller without selector labels", func() runtime.Object {
			return &corev1.ReplicationController{ObjectMeta: meta("rc"), Spec: corev1.ReplicationControllerSpec{
				Template: &corev1.PodTemplateSpec{Spec: podSpec1()}}}
		}, []string{`spec.selector: Required value`}},
		{"statefulset name is a DNS label", func() runtime.Object {
			return &appsv1.StatefulSet{ObjectMeta: meta("db.0"), Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: appLabels}, Template: template(appLabels)}}
		}, []string{`metadata.name: Invalid value: "db.0": must not contain dots`}},
		{"daemonset empty selector", func() runtime.Object {
			return &appsv1.DaemonSet{ObjectMeta: meta("ds"), Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{}, Template: template(appLabels)}}
		}, []string{`spec.selector: Invalid value: {}: empty selector is invalid for daemonset`}},
		{"job restart policy always", func() runtime.Object {
			j := validJob()
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			return j
		}, []string{`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"indexed job needs completions", func() runtime.Object {
			j := validJob()
			j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
			j.Spec.Parallelism = ptr(int32(2))
			return j
		}, []string{`spec.completions: Required value: when completion mode is Indexed`}},
		{"cronjob schedule", func() runtime.Object {
			c := &batchv1.CronJob{ObjectMeta: meta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "61 * * * *"}}
			c.Spec.JobTemplate.Spec.Template = template(nil)
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			return c
		}, []string{`spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`}},
		{"cronjob field count and TZ", func() runtime.Object {
			c := &batchv1.CronJob{ObjectMeta: meta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "TZ=UTC * * *"}}
			c.Spec.JobTemplate.Spec.Template = template(nil)
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			return c
		}, []string{
			`spec.schedule: Invalid value: "TZ=UTC * * *": expected exactly 5 fields, found 3: [* * *]`,
			`spec.schedule: Invalid value: "TZ=UTC * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`,
		}},
		{"priority class preemption policy", func() runtime.Object {
			pp := corev1.PreemptionPolicy("Sometimes")
			return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Value: 10, PreemptionPolicy: &pp}
		}, []string{`preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"`}},
		{"priority class reserved prefix", func() runtime.Object {
			return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-mine"}, Value: 10}
		}, []string{`metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class`}},
		{"priority class value too high", func() runtime.Object {
			return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000000001}
		}, []string{`value: Forbidden: maximum allowed value of a user defined priority is 1000000000`}},
		{"storage class provisioner required", func() runtime.Object {
			return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}
		}, []string{`provisioner: Required value`}},
		{"node name", func() runtime.Object {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "Node_1"}}
		}, []string{`metadata.name: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"service account", func() runtime.Object {
			return &corev1.ServiceAccount{ObjectMeta: meta("builder")}
		}, nil},
		{"event namespace mismatch", func() runtime.Object {
			return &corev1.Event{ObjectMeta: meta("e.1"), InvolvedObject: corev1.ObjectReference{Namespace: "other"}}
		}, []string{`involvedObject.namespace: Invalid value: "other": does not match event.namespace`}},
		{"unknown kind", func() runtime.Object { return &corev1.ResourceQuota{} }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := errStrings(Validate(prepare(tc.obj())))
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("errors differ (-want +got):\n%s", d)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name     string
		old, new func() runtime.Object
		want     []string
	}{
		{"pod image change allowed", func() runtime.Object { return validPod() }, func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Image = "nginx:1.26"
			return p
		}, nil},
		{"pod add container", func() runtime.Object { return validPod() }, func() runtime.Object {
			p := validPod()
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "x:1"})
			return p
		}, []string{`spec.containers: Forbidden: pod updates may not add or remove containers`}},
		{"pod deadline raised", func() runtime.Object {
			p := validPod()
			p.Spec.ActiveDeadlineSeconds = ptr(int64(10))
			return p
		}, func() runtime.Object {
			p := validPod()
			p.Spec.ActiveDeadlineSeconds = ptr(int64(20))
			return p
		}, []string{`spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value`}},
		{"pvc storage shrink", func() runtime.Object {
			c := validPVC()
			c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{"storage": q("1Gi")}}
			return c
		}, func() runtime.Object {
			c := validPVC()
			c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{"storage": q("1Gi")}}
			c.Spec.Resources.Requests["storage"] = q("500Mi")
			return c
		}, []string{`spec.resources.requests.storage: Forbidden: field can not be less than status.capacity`}},
		{"bound pvc storage increase allowed", func() runtime.Object {
			c := validPVC()
			c.Status.Phase = corev1.ClaimBound
			return c
		}, func() runtime.Object {
			c := validPVC()
			c.Status.Phase = corev1.ClaimBound
			c.Spec.Resources.Requests["storage"] = q("2Gi")
			return c
		}, nil},
		{"priority class value immutable", func() runtime.Object {
			return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "1"}, Value: 1}
		}, func() runtime.Object {
			return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "1"}, Value: 2}
		}, []string{`value: Forbidden: may not be changed in an update.`}},
		{"secret type immutable", func() runtime.Object {
			return &corev1.Secret{ObjectMeta: meta("s")}
		}, func() runtime.Object {
			return &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": nil}}
		}, []string{`type: Invalid value: "kubernetes.io/basic-auth": field is immutable`}},
		{"job completions immutable", func() runtime.Object { return validJob() }, func() runtime.Object {
			j := validJob()
			j.Spec.Completions = ptr(int32(3))
			return j
		}, []string{`spec.completions: Invalid value: 3: field is immutable`}},
		{"deployment selector immutable", func() runtime.Object { return validDeployment() }, func() runtime.Object {
			d := validDeployment()
			d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "fe"}}
			d.Spec.Template.Labels = map[string]string{"app": "web", "tier": "fe"}
			return d
		}, []string{`spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"fe"}}: field is immutable`}},
		{"statefulset service name immutable", func() runtime.Object {
			return &appsv1.StatefulSet{ObjectMeta: meta("db"), Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: appLabels}, Template: template(appLabels)}}
		}, func() runtime.Object {
			return &appsv1.StatefulSet{ObjectMeta: meta("db"), Spec: appsv1.StatefulSetSpec{ServiceName: "db",
				Selector: &metav1.LabelSelector{MatchLabels: appLabels}, Template: template(appLabels)}}
		}, []string{`spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`}},
		{"kind mismatch", func() runtime.Object { return validPod() }, func() runtime.Object { return validService() },
			[]string{`<nil>: Internal error: cannot validate an update from *v1.Pod to *v1.Service`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, o := prepare(tc.new()), prepare(tc.old())
			for _, obj := range []runtime.Object{n, o} {
				if m, ok := obj.(metav1.Object); ok {
					m.SetResourceVersion("7")
				}
			}
			got := errStrings(ValidateUpdate(n, o))
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("errors differ (-want +got):\n%s", d)
			}
		})
	}
}

func TestPodUpdateForbiddenSpecChange(t *testing.T) {
	old := prepare(validPod()).(*corev1.Pod)
	old.ResourceVersion = "7"
	n := old.DeepCopy()
	n.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"cpu": q("1")}
	errs := ValidateUpdate(n, old)
	if len(errs) != 1 {
		t.Fatalf("got %v", errs)
	}
	const prefix = "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
	if !strings.HasPrefix(errs[0].Error(), prefix) {
		t.Fatalf("got %q", errs[0].Error())
	}
}

func TestCronParser(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"*/5 * * * *", ""},
		{"0 0 * * mon-fri", ""},
		{"@hourly", ""},
		{"@every 1h30m", ""},
		{"CRON_TZ=UTC 0 * * * *", ""},
		{"", "empty spec string"},
		{"@often", "unrecognized descriptor: @often"},
		{"@every x", `failed to parse duration @every x: time: invalid duration "x"`},
		{"a * * * *", `failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax`},
		{"1-2-3 * * * *", "too many hyphens: 1-2-3"},
		{"*/0 * * * *", "step of range should be a positive number: */0"},
		{"5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"},
		{"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
		{"* * * * 7", "end of range (7) above maximum (6): 7"},
		{"1/2/3 * * * *", "too many slashes: 1/2/3"},
		{"TZ=Nowhere/Land * * * * *", "provided bad location Nowhere/Land: unknown time zone Nowhere/Land"},
	}
	for _, tc := range tests {
		_, err := ParseCron(tc.spec)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("ParseCron(%q) = %q, want %q", tc.spec, got, tc.want)
		}
	}
}

func TestNameRule(t *testing.T) {
	if len(NameRule(&corev1.Service{})("web-", true)) != 0 || len(NameRule(&corev1.Service{})("1web", false)) == 0 {
		t.Fatal("service names follow DNS-1035 labels")
	}
	if len(NameRule(&corev1.ConfigMap{})("a.b", false)) != 0 || len(NameRule(&corev1.Namespace{})("a.b", false)) == 0 {
		t.Fatal("configmaps take subdomains, namespaces labels")
	}
}
