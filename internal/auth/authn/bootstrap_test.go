package authn

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

type secretMap map[string]*corev1.Secret

func (m secretMap) BootstrapSecret(name string) (*corev1.Secret, bool) {
	s, ok := m[name]
	return s, ok
}

func bootstrapSecret(id, secret string, edit func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       "bootstrap.kubernetes.io/token",
		Data: map[string][]byte{
			"token-id": []byte(id), "token-secret": []byte(secret),
			"usage-bootstrap-authentication": []byte("true"),
			"expiration":                     []byte("2026-11-30T00:00:00Z"),
		},
	}
	if edit != nil {
		edit(s)
	}
	return s
}

// TestBootstrapTokens: a token authenticates as system:bootstrap:<id> in
// system:bootstrappers and its extra groups only while its Secret says so, as upstream's
// bootstrap token authenticator.
func TestBootstrapTokens(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const id, secret = "abcdef", "0123456789abcdef"
	tests := []struct {
		name   string
		token  string
		edit   func(*corev1.Secret)
		absent bool
		want   []string // groups; nil: not authenticated
	}{
		{name: "valid", token: id + "." + secret, want: []string{"system:bootstrappers", "system:authenticated"}},
		{name: "extra groups", token: id + "." + secret,
			edit: func(s *corev1.Secret) {
				s.Data["auth-extra-groups"] = []byte("system:bootstrappers:kubeadm:default-node-token")
			},
			want: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}},
		{name: "a group outside system:bootstrappers", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("system:masters") }},
		{name: "wrong secret", token: id + ".0123456789abcdeX"},
		{name: "another secret", token: id + ".ffffffffffffffff"},
		{name: "not a bootstrap token", token: "abcdef0123456789abcdef"},
		{name: "upper case", token: "ABCDEF." + secret},
		{name: "no Secret", token: id + "." + secret, absent: true},
		{name: "expired", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.Data["expiration"] = []byte("2026-11-29T11:59:59Z") }},
		{name: "bad expiration", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.Data["expiration"] = []byte("tomorrow") }},
		{name: "no expiration", token: id + "." + secret,
			edit: func(s *corev1.Secret) { delete(s.Data, "expiration") },
			want: []string{"system:bootstrappers", "system:authenticated"}},
		{name: "not for authentication", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.Data["usage-bootstrap-authentication"] = []byte("false") }},
		{name: "another type", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }},
		{name: "being deleted", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.DeletionTimestamp = &metav1.Time{Time: now} }},
		{name: "token-id differs from the name", token: id + "." + secret,
			edit: func(s *corev1.Secret) { s.Data["token-id"] = []byte("zzzzzz") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := secretMap{}
			if !tc.absent {
				m["bootstrap-token-"+id] = bootstrapSecret(id, secret, tc.edit)
			}
			b := NewBootstrapTokens(m, clocktesting.NewFakePassiveClock(now))
			u, ok := b.AuthenticateToken(tc.token)
			if tc.want == nil {
				if ok {
					t.Fatalf("authenticated as %+v, want nobody", u)
				}
				return
			}
			if !ok {
				t.Fatal("not authenticated")
			}
			if u.Name != "system:bootstrap:"+id || !reflect.DeepEqual(u.Groups, tc.want) {
				t.Errorf("user %q groups %v, want system:bootstrap:%s %v", u.Name, u.Groups, id, tc.want)
			}
			// Through the union, for the API audience only.
			a := &Authenticator{Bootstrap: b}
			if _, _, ok := a.AuthenticateToken(tc.token, nil); !ok {
				t.Error("the union does not authenticate it")
			}
			if _, _, ok := a.AuthenticateToken(tc.token, []string{"https://elsewhere"}); ok {
				t.Error("authenticated for another audience")
			}
		})
	}
}
