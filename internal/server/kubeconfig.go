package server

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes the admin kubeconfig for url.
func writeKubeconfig(path, url string, caPEM []byte, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["quotad"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["quotad"] = &clientcmdapi.Context{Cluster: "quotad", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "quotad"
	return clientcmd.WriteToFile(*cfg, path)
}
