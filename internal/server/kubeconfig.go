package server

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The entries of the admin kubeconfig quotad keeps up to date.
const (
	kubeconfigCluster = "quotad"
	kubeconfigUser    = "admin"
	kubeconfigContext = "quotad"
)

// writeKubeconfig makes the admin kubeconfig at path reach url with caPEM and token, and
// leaves everything else in it alone (the user's namespace, contexts, users, current
// context):
//  1. Load the file. None: start from an empty kubeconfig. One that does not parse is
//     kept as path.invalid, and replaced as if there were none.
//  2. No context at all: add context "quotad" (cluster "quotad", user "admin", namespace
//     default) and make it current.
//  3. Set cluster "quotad"'s server and CA data and user "admin"'s token where they differ,
//     adding either entry if it is gone.
//  4. Write (atomically, mode 0600) only if a step changed something.
func writeKubeconfig(path, url string, caPEM []byte, token string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	changed := false
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			if err := os.Rename(path, path+".invalid"); err != nil {
				return fmt.Errorf("admin kubeconfig %s: %w", path, err)
			}
		}
		cfg, changed = clientcmdapi.NewConfig(), true
	}
	if len(cfg.Contexts) == 0 && cfg.CurrentContext == "" {
		cfg.Contexts[kubeconfigContext] = &clientcmdapi.Context{Cluster: kubeconfigCluster, AuthInfo: kubeconfigUser, Namespace: "default"}
		cfg.CurrentContext = kubeconfigContext
		changed = true
	}
	if updateKubeconfig(cfg, url, caPEM, token) {
		changed = true
	}
	if !changed {
		return nil
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("admin kubeconfig %s: %w", path, err)
	}
	return writeFileAtomic(path, data, 0o600)
}

// updateKubeconfig sets quotad's cluster and user entries to url, caPEM and token and
// reports whether that changed anything.
func updateKubeconfig(cfg *clientcmdapi.Config, url string, caPEM []byte, token string) bool {
	changed := false
	cluster := cfg.Clusters[kubeconfigCluster]
	if cluster == nil {
		cluster = clientcmdapi.NewCluster()
		cfg.Clusters[kubeconfigCluster] = cluster
		changed = true
	}
	if cluster.Server != url {
		cluster.Server = url
		changed = true
	}
	if !bytes.Equal(cluster.CertificateAuthorityData, caPEM) || cluster.CertificateAuthority != "" {
		// A CA file beside the data is refused by kubectl: the data replaces it.
		cluster.CertificateAuthorityData, cluster.CertificateAuthority = caPEM, ""
		changed = true
	}
	user := cfg.AuthInfos[kubeconfigUser]
	if user == nil {
		user = clientcmdapi.NewAuthInfo()
		cfg.AuthInfos[kubeconfigUser] = user
		changed = true
	}
	if user.Token != token {
		user.Token = token
		changed = true
	}
	return changed
}
