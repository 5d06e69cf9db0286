package integration

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestAccessReviewReasons: a SubjectAccessReview answers with upstream's reasons: the
// binding, its role and the subject that allowed it; nothing when nothing does.
func TestAccessReviewReasons(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().RoleBindings("ns").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "x"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "someone-else"}, {Kind: "ServiceAccount", Name: "sa"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	review := func(user string, groups []string, attrs authorizationv1.ResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
		t.Helper()
		r, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups, ResourceAttributes: &attrs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	for _, tc := range []struct {
		name    string
		user    string
		groups  []string
		attrs   authorizationv1.ResourceAttributes
		allowed bool
		reason  string
	}{
		{name: "a RoleBinding to a ServiceAccount", user: "system:serviceaccount:ns:sa", groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"},
			attrs: authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "create", Resource: "pods"}, allowed: true,
			reason: `RBAC: allowed by RoleBinding "x/ns" of ClusterRole "admin" to ServiceAccount "sa/ns"`},
		{name: "a default ClusterRoleBinding to a group", user: "alice", groups: []string{"system:authenticated"},
			attrs: authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, allowed: true,
			reason: `RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"`},
		{name: "nothing allows it", user: "alice", groups: []string{"system:authenticated"},
			attrs: authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "create", Resource: "pods"}},
	} {
		st := review(tc.user, tc.groups, tc.attrs)
		if st.Allowed != tc.allowed || st.Reason != tc.reason {
			t.Errorf("%s: allowed %v reason %q, want %v %q", tc.name, st.Allowed, st.Reason, tc.allowed, tc.reason)
		}
	}
}
