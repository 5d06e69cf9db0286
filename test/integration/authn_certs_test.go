package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestAuthnMintedKubeconfig: a kubeconfig minted from the data dir (what `quotad
// kubeconfig` prints) authenticates as its user with its groups; its certificate is for
// client authentication only and expires when asked; a certificate of another CA is
// refused.
func TestAuthnMintedKubeconfig(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Now()
	b, err := server.MintKubeconfig(s.DataDir, server.ClientKubeconfig{User: "alice", Groups: []string{"team-a", "dev"}, Namespace: "team-a", Expiration: 48 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if ctxt := kc.Contexts[kc.CurrentContext]; ctxt == nil || ctxt.Namespace != "team-a" || ctxt.AuthInfo != "alice" || kc.Clusters[ctxt.Cluster].Server != s.URL {
		t.Fatalf("kubeconfig: %s", b)
	}
	blk, _ := pem.Decode(kc.AuthInfos["alice"].ClientCertificateData)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || cert.IsCA || cert.NotAfter.Unix() != now.Add(48*time.Hour).Unix() {
		t.Fatalf("certificate: usage %v, CA %v, valid for %v", cert.ExtKeyUsage, cert.IsCA, cert.NotAfter.Sub(now))
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, err := whoami(ctx, alice)
	if err != nil || u.Username != "alice" || !slices.Equal(u.Groups, []string{"team-a", "dev", "system:authenticated"}) {
		t.Fatalf("whoami with the minted kubeconfig: %+v %v", u, err)
	}

	// A certificate signed by another quotad's CA: the handshake refuses it.
	other := servertest.Start(t)
	ob, err := server.MintKubeconfig(other.DataDir, server.ClientKubeconfig{User: "admin", Groups: []string{"system:masters"}, Expiration: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	okc, _ := clientcmd.Load(ob)
	pair, err := tls.X509KeyPair(okc.AuthInfos["admin"].ClientCertificateData, okc.AuthInfos["admin"].ClientKeyData)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}}
	resp, err := hc.Get(s.URL + "/api")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a certificate of another CA was accepted: %d", resp.StatusCode)
	}
	// Without a certificate or token at all: 401.
	anon, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, anon); !apierrors.IsUnauthorized(err) {
		t.Fatalf("anonymous whoami: %v", err)
	}
}
