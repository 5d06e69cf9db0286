package workloads

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func TestParentAndOrdinal(t *testing.T) {
	tests := []struct {
		name   string
		parent string
		ord    int
	}{
		{"web-0", "web", 0},
		{"my-web-12", "my-web", 12},
		{"web", "", -1},
		{"web-", "", -1},
		{"web-99999999999", "web", -1},
	}
	for _, tt := range tests {
		p, o := parentAndOrdinal(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tt.name}})
		if p != tt.parent || o != tt.ord {
			t.Errorf("%s: got (%q, %d), want (%q, %d)", tt.name, p, o, tt.parent, tt.ord)
		}
	}
}

func TestClaimRefs(t *testing.T) {
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "set"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", UID: "pod"}}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "other"}
	yes := true
	r, d := appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	tests := []struct {
		whenDeleted, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType
		scaledDown              bool
		refs                    []metav1.OwnerReference
		want                    []types.UID
	}{
		{r, r, false, nil, nil},
		{r, r, true, []metav1.OwnerReference{other, {UID: "set"}}, []types.UID{"other"}},
		{d, r, false, nil, []types.UID{"set"}},
		{d, r, true, nil, []types.UID{"set"}},
		{r, d, false, []metav1.OwnerReference{{UID: "pod"}}, []types.UID{}},
		{r, d, true, nil, []types.UID{"pod"}},
		{d, d, false, []metav1.OwnerReference{{UID: "pod"}}, []types.UID{"set"}},
		{d, d, true, []metav1.OwnerReference{{UID: "set"}}, []types.UID{"pod"}},
		{d, d, false, []metav1.OwnerReference{{UID: "other", Controller: &yes}, {UID: "set"}}, []types.UID{"other"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/scaled=%v", tt.whenDeleted, tt.whenScaled, tt.scaledDown), func(t *testing.T) {
			s := set.DeepCopy()
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: tt.whenDeleted, WhenScaled: tt.whenScaled}
			got := claimRefs(tt.refs, s, pod, tt.scaledDown)
			var uids []types.UID
			for _, r := range got {
				uids = append(uids, r.UID)
				if (r.UID == "set" || r.UID == "pod") && (r.Controller == nil || !*r.Controller) && r.Kind != "" {
					t.Errorf("ref %+v is not a controller ref", r)
				}
			}
			if fmt.Sprint(uids) != fmt.Sprint(tt.want) {
				t.Errorf("refs = %v, want %v", uids, tt.want)
			}
		})
	}
}

func TestNewStatefulPod(t *testing.T) {
	one := int32(1)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u"},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: "nginx",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, {Name: "cfg"}},
			}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "db"}}}},
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &one}},
		},
	}
	s := &stsSync{set: set, current: &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-old"}}, update: &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-new"}},
		curTmpl: &set.Spec.Template, updTmpl: &set.Spec.Template}
	p0, p1 := s.newPod(0), s.newPod(1)
	if p0.Name != "web-0" || p0.Labels[revisionHashLabel] != "web-old" || p1.Labels[revisionHashLabel] != "web-new" {
		t.Errorf("below the partition the current revision: %s %v, %s %v", p0.Name, p0.Labels, p1.Name, p1.Labels)
	}
	if p1.Labels["statefulset.kubernetes.io/pod-name"] != "web-1" || p1.Labels["apps.kubernetes.io/pod-index"] != "1" || p1.Spec.Hostname != "web-1" || p1.Spec.Subdomain != "nginx" {
		t.Errorf("identity: %v %q %q", p1.Labels, p1.Spec.Hostname, p1.Spec.Subdomain)
	}
	if len(p1.Spec.Volumes) != 2 || p1.Spec.Volumes[0].PersistentVolumeClaim == nil || p1.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-web-1" || p1.Spec.Volumes[1].Name != "cfg" {
		t.Errorf("volumes: %+v", p1.Spec.Volumes)
	}
	if ref := metav1.GetControllerOf(p1); ref == nil || ref.Kind != "StatefulSet" || ref.UID != "u" {
		t.Errorf("owner: %+v", p1.OwnerReferences)
	}
	claims := claimsOf(set, 1)
	if len(claims) != 1 || claims[0].Name != "data-web-1" || claims[0].Labels["tier"] != "db" || claims[0].Labels["app"] != "web" {
		t.Errorf("claims: %+v", claims)
	}
}

func TestRevisionData(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	data, err := templatePatch(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx","name":"c","resources":{}}]}}}}`
	if string(data) != want {
		t.Errorf("data = %s\nwant %s", data, want)
	}
	back, err := templateOf(&appsv1.ControllerRevision{Data: runtimeRaw(data)})
	if err != nil || back.Spec.Containers[0].Image != "nginx" || back.Labels["app"] != "web" {
		t.Errorf("templateOf = %+v, %v", back, err)
	}
	if !sameData(data, []byte(` {"spec": {"template": {"metadata":{"labels":{"app":"web"}}, "$patch":"replace","spec":{"containers":[{"name":"c","image":"nginx","resources":{}}]}}}}`)) {
		t.Error("same JSON with other spacing and key order must compare equal")
	}
	zero, one := int32(0), int32(1)
	h0, h1 := hashRevision(data, &zero), hashRevision(data, &one)
	if h0 == h1 || h0 != hashRevision(data, &zero) {
		t.Errorf("hashes %q %q: the collision count must change the hash, deterministically", h0, h1)
	}
	if revisionName("web", h0) != "web-"+h0 {
		t.Errorf("revision name %q", revisionName("web", h0))
	}
}

func runtimeRaw(b []byte) runtime.RawExtension { return runtime.RawExtension{Raw: b} }
