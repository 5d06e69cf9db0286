package server

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// NodeBootstrapGroup is the extra group of the bootstrap tokens `quotad token create`
// makes: bound to the roles a kubelet needs to ask for its client certificate and to
// have it approved (see joinClusterRoleBindings), as kubeadm's default node token.
const NodeBootstrapGroup = "system:bootstrappers:quotad:default-node-token"

// BootstrapTokenOptions is what `quotad token create` asks for.
type BootstrapTokenOptions struct {
	// TTL is how long the token authenticates (0: forever).
	TTL time.Duration
	// Description is kept in the token's Secret.
	Description string
	// Groups are the token's extra groups (nil: NodeBootstrapGroup).
	Groups []string
}

// BootstrapToken is a token `quotad token create` made and what a node needs to join.
type BootstrapToken struct {
	Token string
	// Expires is when the token stops authenticating (zero: never).
	Expires time.Time
	// Server is the API server's URL; CAHash the sha256 of its CA's public key, as kubeadm
	// prints it for --discovery-token-ca-cert-hash.
	Server, CAHash string
	// Kubeconfig is a bootstrap kubeconfig for a kubelet's --bootstrap-kubeconfig: the
	// server, its CA and the token.
	Kubeconfig []byte
}

// CreateBootstrapToken makes a bootstrap token through the API server of dataDir (as its
// admin), as `kubeadm token create` does:
//  1. Read the admin kubeconfig of dataDir.
//  2. Create the Secret kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token,
//     for authentication and signing, expiring after TTL, with the extra groups.
//  3. Build the bootstrap kubeconfig.
func CreateBootstrapToken(ctx context.Context, dataDir string, o BootstrapTokenOptions, now time.Time) (*BootstrapToken, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("--ttl must not be negative, not %s", o.TTL)
	}
	groups := o.Groups
	if groups == nil {
		groups = []string{NodeBootstrapGroup}
	}
	for _, g := range groups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			return nil, err
		}
	}
	// 1.
	path := filepath.Join(dataDir, "admin.kubeconfig")
	admin, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the admin kubeconfig in %s (start quotad with this --data-dir once first): %w", dataDir, err)
	}
	cluster := admin.Clusters[kubeconfigCluster]
	if cluster == nil || cluster.Server == "" {
		return nil, fmt.Errorf("the admin kubeconfig in %s has no cluster %q", dataDir, kubeconfigCluster)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*admin, nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	// 2.
	tok, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return nil, err
	}
	id, secret := tok[:bootstrapapi.BootstrapTokenIDBytes], tok[bootstrapapi.BootstrapTokenIDBytes+1:]
	data := map[string]string{
		bootstrapapi.BootstrapTokenIDKey:               id,
		bootstrapapi.BootstrapTokenSecretKey:           secret,
		bootstrapapi.BootstrapTokenUsageAuthentication: "true",
		bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
	}
	if len(groups) > 0 {
		data[bootstrapapi.BootstrapTokenExtraGroupsKey] = strings.Join(groups, ",")
	}
	if o.Description != "" {
		data[bootstrapapi.BootstrapTokenDescriptionKey] = o.Description
	}
	var expires time.Time
	if o.TTL > 0 {
		expires = now.Add(o.TTL).UTC().Truncate(time.Second)
		data[bootstrapapi.BootstrapTokenExpirationKey] = expires.Format(time.RFC3339)
	}
	_, err = client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: data,
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the token's Secret through %s: %w", cluster.Server, err)
	}
	// 3.
	cfg := clientcmdapi.NewConfig()
	c := clientcmdapi.NewCluster()
	c.Server, c.CertificateAuthorityData = cluster.Server, cluster.CertificateAuthorityData
	cfg.Clusters[kubeconfigCluster] = c
	u := clientcmdapi.NewAuthInfo()
	u.Token = tok
	cfg.AuthInfos["kubelet-bootstrap"] = u
	cfg.Contexts["kubelet-bootstrap@"+kubeconfigCluster] = &clientcmdapi.Context{Cluster: kubeconfigCluster, AuthInfo: "kubelet-bootstrap"}
	cfg.CurrentContext = "kubelet-bootstrap@" + kubeconfigCluster
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	hash, err := caPublicKeyHash(cluster.CertificateAuthorityData)
	if err != nil {
		return nil, err
	}
	return &BootstrapToken{Token: tok, Expires: expires, Server: cluster.Server, CAHash: hash, Kubeconfig: kc}, nil
}

// caPublicKeyHash is "sha256:<hex>" of the CA certificate's SubjectPublicKeyInfo, the pin
// kubeadm's --discovery-token-ca-cert-hash names.
func caPublicKeyHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil {
		return "", errors.New("the admin kubeconfig's CA is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
