package server

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/quotad/quotad/internal/pki"
)

// ClientKubeconfig is what `quotad kubeconfig` prints.
type ClientKubeconfig struct {
	// User is the certificate's CommonName, Groups its Organizations.
	User   string
	Groups []string
	// Namespace is the context's namespace ("" for none).
	Namespace string
	// Expiration is how long the certificate is valid (capped at the CA's expiry).
	Expiration time.Duration
}

// MintKubeconfig issues a client certificate for k signed by the CA in dataDir and
// returns a kubeconfig that reaches the server of the data dir's admin kubeconfig with it:
//  1. Read the CA and the admin kubeconfig's cluster (server URL) from dataDir.
//  2. Sign a new key's certificate: CN user, O groups, client authentication only.
//  3. Build the kubeconfig: cluster "quotad", user and context named after the user.
func MintKubeconfig(dataDir string, k ClientKubeconfig, now time.Time) ([]byte, error) {
	if k.User == "" {
		return nil, errors.New("--user is required")
	}
	if k.Expiration <= 0 {
		return nil, fmt.Errorf("--expiration must be positive, not %s", k.Expiration)
	}
	// 1.
	authority, err := pki.LoadAuthority(filepath.Join(dataDir, "ca.crt"), filepath.Join(dataDir, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("reading quotad's CA in %s (start quotad with this --data-dir once first): %w", dataDir, err)
	}
	ca := authority.Cert
	admin, err := clientcmd.LoadFromFile(filepath.Join(dataDir, "admin.kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("reading the admin kubeconfig in %s: %w", dataDir, err)
	}
	cluster := admin.Clusters[kubeconfigCluster]
	if cluster == nil || cluster.Server == "" {
		return nil, fmt.Errorf("the admin kubeconfig in %s has no cluster %q", dataDir, kubeconfigCluster)
	}
	// 2.
	notAfter := now.Add(k.Expiration)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	// Each group its own RDN, so that the certificate keeps the groups' order (one RDN of
	// several Organizations is a DER SET, which sorts them).
	subject := pkix.Name{CommonName: k.User}
	for _, g := range k.Groups {
		subject.ExtraNames = append(subject.ExtraNames, pkix.AttributeTypeAndValue{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: g})
	}
	tmpl := &x509.Certificate{
		Subject:   subject,
		NotBefore: now.Add(-5 * time.Minute), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	certPEM, keyPEM, err := authority.Issue(tmpl)
	if err != nil {
		return nil, err
	}
	// 3.
	cfg := clientcmdapi.NewConfig()
	c := clientcmdapi.NewCluster()
	c.Server, c.CertificateAuthorityData = cluster.Server, cluster.CertificateAuthorityData
	cfg.Clusters[kubeconfigCluster] = c
	u := clientcmdapi.NewAuthInfo()
	u.ClientCertificateData = certPEM
	u.ClientKeyData = keyPEM
	cfg.AuthInfos[k.User] = u
	name := k.User + "@" + kubeconfigCluster
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: kubeconfigCluster, AuthInfo: k.User, Namespace: k.Namespace}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}
