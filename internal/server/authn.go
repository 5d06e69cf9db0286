package server

import (
	"crypto"
	"path/filepath"

	"github.com/quotad/quotad/internal/auth/authn"
)

// newAuthenticator builds quotad's authenticators from its config: the admin token and
// --token-auth-file, ServiceAccount tokens signed with --service-account-signing-key-file
// (or the data dir's sa.key, created on first start) and checked against objects, and
// bootstrap tokens whose Secrets bootstrap holds (nil: none).
func newAuthenticator(cfg Config, adminToken string, objects authn.Objects, bootstrap *bootstrapIndex) (*authn.Authenticator, *authn.ServiceAccounts, error) {
	tokens, err := authn.NewTokenFile(adminToken, cfg.TokenAuthFile)
	if err != nil {
		return nil, nil, err
	}
	var key crypto.Signer
	if cfg.ServiceAccountSigningKeyFile != "" {
		key, err = authn.LoadKeyFile(cfg.ServiceAccountSigningKeyFile)
	} else {
		key, err = authn.LoadOrCreateKey(cfg.DataDir)
	}
	if err != nil {
		return nil, nil, err
	}
	opts := []authn.Option{authn.WithAPIAudiences(cfg.APIAudiences)}
	if cfg.ServiceAccountIssuer != "" {
		opts = append(opts, authn.WithIssuer(cfg.ServiceAccountIssuer))
	}
	sas, err := authn.NewServiceAccounts(key, objects, nil, opts...)
	if err != nil {
		return nil, nil, err
	}
	a := &authn.Authenticator{Tokens: tokens, ServiceAccounts: sas}
	if bootstrap != nil {
		a.Bootstrap = authn.NewBootstrapTokens(bootstrap, nil)
	}
	return a, sas, nil
}

// saKeyFile is the ServiceAccount signing key file this replica uses.
func saKeyFile(cfg Config) string {
	if cfg.ServiceAccountSigningKeyFile != "" {
		return cfg.ServiceAccountSigningKeyFile
	}
	return filepath.Join(cfg.DataDir, authn.KeyFile)
}
