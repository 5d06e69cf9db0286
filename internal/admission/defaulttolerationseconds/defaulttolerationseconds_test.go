package defaulttolerationseconds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/admission"
)

func TestAdmit(t *testing.T) {
	cases := []struct {
		name string
		in   []corev1.Toleration
		want int
	}{
		{"none", nil, 2},
		{"tolerates everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, 1},
		{"tolerates not-ready NoExecute", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, 2},
		{"not-ready NoSchedule does not count", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.in}}
			if err := New().Admit(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Object: pod}); err != nil {
				t.Fatal(err)
			}
			if len(pod.Spec.Tolerations) != tc.want {
				t.Fatalf("tolerations %+v, want %d", pod.Spec.Tolerations, tc.want)
			}
			for _, tol := range pod.Spec.Tolerations[len(tc.in):] {
				if tol.Effect != corev1.TaintEffectNoExecute || tol.Operator != corev1.TolerationOpExists || *tol.TolerationSeconds != 300 {
					t.Errorf("added %+v", tol)
				}
			}
		})
	}
}
