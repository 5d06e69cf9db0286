package defaulttolerationseconds

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

// DefaultSeconds is how long the added tolerations tolerate the taints (upstream's
// --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds).
const DefaultSeconds = int64(300)

var podResource = schema.GroupResource{Resource: "pods"}

// Plugin is the DefaultTolerationSeconds admission plugin.
type Plugin struct{}

var (
	_ admission.Handler = Plugin{}
	_ admission.Mutator = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns "DefaultTolerationSeconds".
func (Plugin) Name() string { return admission.DefaultTolerationSeconds }

// Handles reports true for CREATE and UPDATE, as upstream's plugin runs on both.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit adds the missing tolerations.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource() != podResource {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok || pod == nil {
		return nil
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if (t.Key == corev1.TaintNodeNotReady || t.Key == "") && noExecute {
			notReady = true
		}
		if (t.Key == corev1.TaintNodeUnreachable || t.Key == "") && noExecute {
			unreachable = true
		}
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable))
	}
	return nil
}

func toleration(key string) corev1.Toleration {
	s := DefaultSeconds
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s}
}
