package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestTenantsThreeUsers is the shared cluster the tenancy issue describes, with the default
// roles as quotad bootstraps them and three kinds of user: the cluster admin (its token, in
// system:masters); alice, a client certificate minted by `quotad kubeconfig`, bound to
// `admin` in team-a; and a ServiceAccount token bound to `edit` in team-a.
func TestTenantsThreeUsers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admin := s.Client
	for _, ns := range []string{"team-a", "team-b"} {
		mkNamespace(t, s, ns)
	}
	mkQuota(t, s, "team-a", "compute", map[string]string{"pods": "2"})
	bind := func(name, role string, subject rbacv1.Subject) {
		t.Helper()
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{subject},
		}
		if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind("team-a-admin", "admin", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team-a"})
	if _, err := admin.CoreV1().ServiceAccounts("team-a").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ci"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind("ci-edit", "edit", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "ci", Namespace: "team-a"})

	// The users.
	kc, err := server.MintKubeconfig(s.DataDir, server.ClientKubeconfig{User: "alice", Groups: []string{"team-a"}, Namespace: "team-a", Expiration: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "ci", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ci := clientAs(t, s, tr.Status.Token)

	forbidden := func(what string, err error, want string) {
		t.Helper()
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("%s: got %v, want 403 %q", what, err, want)
		}
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	}

	// 1. alice and the ServiceAccount create pods up to the quota; past it, upstream's 403.
	if _, err := alice.CoreV1().Pods("team-a").Create(ctx, pod("a1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ci.CoreV1().Pods("team-a").Create(ctx, pod("c1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.CoreV1().Pods("team-a").Create(ctx, pod("a2"), metav1.CreateOptions{})
	forbidden("alice past the quota", err, `pods "a2" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`)

	// 2. Neither may change the quota, nor its status; both may read it.
	for who, c := range map[string]kubernetes.Interface{"alice": alice, "system:serviceaccount:team-a:ci": ci} {
		quotas := c.CoreV1().ResourceQuotas("team-a")
		q, err := quotas.Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s reads the quota: %v", who, err)
		}
		cannot := func(verb, sub string) string {
			res := "resourcequotas"
			if sub != "" {
				res += "/" + sub
			}
			return fmt.Sprintf(`resourcequotas "compute" is forbidden: User %q cannot %s resource %q in API group "" in the namespace "team-a"`, who, verb, res)
		}
		raised := q.DeepCopy()
		raised.Spec.Hard[corev1.ResourcePods] = resource.MustParse("100")
		_, err = quotas.Update(ctx, raised, metav1.UpdateOptions{})
		forbidden(who+" updates the quota", err, cannot("update", ""))
		_, err = quotas.Patch(ctx, "compute", types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"100"}}}`), metav1.PatchOptions{})
		forbidden(who+" patches the quota", err, cannot("patch", ""))
		_, err = quotas.UpdateStatus(ctx, q, metav1.UpdateOptions{})
		forbidden(who+" updates the quota's status", err, cannot("update", "status"))
		err = quotas.Delete(ctx, "compute", metav1.DeleteOptions{})
		forbidden(who+" deletes the quota", err, cannot("delete", ""))
		_, err = quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100")}}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s creates a quota: %v, want 403", who, err)
		}
		// 3. Nothing in team-b.
		_, err = c.CoreV1().Pods("team-b").List(ctx, metav1.ListOptions{})
		forbidden(who+" lists team-b", err, fmt.Sprintf(`pods is forbidden: User %q cannot list resource "pods" in API group "" in the namespace "team-b"`, who))
	}
	q, err := admin.CoreV1().ResourceQuotas("team-a").Get(ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h, u := q.Status.Hard[corev1.ResourcePods], q.Status.Used[corev1.ResourcePods]; h.Value() != 2 || u.Value() != 2 {
		t.Fatalf("quota after the tenants' attempts: hard %s used %s, want 2 and 2", h.String(), u.String())
	}

	// 4. alice cannot grant herself cluster-admin, in her namespace or the cluster.
	_, err = alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "grab"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("alice binds cluster-admin in team-a: %v, want 403", err)
	}
	_, err = alice.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "grab"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	forbidden("alice binds cluster-admin cluster-wide", err, `clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`)

	// 5. The admin raises the quota; alice's next pod fits.
	if _, err := admin.CoreV1().ResourceQuotas("team-a").Patch(ctx, "compute", types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"3"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CoreV1().Pods("team-a").Create(ctx, pod("a2"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice after the admin raised the quota: %v", err)
	}

	// 6. The ServiceAccount's token stops working once the ServiceAccount is deleted.
	if err := admin.CoreV1().ServiceAccounts("team-a").Delete(ctx, "ci", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// This replica applies its own commits to the index at once: no wait.
	if _, err := ci.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("the deleted ServiceAccount's token answers %v, want 401", err)
	}
}
