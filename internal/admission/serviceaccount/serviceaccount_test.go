package serviceaccount

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

// accounts is a Reader of ServiceAccounts by namespace/name.
type accounts map[string]*corev1.ServiceAccount

func (a accounts) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if sa, ok := a[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (a accounts) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, nil
}

func TestAdmit(t *testing.T) {
	no := false
	r := accounts{"ns/default": {}, "ns/robot": {}, "ns/quiet": {AutomountServiceAccountToken: &no}}
	mount := corev1.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: MountPath}
	cases := []struct {
		name        string
		pod         corev1.PodSpec
		annotations map[string]string
		wantSA      string
		wantMounts  int
		wantVolumes int
		wantErr     string
	}{
		{name: "defaults", pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}, wantSA: "default", wantMounts: 2, wantVolumes: 1},
		{name: "named account", pod: corev1.PodSpec{ServiceAccountName: "robot", Containers: []corev1.Container{{Name: "a"}}}, wantSA: "robot", wantMounts: 1, wantVolumes: 1},
		{name: "account opts out", pod: corev1.PodSpec{ServiceAccountName: "quiet", Containers: []corev1.Container{{Name: "a"}}}, wantSA: "quiet"},
		{name: "pod opts out", pod: corev1.PodSpec{AutomountServiceAccountToken: &no, Containers: []corev1.Container{{Name: "a"}}}, wantSA: "default"},
		{name: "mount path taken", pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", VolumeMounts: []corev1.VolumeMount{{Name: "mine", MountPath: MountPath}}}}}, wantSA: "default"},
		{name: "missing account", pod: corev1.PodSpec{ServiceAccountName: "gone", Containers: []corev1.Container{{Name: "a"}}},
			wantErr: `pods "p" is forbidden: error looking up service account ns/gone: serviceaccount "gone" not found`},
		{name: "mirror pod", annotations: map[string]string{"kubernetes.io/config.mirror": "x"}, pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := New(r)
			p.name = func(prefix string) string { return prefix + "abcde" }
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: tc.annotations}, Spec: *tc.pod.DeepCopy()}
			err := p.Admit(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "ns", Name: "p", Object: pod})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mounts := 0
			for _, c := range pod.Spec.Containers {
				for _, m := range c.VolumeMounts {
					if reflect.DeepEqual(m, mount) {
						mounts++
					}
				}
			}
			if pod.Spec.ServiceAccountName != tc.wantSA || mounts != tc.wantMounts || len(pod.Spec.Volumes) != tc.wantVolumes {
				t.Errorf("sa %q mounts %d volumes %d", pod.Spec.ServiceAccountName, mounts, len(pod.Spec.Volumes))
			}
		})
	}
}
