package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodContainerRestartRules: container restart rules (ContainerRestartRules and
// RestartAllContainersOnContainerExits, both on by default in v1.37) as upstream validates
// them on pod create: any container may set restartPolicy Always, Never or OnFailure, rules
// need a restartPolicy, each rule a Restart or RestartAllContainers action and exitCodes
// with operator In or NotIn, at most 20 rules and 255 values; an init container without
// restartPolicy Always stays a plain init container. Accepted pods keep their rules. The
// texts were taken from kube-apiserver's strategy and validation run on the same pods.
func TestPodContainerRestartRules(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "crr"
	mkNamespace(t, s, ns)
	pods := s.Client.CoreV1().Pods(ns)

	rule := func(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, vals ...int32) corev1.ContainerRestartRule {
		return corev1.ContainerRestartRule{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: vals}}
	}
	restart := func() corev1.ContainerRestartRule { return rule("Restart", "In", 42) }
	rules := func(n int, r corev1.ContainerRestartRule) []corev1.ContainerRestartRule {
		out := make([]corev1.ContainerRestartRule, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	codes := make([]int32, 256)
	for i := range codes {
		codes[i] = int32(i)
	}
	regular := func(rp corev1.ContainerRestartPolicy, rs ...corev1.ContainerRestartRule) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			if rp != "" {
				s.Containers[0].RestartPolicy = ptr.To(rp)
			}
			s.Containers[0].RestartPolicyRules = rs
		}
	}
	initC := func(mut func(*corev1.Container)) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			c := corev1.Container{Name: "i", Image: "nginx"}
			mut(&c)
			s.InitContainers = []corev1.Container{c}
		}
	}
	cases := []struct {
		name string
		spec func(*corev1.PodSpec)
		want string
	}{
		{"rp-never", regular("Never"), ""},
		{"rp-bogus", regular("Sometimes"),
			`Pod "rp-bogus" is invalid: spec.containers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`},
		{"rules-no-rp", regular("", restart()),
			`Pod "rules-no-rp" is invalid: spec.containers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used`},
		{"rule-action", regular("Never", rule("Stop", "In", 42)),
			`Pod "rule-action" is invalid: spec.containers[0].restartPolicyRules[0].action: Unsupported value: "Stop": supported values: "Restart", "RestartAllContainers"`},
		{"rule-noexit", regular("Never", corev1.ContainerRestartRule{Action: "Restart"}),
			`Pod "rule-noexit" is invalid: spec.containers[0].restartPolicyRules[0].exitCodes: Required value: must be specified`},
		{"rule-op", regular("Never", rule("Restart", "Equals", 42)),
			`Pod "rule-op" is invalid: spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Equals": supported values: "In", "NotIn"`},
		{"rules-many", regular("Never", rules(21, restart())...),
			`Pod "rules-many" is invalid: spec.containers[0].restartPolicyRules: Too many: 21: must have at most 20 items`},
		{"values-many", regular("OnFailure", rule("Restart", "NotIn", codes...)),
			`Pod "values-many" is invalid: spec.containers[0].restartPolicyRules[0].exitCodes.values: Too many: 256: must have at most 255 items`},
		{"all-ok", func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyNever
			regular("Always", rule("RestartAllContainers", "In", 42), rule("Restart", "NotIn", 0, 1))(s)
		}, ""},
		{"empty-values", regular("Never", rule("Restart", "In")), ""},
		{"multi", regular("Bogus", corev1.ContainerRestartRule{ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{}}),
			`Pod "multi" is invalid: [spec.containers[0].restartPolicy: Unsupported value: "Bogus": supported values: "Always", "Never", "OnFailure", spec.containers[0].restartPolicyRules[0].action: Unsupported value: "": supported values: "Restart", "RestartAllContainers", spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "": supported values: "In", "NotIn"]`},
		{"init-never", initC(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = []corev1.ContainerRestartRule{restart()}
		}), ""},
		{"init-onfailure-probe", initC(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
			c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		}), `Pod "init-onfailure-probe" is invalid: spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always`},
		{"init-rules-no-rp", initC(func(c *corev1.Container) { c.RestartPolicyRules = []corev1.ContainerRestartRule{restart()} }),
			`Pod "init-rules-no-rp" is invalid: spec.initContainers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used`},
		{"init-bogus", initC(func(c *corev1.Container) { c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicy("Sometimes")) }),
			`Pod "init-bogus" is invalid: spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`},
		{"sidecar-rules", initC(func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			c.RestartPolicyRules = []corev1.ContainerRestartRule{rule("RestartAllContainers", "In", 42), rule("Bogus", "In", 42)}
		}), `Pod "sidecar-rules" is invalid: spec.initContainers[0].restartPolicyRules[1].action: Unsupported value: "Bogus": supported values: "Restart", "RestartAllContainers"`},
		{"resize-never", func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyNever
			s.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: "cpu", RestartPolicy: corev1.RestartContainer}}
		}, "Pod \"resize-never\" is invalid: spec.containers[0].resizePolicy: Invalid value: \"RestartContainer\": must be 'NotRequired' when pod `restartPolicy` is 'Never'"},
	}
	for _, c := range cases {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		c.spec(&p.Spec)
		got, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if c.want != "" {
			if err == nil {
				t.Errorf("%s: created, want %s", c.name, c.want)
				continue
			}
			expectInvalid(t, err, c.want)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i, w := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			g := append(got.Spec.InitContainers, got.Spec.Containers...)[i]
			if !ptr.Equal(g.RestartPolicy, w.RestartPolicy) || len(g.RestartPolicyRules) != len(w.RestartPolicyRules) {
				t.Errorf("%s: stored container %s restartPolicy %v rules %v, want %v %v", c.name, g.Name, g.RestartPolicy, g.RestartPolicyRules, w.RestartPolicy, w.RestartPolicyRules)
			}
		}
	}
}
