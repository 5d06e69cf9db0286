package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestAuthnReplicasShareSigningKey: replicas sharing one etcd and one
// --service-account-signing-key-file accept each other's ServiceAccount tokens, and a
// deletion through one ends the token on the other; a replica with its own key refuses
// them.
func TestAuthnReplicasShareSigningKey(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalECPrivateKey(key)
	keyFile := filepath.Join(t.TempDir(), "sa.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := func(c *server.Config) { c.ServiceAccountSigningKeyFile = keyFile }
	etcd := sharedEtcd(t)
	a := servertest.Start(t, servertest.WithEtcd(etcd), shared)
	b := servertest.Start(t, servertest.WithEtcd(etcd), shared)
	own := servertest.Start(t, servertest.WithEtcd(etcd))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := a.Client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := a.Client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// b learns of the ServiceAccount through its watch.
	for {
		u, err := whoami(ctx, clientAs(t, b, tr.Status.Token))
		if err == nil {
			if u.Username != "system:serviceaccount:default:robot" {
				t.Fatalf("on the other replica: %+v", u)
			}
			break
		}
		if !apierrors.IsUnauthorized(err) || ctx.Err() != nil {
			t.Fatalf("on the other replica: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := whoami(ctx, clientAs(t, own, tr.Status.Token)); !apierrors.IsUnauthorized(err) {
		t.Fatalf("a replica with its own key: %v", err)
	}
	if err := b.Client.CoreV1().ServiceAccounts("default").Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUnauthorized(t, ctx, clientAs(t, a, tr.Status.Token), "token of a service account deleted through the other replica")
}
