package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/pki"
)

// DefaultIssuer is the iss of the tokens quotad issues, and the API audience a token
// requested without audiences is given: kube-apiserver's usual
// --service-account-issuer.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// KeyFile is the name of the ServiceAccount signing key in the data dir.
const KeyFile = "sa.key"

// Extra keys of a ServiceAccount token's user, as upstream names them.
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
)

// LoadOrCreateKey reads the ServiceAccount signing key from dir, creating it (mode 0600)
// when it is missing.
func LoadOrCreateKey(dir string) (*ecdsa.PrivateKey, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		if err := writeNew(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("service account key %s: no PEM data", path)
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("service account key %s: %w", path, err)
	}
	return key, nil
}

// LoadKeyFile reads a PEM private key to sign ServiceAccount tokens with
// (kube-apiserver's --service-account-signing-key-file): RSA (RS256) or ECDSA P-256
// (ES256), in PKCS#1, SEC 1 or PKCS#8 form.
func LoadKeyFile(path string) (crypto.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("service account signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("service account signing key %s: no PEM data", path)
	}
	var key any
	switch blk.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("service account signing key %s: a PEM %q block is not a private key", path, blk.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("service account signing key %s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok || signingMethod(signer) == nil {
		return nil, fmt.Errorf("service account signing key %s: only RSA and ECDSA P-256 keys are supported", path)
	}
	return signer, nil
}

// signingMethod is the JWT algorithm of a key: RS256 for RSA, ES256 for ECDSA P-256;
// nil for any other.
func signingMethod(key crypto.Signer) jwt.SigningMethod {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return jwt.SigningMethodRS256
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return jwt.SigningMethodES256
		}
	}
	return nil
}

// writeNew writes a new file with mode 0600 (pki.WriteFile: a crash never leaves half a
// key).
func writeNew(path string, data []byte) error { return pki.WriteFile(path, data, 0o600) }

// Objects tells which objects exist now, from an in-memory index kept current by watch:
// the UID of a ServiceAccount, Pod or Secret (resource "serviceaccounts", "pods",
// "secrets"), ok false when there is none.
type Objects interface {
	UID(resource, namespace, name string) (uid types.UID, ok bool)
}

// Ref names an object a token refers to.
type Ref struct {
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
}

// kubernetesClaims is the "kubernetes.io" claim, as upstream's.
type kubernetesClaims struct {
	Namespace      string `json:"namespace"`
	ServiceAccount Ref    `json:"serviceaccount"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
}

type claims struct {
	jwt.RegisteredClaims
	Kubernetes *kubernetesClaims `json:"kubernetes.io,omitempty"`
}

// TokenSpec is what a token is issued for.
type TokenSpec struct {
	Namespace      string
	ServiceAccount Ref
	// Pod or Secret, when the token is bound to one.
	Pod, Secret *Ref
	Audiences   []string
	Expiration  time.Duration
}

// ServiceAccounts issues and verifies ServiceAccount tokens.
type ServiceAccounts struct {
	key    crypto.Signer
	method jwt.SigningMethod
	keyID  string
	issuer string
	// apiAudiences are the audiences a token must name one of to authenticate to quotad
	// itself, and those a token requested without audiences is given.
	apiAudiences []string
	objects      Objects
	clock        clock.PassiveClock

	// verified holds the claims of tokens whose signature verified, by the SHA-256 of the
	// token, so a token's signature is checked once; its expiry, audience and objects are
	// checked on every use. At most maxVerified entries.
	mu       sync.RWMutex
	verified map[[sha256.Size]byte]*claims
}

// maxVerified bounds the verified-token cache.
const maxVerified = 4096

// Option configures ServiceAccounts.
type Option func(*ServiceAccounts)

// WithIssuer sets the iss of issued tokens, and the one verified (kube-apiserver's
// --service-account-issuer; default DefaultIssuer).
func WithIssuer(iss string) Option { return func(s *ServiceAccounts) { s.issuer = iss } }

// WithAPIAudiences sets the audiences a token must name one of to authenticate to quotad
// (kube-apiserver's --api-audiences; default the issuer).
func WithAPIAudiences(auds []string) Option {
	return func(s *ServiceAccounts) { s.apiAudiences = slices.Clone(auds) }
}

// NewServiceAccounts returns the issuer and verifier of tokens signed with key (RSA or
// ECDSA P-256). clk nil is the real clock.
func NewServiceAccounts(key crypto.Signer, objects Objects, clk clock.PassiveClock, opts ...Option) (*ServiceAccounts, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	method := signingMethod(key)
	if method == nil {
		return nil, errors.New("service account signing key: only RSA and ECDSA P-256 keys are supported")
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	s := &ServiceAccounts{
		key: key, method: method, keyID: base64.RawURLEncoding.EncodeToString(sum[:]), issuer: DefaultIssuer,
		objects: objects, clock: clk,
	}
	for _, o := range opts {
		o(s)
	}
	if len(s.apiAudiences) == 0 {
		s.apiAudiences = []string{s.issuer}
	}
	return s, nil
}

// APIAudiences are the audiences quotad accepts tokens for.
func (s *ServiceAccounts) APIAudiences() []string { return slices.Clone(s.apiAudiences) }

// Issue signs a token for spec and returns it with its expiry. Audiences empty are the
// API audiences.
func (s *ServiceAccounts) Issue(spec TokenSpec) (token string, expires time.Time, err error) {
	now := s.clock.Now()
	auds := spec.Audiences
	if len(auds) == 0 {
		auds = s.apiAudiences
	}
	expires = now.Add(spec.Expiration)
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.issuer,
			Subject:   auth.ServiceAccountPrefix + spec.Namespace + ":" + spec.ServiceAccount.Name,
			Audience:  jwt.ClaimStrings(auds),
			ExpiresAt: jwt.NewNumericDate(expires),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        string(uuid.NewUUID()),
		},
		Kubernetes: &kubernetesClaims{Namespace: spec.Namespace, ServiceAccount: spec.ServiceAccount, Pod: spec.Pod, Secret: spec.Secret},
	}
	t := jwt.NewWithClaims(s.method, c)
	t.Header["kid"] = s.keyID
	token, err = t.SignedString(s.key)
	return token, time.Unix(expires.Unix(), 0), err
}

// looksLikeJWT reports whether a bearer token could be a JWT (three dot-separated parts
// whose header names this issuer's way of signing): other tokens are not parsed.
func looksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2 && strings.HasPrefix(tok, "eyJ")
}

// AuthenticateToken verifies a ServiceAccount token for one of audiences (nil: the API
// audiences): signature, issuer, expiry and not-before, audience, and that the
// ServiceAccount and the object the token is bound to still exist with the UIDs it
// names. It returns the user and the audiences of the token that were asked for.
func (s *ServiceAccounts) AuthenticateToken(tok string, audiences []string) (auth.User, []string, bool) {
	if !looksLikeJWT(tok) {
		return auth.User{}, nil, false
	}
	if audiences == nil {
		audiences = s.apiAudiences
	}
	c, ok := s.verify(tok)
	if !ok {
		return auth.User{}, nil, false
	}
	var matched []string
	for _, a := range audiences {
		if slices.Contains(c.Audience, a) {
			matched = append(matched, a)
		}
	}
	k := c.Kubernetes
	if len(matched) == 0 || k.Namespace == "" || k.ServiceAccount.Name == "" ||
		c.Subject != auth.ServiceAccountPrefix+k.Namespace+":"+k.ServiceAccount.Name {
		return auth.User{}, nil, false
	}
	if !s.exists("serviceaccounts", k.Namespace, k.ServiceAccount) ||
		(k.Pod != nil && !s.exists("pods", k.Namespace, *k.Pod)) ||
		(k.Secret != nil && !s.exists("secrets", k.Namespace, *k.Secret)) {
		return auth.User{}, nil, false
	}
	u := auth.User{
		Name: c.Subject, UID: string(k.ServiceAccount.UID),
		Groups: []string{auth.AllServiceAccounts, auth.AllServiceAccounts + ":" + k.Namespace, auth.AllAuthenticated},
	}
	u.Extra = map[string][]string{}
	if k.Pod != nil {
		u.Extra[ExtraPodName] = []string{k.Pod.Name}
		u.Extra[ExtraPodUID] = []string{string(k.Pod.UID)}
	}
	if c.ID != "" {
		u.Extra[ExtraCredentialID] = []string{"JTI=" + c.ID}
	}
	return u, matched, true
}

// verify returns the claims of a token signed with the key, by this issuer, valid now.
// The signature is checked once per token (see verified); the times on every call.
func (s *ServiceAccounts) verify(tok string) (*claims, bool) {
	sum := sha256.Sum256([]byte(tok))
	s.mu.RLock()
	c := s.verified[sum]
	s.mu.RUnlock()
	if c != nil {
		now := s.clock.Now()
		if c.ExpiresAt == nil || !now.Before(c.ExpiresAt.Time) || (c.NotBefore != nil && now.Before(c.NotBefore.Time)) {
			return nil, false
		}
		return c, true
	}
	c = &claims{}
	_, err := jwt.ParseWithClaims(tok, c, func(*jwt.Token) (any, error) { return s.key.Public(), nil },
		jwt.WithValidMethods([]string{s.method.Alg()}), jwt.WithIssuer(s.issuer),
		jwt.WithTimeFunc(s.clock.Now), jwt.WithExpirationRequired(), jwt.WithLeeway(0), jwt.WithStrictDecoding())
	if err != nil || c.Kubernetes == nil {
		return nil, false
	}
	s.mu.Lock()
	if s.verified == nil {
		s.verified = map[[sha256.Size]byte]*claims{}
	}
	for k := range s.verified {
		if len(s.verified) < maxVerified {
			break
		}
		delete(s.verified, k)
	}
	s.verified[sum] = c
	s.mu.Unlock()
	return c, true
}

func (s *ServiceAccounts) exists(resource, ns string, r Ref) bool {
	if s.objects == nil || r.Name == "" {
		return false
	}
	uid, ok := s.objects.UID(resource, ns, r.Name)
	return ok && uid == r.UID
}
