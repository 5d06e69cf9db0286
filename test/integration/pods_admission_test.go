package integration

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/admission/serviceaccount"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodAdmissionDefaults: pods get the default ServiceAccount, its projected
// kube-api-access volume mounted in every container, and the 300 s not-ready/unreachable
// tolerations; a missing ServiceAccount is upstream's 403; automountServiceAccountToken
// false mounts nothing.
func TestPodAdmissionDefaults(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "podadmission"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	pods := s.Client.CoreV1().Pods(ns)
	in := simplePod("p", nil)
	in.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	p, err := pods.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName = %q", p.Spec.ServiceAccountName)
	}
	if len(p.Spec.Volumes) != 1 || !strings.HasPrefix(p.Spec.Volumes[0].Name, "kube-api-access-") || len(p.Spec.Volumes[0].Name) != len("kube-api-access-")+5 {
		t.Fatalf("volumes: %+v", p.Spec.Volumes)
	}
	vol := p.Spec.Volumes[0]
	if want := serviceaccount.TokenVolume(vol.Name); !reflect.DeepEqual(vol, want) {
		t.Errorf("volume:\n got %+v\nwant %+v", vol, want)
	}
	for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
		if len(c.VolumeMounts) != 1 || !reflect.DeepEqual(c.VolumeMounts[0], corev1.VolumeMount{Name: vol.Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}) {
			t.Errorf("container %s mounts %+v", c.Name, c.VolumeMounts)
		}
	}
	var keys []string
	for _, tol := range p.Spec.Tolerations {
		if tol.Operator != corev1.TolerationOpExists || tol.Effect != corev1.TaintEffectNoExecute || tol.TolerationSeconds == nil || *tol.TolerationSeconds != 300 {
			t.Errorf("toleration %+v", tol)
		}
		keys = append(keys, tol.Key)
	}
	if !reflect.DeepEqual(keys, []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
		t.Errorf("tolerations %v", keys)
	}

	no := false
	off := simplePod("off", nil)
	off.Spec.AutomountServiceAccountToken = &no
	off.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	p, err = pods.Create(ctx, off, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Volumes) != 0 || len(p.Spec.Containers[0].VolumeMounts) != 0 || len(p.Spec.Tolerations) != 1 {
		t.Errorf("automount off / tolerate all: volumes %v tolerations %v", p.Spec.Volumes, p.Spec.Tolerations)
	}

	missing := simplePod("missing", nil)
	missing.Spec.ServiceAccountName = "robot"
	_, err = pods.Create(ctx, missing, metav1.CreateOptions{})
	if want := `pods "missing" is forbidden: error looking up service account podadmission/robot: serviceaccount "robot" not found`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("missing service account:\n got %v\nwant %s", err, want)
	}
	s.CheckInvariant()
}
