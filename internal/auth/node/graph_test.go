package node

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func str(s string) *string { return &s }

func boundPod(ns, name, node string, spec corev1.PodSpec) *corev1.Pod {
	spec.NodeName = node
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// TestGraphPodReferences: a bound pod relates its node to every object it references, as
// upstream's graph; a mirror pod to nothing but itself; an unbound pod to nothing.
func TestGraphPodReferences(t *testing.T) {
	g := NewGraph()
	spec := corev1.PodSpec{
		ServiceAccountName: "sa",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
		InitContainers:     []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-env"}}}}}},
		Containers: []corev1.Container{{Env: []corev1.EnvVar{
			{ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env"}}}},
			{ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-env"}}}},
		}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-debug"}}}}}}},
		Volumes: []corev1.Volume{
			{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj"}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-proj"}}}}}}},
			{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi"}}}},
			{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: str("gpu-claim")}, {Name: "tpl", ResourceClaimTemplateName: str("t")}},
	}
	p := boundPod("ns", "web", "n1", spec)
	p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "tpl", ResourceClaimName: str("web-tpl-x")}}
	g.SetPod(p)
	reach := []ref{
		{kindPod, "ns", "web"}, {kindServiceAccount, "ns", "sa"},
		{kindSecret, "ns", "pull"}, {kindSecret, "ns", "init-env"}, {kindSecret, "ns", "env"}, {kindSecret, "ns", "vol"},
		{kindSecret, "ns", "proj"}, {kindSecret, "ns", "csi"},
		{kindConfigMap, "ns", "cm-env"}, {kindConfigMap, "ns", "cm-debug"}, {kindConfigMap, "ns", "cm-proj"},
		{kindPVC, "ns", "data"}, {kindPVC, "ns", "web-scratch"},
		{kindResourceClaim, "ns", "gpu-claim"}, {kindResourceClaim, "ns", "web-tpl-x"},
	}
	for _, r := range reach {
		if !g.reaches("n1", r) {
			t.Errorf("n1 does not reach %+v", r)
		}
		if g.reaches("n2", r) {
			t.Errorf("n2 reaches %+v", r)
		}
		other := r
		other.namespace = "other"
		if g.reaches("n1", other) {
			t.Errorf("n1 reaches %+v in another namespace", other)
		}
	}
	if g.reaches("n1", ref{kindResourceClaim, "ns", "t"}) {
		t.Error("a claim template's name is reachable")
	}

	// A mirror pod relates its node to itself only.
	m := boundPod("ns", "static", "n2", spec)
	m.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "h"}
	g.SetPod(m)
	if !g.reaches("n2", ref{kindPod, "ns", "static"}) || g.reaches("n2", ref{kindSecret, "ns", "vol"}) {
		t.Error("a mirror pod's references are reachable, or the pod is not")
	}
	// An unbound pod relates nothing; binding it relates everything at once.
	u := boundPod("ns", "late", "", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "late"}}}}})
	g.SetPod(u)
	if g.reaches("n2", ref{kindSecret, "ns", "late"}) {
		t.Error("an unbound pod's secret is reachable")
	}
	u.Spec.NodeName = "n2"
	g.SetPod(u)
	if !g.reaches("n2", ref{kindSecret, "ns", "late"}) {
		t.Error("a bound pod's secret is not reachable")
	}
}

// TestGraphSharedReferencesAndDeletes: an object two pods reference stays reachable until
// the last of them goes; a pod recreated on another node moves what it reaches.
func TestGraphSharedReferencesAndDeletes(t *testing.T) {
	g := NewGraph()
	vol := corev1.PodSpec{Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "shared"}}}}}
	secret := ref{kindSecret, "ns", "shared"}
	g.SetPod(boundPod("ns", "a", "n1", vol))
	g.SetPod(boundPod("ns", "b", "n1", vol))
	g.SetPod(boundPod("ns", "a", "n1", vol)) // an update changes nothing
	g.DeletePod("ns", "a")
	if !g.reaches("n1", secret) {
		t.Fatal("the secret went with the first of its two pods")
	}
	g.DeletePod("ns", "b")
	g.DeletePod("ns", "b") // deleting twice is harmless
	if g.reaches("n1", secret) {
		t.Fatal("the secret outlived its pods")
	}
	g.SetPod(boundPod("ns", "a", "n1", vol))
	g.SetPod(boundPod("ns", "a", "n2", vol)) // recreated elsewhere
	if g.reaches("n1", secret) || !g.reaches("n2", secret) {
		t.Fatal("the secret did not move with its pod")
	}
	if len(g.reach) != 1 || len(g.pods) != 1 {
		t.Fatalf("indexes hold stale entries: %v %v", g.reach, g.pods)
	}
}

// TestGraphSharesReferenceLists: the pods making the same references share one list of
// them (one per distinct list, not one per pod), counted so that the list goes with the
// last pod making it; a pod whose references change leaves its old list, and a namespace's
// list is not another namespace's.
func TestGraphSharesReferenceLists(t *testing.T) {
	g := NewGraph()
	vol := func(secret string) corev1.PodSpec {
		return corev1.PodSpec{ServiceAccountName: "sa", Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}}}
	}
	for i := range 100 {
		g.SetPod(boundPod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("n%d", i%3), vol("shared")))
	}
	g.SetPod(boundPod("other", "p0", "n0", vol("shared")))
	if len(g.refSets) != 2 {
		t.Fatalf("%d lists of references for 101 pods making 2 distinct ones", len(g.refSets))
	}
	if a, b := g.pods[nsName{"ns", "p0"}].refs, g.pods[nsName{"ns", "p99"}].refs; a != b || a.pods != 100 || len(a.refs) != 2 {
		t.Fatalf("pods of one namespace making the same references hold %p and %p (%d pods)", a, b, a.pods)
	}
	g.SetPod(boundPod("ns", "p0", "n0", vol("own"))) // its references change
	if len(g.refSets) != 3 || g.pods[nsName{"ns", "p1"}].refs.pods != 99 {
		t.Fatalf("after a pod's references changed: %d lists, the shared one counts %d pods", len(g.refSets), g.pods[nsName{"ns", "p1"}].refs.pods)
	}
	if !g.reaches("n0", ref{kindSecret, "ns", "own"}) || !g.reaches("n1", ref{kindSecret, "ns", "shared"}) {
		t.Fatal("a shared list lost what its pods reach")
	}
	for i := range 100 {
		g.DeletePod("ns", fmt.Sprintf("p%d", i))
	}
	g.DeletePod("other", "p0")
	if len(g.refSets) != 0 || len(g.reach) != 0 || len(g.pods) != 0 {
		t.Fatalf("stale entries after every pod went: %d lists, %d reached, %d pods", len(g.refSets), len(g.reach), len(g.pods))
	}
}

// TestGraphVolumes: a PV is reachable through the claim a pod on the node uses, with the
// Secrets it shows the kubelet (not a CSI volume's controller secrets).
func TestGraphVolumes(t *testing.T) {
	g := NewGraph()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "data"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d",
			NodeStageSecretRef:         &corev1.SecretReference{Namespace: "sys", Name: "stage"},
			ControllerPublishSecretRef: &corev1.SecretReference{Namespace: "sys", Name: "controller"}}}}}
	g.SetPV(pv)
	if g.reaches("n1", ref{kindPV, "", "pv1"}) {
		t.Fatal("a PV no pod uses is reachable")
	}
	g.SetPod(boundPod("ns", "db", "n1", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}))
	if !g.reaches("n1", ref{kindPV, "", "pv1"}) || !g.reaches("n1", ref{kindSecret, "sys", "stage"}) {
		t.Fatal("the PV of a used claim, or its stage secret, is not reachable")
	}
	if g.reaches("n1", ref{kindSecret, "sys", "controller"}) || g.reaches("n2", ref{kindPV, "", "pv1"}) {
		t.Fatal("a controller secret, or another node, reaches the PV")
	}
	g.DeletePV("pv1")
	if g.reaches("n1", ref{kindPV, "", "pv1"}) || g.reaches("n1", ref{kindSecret, "sys", "stage"}) {
		t.Fatal("a deleted PV is reachable")
	}
	g.SetVolumeAttachment("va", "n1")
	g.SetResourceSlice("slice", "n2")
	if !g.reaches("n1", ref{kindVolumeAttachment, "", "va"}) || g.reaches("n1", ref{kindResourceSlice, "", "slice"}) || !g.reaches("n2", ref{kindResourceSlice, "", "slice"}) {
		t.Fatal("attachments and slices")
	}
	g.DeleteVolumeAttachment("va")
	if g.reaches("n1", ref{kindVolumeAttachment, "", "va"}) {
		t.Fatal("a deleted attachment is reachable")
	}
}
