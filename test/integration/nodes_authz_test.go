package integration

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// nodeClient is a clientset holding node name's credentials: a client certificate for
// system:node:<name> in group system:nodes, as a kubelet's.
func nodeClient(t *testing.T, s *servertest.Server, name string) kubernetes.Interface {
	t.Helper()
	b, err := server.MintKubeconfig(s.DataDir, server.ClientKubeconfig{User: "system:node:" + name, Groups: []string{"system:nodes"}, Expiration: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantRefused fails unless err's text is exactly want (upstream's 403 text).
func wantRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: allowed, want %q", what, want)
		return
	}
	if err.Error() != want {
		t.Errorf("%s:\n got %q\nwant %q", what, err.Error(), want)
	}
}

func wantAllowed(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// podUsing is a pod bound to node (or unbound when node is "") that reads secret through
// a volume and configMap through env.
func podUsing(name, node, secret, configMap string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "app", Image: "busybox",
				Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Key: "k"}}}}}},
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
		},
	}
}

// TestNodeCredentialsAreContained acts as an attacker holding node-a's credentials: node-a
// reads what its pods reference and nothing else, writes only its own Node, Lease, pods'
// status, mirror pods and evictions, and does everything a kubelet does for its own pods.
// Every refusal is upstream's text.
func TestNodeCredentialsAreContained(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := s.Client
	a, b := nodeClient(t, s, "node-a"), nodeClient(t, s, "node-b")
	const ns = "work"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"s-a", "s-b", "s-c", "s-none"} {
		if _, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cm-a", "cm-b"} {
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// 1. Each node registers its own Node; node-a cannot create, read or modify node-b's.
	nodeA, err := a.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"kubernetes.io/hostname": "node-a", "node.kubernetes.io/instance-type": "small"}}}, metav1.CreateOptions{})
	wantAllowed(t, "node-a registers itself", err)
	wantRefused(t, "node-a registers node-b", func() error {
		_, err := a.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}, metav1.CreateOptions{})
		return err
	}(), `nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`)
	_, err = b.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}, metav1.CreateOptions{})
	wantAllowed(t, "node-b registers itself", err)
	_, err = a.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	wantAllowed(t, "node-a reads itself", err)
	_, err = a.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{})
	wantRefused(t, "node-a reads node-b", err, `nodes "node-b" is forbidden: User "system:node:node-a" cannot get resource "nodes" in API group "" at the cluster scope: node 'node-a' cannot read 'node-b', only its own Node object`)
	_, err = a.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	wantRefused(t, "node-a lists nodes", err, `nodes is forbidden: User "system:node:node-a" cannot list resource "nodes" in API group "" at the cluster scope: node 'node-a' cannot read all nodes, only its own Node object`)
	_, err = a.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	wantRefused(t, "node-a labels node-b", err, `nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`)
	_, err = a.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
	wantRefused(t, "node-a patches node-b's status", err, `nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`)
	_, err = a.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"node-restriction.kubernetes.io/x":"y"}}}`), metav1.PatchOptions{})
	wantRefused(t, "node-a labels itself node-restriction.kubernetes.io/x", err, `nodes "node-a" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x`)
	_, err = a.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]}}`), metav1.PatchOptions{})
	wantRefused(t, "node-a taints itself", err, `nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints`)
	_, err = a.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"kubelet.kubernetes.io/x":"y","topology.kubernetes.io/zone":"z"}}}`), metav1.PatchOptions{})
	wantAllowed(t, "node-a sets its kubelet labels", err)
	_, err = a.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`), metav1.PatchOptions{}, "status")
	wantAllowed(t, "node-a reports its status", err)

	// 2. Pods: pod-a on node-a uses s-a and cm-a; pod-b on node-b uses s-b and cm-b.
	podA, err := admin.CoreV1().Pods(ns).Create(ctx, podUsing("pod-a", "node-a", "s-a", "cm-a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, podUsing("pod-b", "node-b", "s-b", "cm-b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-a", metav1.GetOptions{})
	wantAllowed(t, "node-a reads its pod's secret", err)
	_, err = a.CoreV1().ConfigMaps(ns).Get(ctx, "cm-a", metav1.GetOptions{})
	wantAllowed(t, "node-a reads its pod's configmap", err)
	_, err = a.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=s-a"})
	wantAllowed(t, "node-a lists its pod's secret by name", err)
	_, err = a.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
	wantAllowed(t, "node-a reads its pod's service account", err)
	const notRelated = ": no relationship found between node 'node-a' and this object"
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-b", metav1.GetOptions{})
	wantRefused(t, "node-a reads node-b's pod's secret", err, `secrets "s-b" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "work"`+notRelated)
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-none", metav1.GetOptions{})
	wantRefused(t, "node-a reads a secret no pod uses", err, `secrets "s-none" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "work"`+notRelated)
	_, err = a.CoreV1().ConfigMaps(ns).Get(ctx, "cm-b", metav1.GetOptions{})
	wantRefused(t, "node-a reads node-b's pod's configmap", err, `configmaps "cm-b" is forbidden: User "system:node:node-a" cannot get resource "configmaps" in API group "" in the namespace "work"`+notRelated)
	_, err = a.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	wantRefused(t, "node-a lists secrets", err, `secrets is forbidden: User "system:node:node-a" cannot list resource "secrets" in API group "" in the namespace "work": No Object name found`)
	_, err = a.CoreV1().Secrets(ns).Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s-a"}}, metav1.UpdateOptions{})
	wantRefused(t, "node-a updates its pod's secret", err, `secrets "s-a" is forbidden: User "system:node:node-a" cannot update resource "secrets" in API group "" in the namespace "work": can only read resources of this type`)
	_, err = a.CoreV1().Pods(ns).Get(ctx, "pod-a", metav1.GetOptions{})
	wantAllowed(t, "node-a reads its pod", err)
	_, err = a.CoreV1().Pods(ns).Get(ctx, "pod-b", metav1.GetOptions{})
	wantRefused(t, "node-a reads node-b's pod", err, `pods "pod-b" is forbidden: User "system:node:node-a" cannot get resource "pods" in API group "" in the namespace "work"`+notRelated)
	_, err = a.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
	wantAllowed(t, "node-a lists its pods", err)
	_, err = a.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	wantRefused(t, "node-a lists all pods", err, `pods is forbidden: User "system:node:node-a" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector`)
	_, err = a.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-b"})
	wantRefused(t, "node-a lists node-b's pods", err, `pods is forbidden: User "system:node:node-a" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector`)

	// 3. Pod status: its own pods only, labels untouched.
	st := podA.DeepCopy()
	st.Status.Phase = corev1.PodRunning
	_, err = a.CoreV1().Pods(ns).UpdateStatus(ctx, st, metav1.UpdateOptions{})
	wantAllowed(t, "node-a reports its pod running", err)
	_, err = a.CoreV1().Pods(ns).Patch(ctx, "pod-b", types.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`), metav1.PatchOptions{}, "status")
	wantRefused(t, "node-a reports node-b's pod failed", err, `pods "pod-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself`)
	// pods/status applies labels (as upstream's), and NodeRestriction refuses a node's
	// change of them.
	_, err = a.CoreV1().Pods(ns).Patch(ctx, "pod-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{}, "status")
	wantRefused(t, "node-a relabels its pod through status", err, `pods "pod-a" is forbidden: node "node-a" cannot update labels through pod status`)
	_, err = a.CoreV1().Pods(ns).Patch(ctx, "pod-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	wantRefused(t, "node-a patches its pod", err, `pods "pod-a" is forbidden: User "system:node:node-a" cannot patch resource "pods" in API group "" in the namespace "work"`)

	// 4. Pods it may create: mirror pods of its own, referencing no API object.
	_, err = a.CoreV1().Pods(ns).Create(ctx, podUsing("evil", "node-a", "s-b", "cm-b"), metav1.CreateOptions{})
	wantRefused(t, "node-a creates a pod", err, `pods "evil" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods`)
	yes := true
	mirror := func(name, node string, spec corev1.PodSpec) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kubernetes.io/config.mirror": "hash"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: nodeA.UID, Controller: &yes}}},
			Spec: spec}
	}
	plain := corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
	_, err = a.CoreV1().Pods(ns).Create(ctx, mirror("static-a", "node-a", plain), metav1.CreateOptions{})
	wantAllowed(t, "node-a creates its mirror pod", err)
	onB := *plain.DeepCopy()
	onB.NodeName = "node-b"
	_, err = a.CoreV1().Pods(ns).Create(ctx, mirror("static-b", "node-b", onB), metav1.CreateOptions{})
	wantRefused(t, "node-a creates a mirror pod on node-b", err, `pods "static-b" is forbidden: node "node-a" can only create pods with spec.nodeName set to itself`)
	withSecret := *plain.DeepCopy()
	withSecret.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s-b"}}}}
	_, err = a.CoreV1().Pods(ns).Create(ctx, mirror("static-secret", "node-a", withSecret), metav1.CreateOptions{})
	wantRefused(t, "node-a creates a mirror pod reading a secret", err, `pods "static-secret" is forbidden: node "node-a" can not create pods that reference secrets`)

	// 5. Deletes and evictions: its own pods only.
	err = a.CoreV1().Pods(ns).Delete(ctx, "pod-b", metav1.DeleteOptions{})
	wantRefused(t, "node-a deletes node-b's pod", err, `pods "pod-b" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself`)
	err = a.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "pod-b", Namespace: ns}})
	wantRefused(t, "node-a evicts node-b's pod", err, `pods "pod-b" is forbidden: node node-a can only evict pods with spec.nodeName set to itself`)
	err = a.CoreV1().Pods(ns).Delete(ctx, "static-a", metav1.DeleteOptions{})
	wantAllowed(t, "node-a deletes its mirror pod", err)

	// 6. Leases: its own, in kube-node-lease.
	lease := func(name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &name}}
	}
	la, err := a.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("node-a"), metav1.CreateOptions{})
	wantAllowed(t, "node-a creates its lease", err)
	if la != nil {
		_, err = a.CoordinationV1().Leases("kube-node-lease").Update(ctx, la, metav1.UpdateOptions{})
		wantAllowed(t, "node-a renews its lease", err)
	}
	_, err = a.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("node-b"), metav1.CreateOptions{})
	wantRefused(t, "node-a creates node-b's lease", err, `leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node`)
	if _, err := b.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease("node-b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CoordinationV1().Leases("kube-node-lease").Patch(ctx, "node-b", types.MergePatchType, []byte(`{"spec":{"holderIdentity":"node-a"}}`), metav1.PatchOptions{})
	wantRefused(t, "node-a writes node-b's lease", err, `leases.coordination.k8s.io "node-b" is forbidden: User "system:node:node-a" cannot patch resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node`)
	_, err = a.CoordinationV1().Leases(ns).Create(ctx, lease("node-a"), metav1.CreateOptions{})
	wantRefused(t, "node-a creates a lease elsewhere", err, `leases.coordination.k8s.io is forbidden: User "system:node:node-a" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "work": can only access leases in the "kube-node-lease" system namespace`)

	// 7. Tokens: only bound to its own pods.
	cur, err := admin.CoreV1().Pods(ns).Get(ctx, "pod-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podB, err := admin.CoreV1().Pods(ns).Get(ctx, "pod-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := func(p *corev1.Pod) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}}}
	}
	_, err = a.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", token(cur), metav1.CreateOptions{})
	wantAllowed(t, "node-a asks a token for its pod", err)
	_, err = a.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", token(podB), metav1.CreateOptions{})
	wantRefused(t, "node-a asks a token for node-b's pod", err, `serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`)
	_, err = a.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	wantRefused(t, "node-a asks an unbound token", err, `serviceaccounts "default" is forbidden: node requested token not bound to a pod`)

	// 8. What a kubelet does besides: events, its pods' services, CSRs.
	_, err = a.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "pod-a"}, Reason: "Started", Message: "started", Type: "Normal"}, metav1.CreateOptions{})
	wantAllowed(t, "node-a records an event", err)
	_, err = a.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	wantAllowed(t, "node-a lists services", err)
	_, err = a.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	wantRefused(t, "node-a reads a namespace", err, `namespaces "work" is forbidden: User "system:node:node-a" cannot get resource "namespaces" in API group "" in the namespace "work"`)

	// 9. A pod bound a moment ago is usable at once; a deleted or moved pod's secrets are not.
	unbound := podUsing("pod-c", "", "s-c", "cm-a")
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, unbound, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-c", metav1.GetOptions{})
	wantRefused(t, "node-a reads an unbound pod's secret", err, `secrets "s-c" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "work"`+notRelated)
	if err := admin.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "pod-c"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-c", metav1.GetOptions{})
	wantAllowed(t, "node-a reads the secret of a pod just bound to it", err)
	zero := int64(0)
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "pod-a", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-a", metav1.GetOptions{})
	wantRefused(t, "node-a reads its deleted pod's secret", err, `secrets "s-a" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "work"`+notRelated)
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, podUsing("pod-a", "node-b", "s-a", "cm-a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = a.CoreV1().Secrets(ns).Get(ctx, "s-a", metav1.GetOptions{})
	wantRefused(t, "node-a reads the secret of its pod recreated on node-b", err, `secrets "s-a" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "work"`+notRelated)
	_, err = b.CoreV1().Secrets(ns).Get(ctx, "s-a", metav1.GetOptions{})
	wantAllowed(t, "node-b reads the secret of the pod recreated on it", err)
}
