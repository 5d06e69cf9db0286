package validation

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"
)

// TestPodWarnings: the warnings of a pod's creation are upstream's (pkg/api/pod/warnings.go
// and the pod strategy), text for text, in upstream's order.
func TestPodWarnings(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "Web.1", Annotations: map[string]string{
			"scheduler.alpha.kubernetes.io/critical-pod":                      "",
			corev1.SeccompPodAnnotationKey:                                    "runtime/default",
			corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": "runtime/default",
		}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux"},
			Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "failure-domain.beta.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a b"}}}}}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}},
			},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule}},
			Volumes: []corev1.Volume{
				{Name: "repo", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "r"}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"},
					Items: []corev1.KeyToPath{{Key: "a", Path: "etc"}, {Key: "b", Path: "etc/b"}}}}},
			},
			HostAliases:                   []corev1.HostAlias{{IP: "10.0.0.1"}, {IP: "10.0.0.1"}},
			ImagePullSecrets:              []corev1.LocalObjectReference{{Name: "s"}, {Name: "s"}},
			TerminationGracePeriodSeconds: kptr.To[int64](-5),
			DNSConfig:                     &corev1.PodDNSConfig{Nameservers: []string{"2001:DB8::1"}},
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1500m")}},
				Env:       []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}, {Name: "A", Value: "$(A)x"}},
				Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 80, Protocol: corev1.ProtocolTCP, HostPort: 8080}},
			}, {
				Name: "side", Image: "busybox",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 81, Protocol: corev1.ProtocolTCP}},
			}},
		},
	}
	// As created: the AppArmor annotation was copied to the container's field.
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
	want := []string{
		`metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		`metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]`,
		`spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
		`spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
		`spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: a b is invalid, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		`spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod`,
		`metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
		`spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+`,
		`volume "cfg" (ConfigMap "c"): overlapping paths: "etc/b" with "etc"`,
		`spec.hostAliases[1].ip: duplicate ip "10.0.0.1"`,
		`spec.imagePullSecrets[1].name: duplicate name "s"`,
		`metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
		`spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer`,
		`spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply`,
		`spec.containers[0].ports[1]: overlapping port definition with spec.containers[0].ports[0]`,
		`spec.containers[1].ports[0]: duplicate port name "http" with spec.containers[0].ports[0], services and probes that select ports by name will use spec.containers[0].ports[0]`,
		`spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`,
		`spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod`,
		`spec.dnsConfig.nameservers[0]: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`,
	}
	got := PodWarnings(pod)
	if !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("warning %d:\n got %s\nwant %s", i, g, w)
			}
		}
	}
	// A pod that warns of nothing.
	clean := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if w := PodWarnings(clean); len(w) != 0 {
		t.Errorf("a plain pod warns: %q", w)
	}
}

// TestWorkloadWarnings: templates warn at their path on create, and on update only when
// the generation moved; upstream's quirks are kept (a ReplicationController's update warns of
// the old template; a StatefulSet's claim templates at "Spec").
func TestWorkloadWarnings(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"beta.kubernetes.io/arch": "amd64"}, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	archWarning := func(path string) string {
		return path + `.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}, Spec: appsv1.DeploymentSpec{Template: tmpl}}
	if got := DeploymentWarnings(d, nil); !slices.Equal(got, []string{archWarning("spec.template")}) {
		t.Errorf("deployment create: %q", got)
	}
	same := d.DeepCopy()
	if got := DeploymentWarnings(d, same); len(got) != 0 {
		t.Errorf("deployment update with the same generation: %q", got)
	}
	same.Generation = 0
	if got := DeploymentWarnings(d, same); len(got) != 1 {
		t.Errorf("deployment update of the spec: %q", got)
	}
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2}, Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{}}}
	oldRC := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}, Spec: corev1.ReplicationControllerSpec{Template: &tmpl}}
	if got := ReplicationControllerWarnings(rc, oldRC); !slices.Equal(got, []string{archWarning("spec.template")}) {
		t.Errorf("replication controller update (upstream warns of the old template): %q", got)
	}
	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 1}, Spec: appsv1.StatefulSetSpec{
		RevisionHistoryLimit: kptr.To[int32](-1),
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500m")}}}}}}}
	wantCreate := []string{`spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
		`spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended`}
	if got := StatefulSetWarnings(ss, nil); !slices.Equal(got, wantCreate) {
		t.Errorf("statefulset create: %q", got)
	}
	if got := StatefulSetWarnings(ss, ss.DeepCopy()); len(got) != 2 || got[0] != `spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer` {
		t.Errorf("statefulset update: %q", got)
	}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly_job", Generation: 1}, Spec: batchv1.CronJobSpec{Schedule: "CRON_TZ=UTC 0 0 * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}
	got := CronJobWarnings(cj, nil)
	if len(got) != 2 || got[1] != archWarning("spec.jobTemplate.spec.template") {
		t.Errorf("cronjob create: %q", got)
	}
	if got := CronJobWarnings(cj, cj.DeepCopy()); !slices.Equal(got, []string{`cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`}) {
		t.Errorf("cronjob update: %q", got)
	}
}

// TestSecurityProfileFields: seccompProfile and appArmorProfile fields of pods and
// containers are validated as upstream's validateSeccompProfileField and
// ValidateAppArmorProfileField.
func TestSecurityProfileFields(t *testing.T) {
	pod := func(psc *corev1.PodSecurityContext, csc *corev1.SecurityContext) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, TerminationGracePeriodSeconds: kptr.To[int64](30),
			SchedulerName: "default-scheduler", SecurityContext: psc,
			Containers: []corev1.Container{{Name: "c", Image: "x", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile, SecurityContext: csc}}}}
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want []string
	}{
		"seccomp without type": {pod(&corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{}}, nil),
			[]string{`spec.securityContext.seccompProfile.type: Required value: type is required when seccompProfile is set`}},
		"seccomp localhost without profile": {pod(nil, &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}),
			[]string{`spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost`}},
		"seccomp localhost escaping": {pod(nil, &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: kptr.To("../x.json")}}),
			[]string{`spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "../x.json": must not contain '..'`}},
		"seccomp unknown type": {pod(&corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: "Other"}}, nil),
			[]string{`spec.securityContext.seccompProfile.type: Unsupported value: "Other": supported values: "Localhost", "RuntimeDefault", "Unconfined"`}},
		"apparmor localhost padded": {pod(&corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: kptr.To(" p ")}}, nil),
			[]string{`spec.securityContext.appArmorProfile.localhostProfile: Invalid value: " p ": must not be padded with whitespace`}},
		"apparmor runtime default with a profile": {pod(nil, &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault, LocalhostProfile: kptr.To("p")}}),
			[]string{`spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value: "p": can only be set when AppArmor type is Localhost`}},
		"apparmor without type": {pod(nil, &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{}}),
			[]string{`spec.containers[0].securityContext.appArmorProfile.type: Required value: type is required when appArmorProfile is set`}},
		"valid": {pod(&corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			&corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: kptr.To("k8s-apparmor")}}), nil},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range Pod(tc.pod) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProjectedOverlapWarnings: a projected volume's sources are named in upstream's form
// when their paths overlap.
func TestProjectedOverlapWarnings(t *testing.T) {
	vols := []corev1.Volume{{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Items: []corev1.KeyToPath{{Key: "k", Path: "a"}}}},
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Items: []corev1.KeyToPath{{Key: "k", Path: "a/b"}}}},
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "a"}},
	}}}}}
	want := []string{
		`volume "proj" (Projected): overlapping paths: "a/b" (Secret "s") with "a" (ConfigMap "c")`,
		`volume "proj" (Projected): overlapping paths: "a" (ServiceAccountToken) with "a" (ConfigMap "c")`,
		`volume "proj" (Projected): overlapping paths: "a" (ServiceAccountToken) with "a/b" (Secret "s")`,
	}
	if got := overlappingPathWarnings(vols); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
}
