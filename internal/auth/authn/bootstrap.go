package authn

import (
	"crypto/subtle"

	corev1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecret "k8s.io/cluster-bootstrap/util/secrets"
	bootstraptokens "k8s.io/cluster-bootstrap/util/tokens"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/auth"
)

// BootstrapSecrets finds the Secrets of bootstrap tokens: the kube-system Secret of a name,
// from an index kept current by watch (ok false when there is none).
type BootstrapSecrets interface {
	BootstrapSecret(name string) (secret *corev1.Secret, ok bool)
}

// BootstrapTokens authenticates bootstrap tokens, "<id>.<secret>" backed by the Secret
// kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token, as
// kube-apiserver's --enable-bootstrap-token-auth does: the user is
// system:bootstrap:<id>, in the group system:bootstrappers and the Secret's
// auth-extra-groups. A token whose Secret is missing, being deleted, of another type,
// expired, not for authentication, holding another secret, or naming a group outside
// system:bootstrappers:* authenticates nobody.
type BootstrapTokens struct {
	secrets BootstrapSecrets
	clock   clock.PassiveClock
}

// NewBootstrapTokens returns the authenticator of the tokens secrets holds (clk nil: the
// real clock).
func NewBootstrapTokens(secrets BootstrapSecrets, clk clock.PassiveClock) *BootstrapTokens {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &BootstrapTokens{secrets: secrets, clock: clk}
}

// AuthenticateToken returns the user of a bootstrap token.
func (b *BootstrapTokens) AuthenticateToken(tok string) (auth.User, bool) {
	id, secret, err := bootstraptokens.ParseToken(tok)
	if err != nil {
		return auth.User{}, false // not a bootstrap token
	}
	s, ok := b.secrets.BootstrapSecret(bootstraputil.BootstrapTokenSecretName(id))
	if !ok || s.DeletionTimestamp != nil || s.Type != bootstrapapi.SecretTypeBootstrapToken {
		return auth.User{}, false
	}
	stored := bootstrapsecret.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
	if subtle.ConstantTimeCompare([]byte(stored), []byte(secret)) != 1 {
		return auth.User{}, false
	}
	if bootstrapsecret.GetData(s, bootstrapapi.BootstrapTokenIDKey) != id {
		return auth.User{}, false
	}
	if bootstrapsecret.HasExpired(s, b.clock.Now()) {
		return auth.User{}, false
	}
	if bootstrapsecret.GetData(s, bootstrapapi.BootstrapTokenUsageAuthentication) != "true" {
		return auth.User{}, false
	}
	groups, err := bootstrapsecret.GetGroups(s)
	if err != nil {
		return auth.User{}, false
	}
	return auth.User{Name: bootstrapapi.BootstrapUserPrefix + id, Groups: append(groups, auth.AllAuthenticated)}, true
}
