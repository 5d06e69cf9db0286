package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

const (
	tolerationsAnn = "scheduler.alpha.kubernetes.io/tolerations"
	seccompPodAnn  = "seccomp.security.alpha.kubernetes.io/pod"
	seccompCtrAnn  = "container.seccomp.security.alpha.kubernetes.io/"
	appArmorAnn    = "container.apparmor.security.beta.kubernetes.io/"
	mirrorAnn      = "kubernetes.io/config.mirror"
)

// TestPodSpecificAnnotations: the annotations upstream validates on pods
// (ValidatePodSpecificAnnotations, ValidatePodSpecificAnnotationUpdates and the
// annotation/field agreement of ValidatePodCreate): the tolerations annotation decodes
// (error texts as upstream's decoding into its internal type) to valid tolerations,
// seccomp annotations name valid profiles and, on create, agree with seccompProfile
// fields, AppArmor annotations name a container and a valid profile, agree with the
// effective appArmorProfile on create (a container without a profile of its own takes the
// annotation's first, as upstream's strategy does) and may not be added, changed or
// removed by an update, nor may the mirror pod annotation. The texts were taken from
// kube-apiserver's strategy and validation run on the same pods.
func TestPodSpecificAnnotations(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "podann"
	mkNamespace(t, s, ns)
	pods := s.Client.CoreV1().Pods(ns)

	ctr := func(name string, sc *corev1.SecurityContext) corev1.Container {
		return corev1.Container{Name: name, Image: "nginx", SecurityContext: sc}
	}
	seccomp := func(typ corev1.SeccompProfileType, local string) *corev1.SecurityContext {
		sp := &corev1.SeccompProfile{Type: typ}
		if local != "" {
			sp.LocalhostProfile = ptr.To(local)
		}
		return &corev1.SecurityContext{SeccompProfile: sp}
	}
	appArmor := func(typ corev1.AppArmorProfileType, local string) *corev1.SecurityContext {
		ap := &corev1.AppArmorProfile{Type: typ}
		if local != "" {
			ap.LocalhostProfile = ptr.To(local)
		}
		return &corev1.SecurityContext{AppArmorProfile: ap}
	}
	creates := []struct {
		name string
		ann  map[string]string
		spec func(*corev1.PodSpec)
		want string
	}{
		{"tol-syntax", map[string]string{tolerationsAnn: "not json"}, nil,
			`Pod "tol-syntax" is invalid: metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations": invalid character 'o' in literal null (expecting 'u')`},
		{"tol-type", map[string]string{tolerationsAnn: `{"key":"a"}`}, nil,
			`Pod "tol-type" is invalid: metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations": json: cannot unmarshal object into Go value of type []core.Toleration`},
		{"tol-field", map[string]string{tolerationsAnn: `[{"key":1}]`}, nil,
			`Pod "tol-field" is invalid: metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations": json: cannot unmarshal number into Go struct field Toleration.Key of type string`},
		{"tol-op", map[string]string{tolerationsAnn: `[{"operator":1}]`}, nil,
			`Pod "tol-op" is invalid: metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations": json: cannot unmarshal number into Go struct field Toleration.Operator of type core.TolerationOperator`},
		{"tol-invalid", map[string]string{tolerationsAnn: `[{"key":"a b","operator":"Exists","value":"x"}]`}, nil,
			`Pod "tol-invalid" is invalid: [metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].key: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: Invalid value: "x": value must be empty when ` + "`operator`" + ` is 'Exists']`},
		{"tol-case", map[string]string{tolerationsAnn: `[{"KEY":"a b","Operator":"Exists"}]`}, nil,
			`Pod "tol-case" is invalid: metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].key: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"tol-ok", map[string]string{tolerationsAnn: `[{"key":"a","operator":"Exists"}]`}, nil, ""},
		{"tol-empty", map[string]string{tolerationsAnn: `[]`}, nil, ""},
		{"sc-pod", map[string]string{seccompPodAnn: "foo"}, nil,
			`Pod "sc-pod" is invalid: metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "foo": must be a valid seccomp profile`},
		{"sc-ctr", map[string]string{seccompCtrAnn + "c": "localhost/../x", seccompCtrAnn + "d": "localhost//abs"}, nil,
			`Pod "sc-ctr" is invalid: [metadata.annotations.container.seccomp.security.alpha.kubernetes.io/c: Invalid value: "../x": must not contain '..', metadata.annotations.container.seccomp.security.alpha.kubernetes.io/d: Invalid value: "/abs": must be a relative path]`},
		{"sc-ok", map[string]string{seccompPodAnn: "runtime/default", seccompCtrAnn + "c": "docker/default"}, nil, ""},
		{"aa-missing", map[string]string{appArmorAnn + "nope": "runtime/default"}, nil,
			`Pod "aa-missing" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/nope]: Invalid value: "nope": container not found`},
		{"aa-bad", map[string]string{appArmorAnn + "c": "bogus"}, nil,
			`Pod "aa-bad" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: Invalid value: "bogus": invalid AppArmor profile name: "bogus"`},
		{"aa-ok", map[string]string{appArmorAnn + "c": "localhost/prof"}, nil, ""},
		{"sc-mismatch", map[string]string{seccompPodAnn: "unconfined"}, func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		}, `Pod "sc-mismatch" is invalid: spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match`},
		{"sc-ctr-mismatch", map[string]string{seccompCtrAnn + "c": "localhost/a"}, func(s *corev1.PodSpec) {
			s.Containers = []corev1.Container{ctr("c", seccomp(corev1.SeccompProfileTypeLocalhost, "b"))}
		}, `Pod "sc-ctr-mismatch" is invalid: spec.containers[0].securityContext.seccompProfile.localhostProfile: Forbidden: seccomp profile in annotation and field must match`},
		{"sc-ctr-type", map[string]string{seccompCtrAnn + "c": "runtime/default"}, func(s *corev1.PodSpec) {
			s.Containers = []corev1.Container{ctr("c", seccomp(corev1.SeccompProfileTypeUnconfined, ""))}
		}, `Pod "sc-ctr-type" is invalid: spec.containers[0].securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match`},
		// The container has no profile of its own: it takes the annotation's, which
		// then agrees with it (the pod's profile is not compared).
		{"aa-mismatch", map[string]string{appArmorAnn + "c": "unconfined"}, func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
		}, ""},
		{"aa-localhost", map[string]string{appArmorAnn + "i": "localhost/a"}, func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{ctr("i", appArmor(corev1.AppArmorProfileTypeLocalhost, "b"))}
		}, `Pod "aa-localhost" is invalid: spec.initContainers[0].securityContext.appArmorProfile.localhostProfile: Forbidden: apparmor profile in annotation and field must match`},
		{"aa-type", map[string]string{appArmorAnn + "c": "runtime/default"}, func(s *corev1.PodSpec) {
			s.Containers = []corev1.Container{ctr("c", appArmor(corev1.AppArmorProfileTypeLocalhost, "b"))}
		}, `Pod "aa-type" is invalid: spec.containers[0].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and field must match`},
		{"mirror", map[string]string{mirrorAnn: "x"}, nil,
			`Pod "mirror" is invalid: metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set spec.nodeName if mirror pod annotation is set`},
	}
	stored := map[string]*corev1.Pod{}
	for _, c := range creates {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name, Annotations: c.ann}, Spec: corev1.PodSpec{Containers: []corev1.Container{ctr("c", nil)}}}
		if c.spec != nil {
			c.spec(&p.Spec)
		}
		got, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			stored[c.name] = got
			continue
		}
		if err == nil {
			t.Errorf("%s: created, want %s", c.name, c.want)
			continue
		}
		expectInvalid(t, err, c.want)
	}
	if p := stored["aa-mismatch"]; p != nil {
		if sc := p.Spec.Containers[0].SecurityContext; sc == nil || sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined {
			t.Errorf("aa-mismatch: container securityContext %+v, want appArmorProfile Unconfined from the annotation", sc)
		}
	}
	if p := stored["aa-ok"]; p != nil {
		if sc := p.Spec.Containers[0].SecurityContext; sc == nil || sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeLocalhost || ptr.Deref(sc.AppArmorProfile.LocalhostProfile, "") != "prof" {
			t.Errorf("aa-ok: container securityContext %+v, want appArmorProfile Localhost prof", sc)
		}
	}

	updates := []struct {
		name     string
		old, new map[string]string
		nodeName string
		want     string
	}{
		{"u-aa-add", nil, map[string]string{appArmorAnn + "c": "runtime/default"}, "",
			`Pod "u-aa-add" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: Forbidden: may not add AppArmor annotations`},
		{"u-aa-change", map[string]string{appArmorAnn + "c": "runtime/default"}, map[string]string{appArmorAnn + "c": "unconfined"}, "",
			`Pod "u-aa-change" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: Forbidden: may not remove or update AppArmor annotations`},
		{"u-aa-remove", map[string]string{appArmorAnn + "c": "runtime/default"}, nil, "",
			`Pod "u-aa-remove" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: Forbidden: may not remove or update AppArmor annotations`},
		{"u-mirror-add", nil, map[string]string{mirrorAnn: "x"}, "n1",
			`Pod "u-mirror-add" is invalid: metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod annotation`},
		{"u-sc-bad", nil, map[string]string{seccompPodAnn: "foo"}, "",
			`Pod "u-sc-bad" is invalid: metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "foo": must be a valid seccomp profile`},
		{"u-tol-bad", nil, map[string]string{tolerationsAnn: "nope"}, "",
			`Pod "u-tol-bad" is invalid: metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations": invalid character 'o' in literal null (expecting 'u')`},
	}
	for _, c := range updates {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name, Annotations: c.old}, Spec: corev1.PodSpec{NodeName: c.nodeName, Containers: []corev1.Container{ctr("c", nil)}}}
		p, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("%s: create: %v", c.name, err)
			continue
		}
		p.Annotations = c.new
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		if err == nil {
			t.Errorf("%s: updated, want %s", c.name, c.want)
			continue
		}
		expectInvalid(t, err, c.want)
	}
}
