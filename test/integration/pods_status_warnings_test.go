package integration

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodStatusUpdateWarnings: a pods/status write warns as upstream's status strategy
// (WarningsOnUpdate) of each pod and host IP not in canonical form, and only after the
// write passed validation; a pod update warns of nothing. The texts were taken from
// kube-apiserver's status strategy run on the same writes.
func TestPodStatusUpdateWarnings(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "psw"
	mkNamespace(t, s, ns)
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := client.CoreV1().Pods(ns)
	newPod := func(name string) *corev1.Pod {
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ws.take()
		return p
	}

	p := newPod("canon")
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "10.0.0.1"
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00:0::1"}}
	p.Status.HostIP = "10.1.0.1"
	p.Status.HostIPs = []corev1.HostIP{{IP: "10.1.0.1"}}
	if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{`status.podIPs[1].ip: IPv6 address "fd00:0::1" should be in RFC 5952 canonical format ("fd00::1")`}
	if got := ws.take(); !slices.Equal(got, want) {
		t.Errorf("status warnings %q, want %q", got, want)
	}

	// The pod itself (upstream's pod strategy warns of nothing on update).
	p.Labels = map[string]string{"a": "b"}
	if _, err = pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := ws.take(); len(got) != 0 {
		t.Errorf("pod update warnings %q, want none", got)
	}

	// Refused writes carry the errors, not the warnings.
	p = newPod("bad")
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "010.0.0.1"
	p.Status.PodIPs = []corev1.PodIP{{IP: "010.0.0.1"}}
	p.Status.HostIP = "::ffff:1.2.3.4"
	p.Status.HostIPs = []corev1.HostIP{{IP: "::ffff:1.2.3.4"}}
	_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	expectInvalid(t, err, `Pod "bad" is invalid: [status.podIPs[0]: Invalid value: "010.0.0.1": must not have leading 0s, status.hostIPs[0]: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address]`)
	if got := ws.take(); len(got) != 0 {
		t.Errorf("refused status write warnings %q, want none", got)
	}
}
