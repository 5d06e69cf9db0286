package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// TestSecurityEmbeddedEtcdRefusesOtherClients: a running server's embedded etcd cannot be
// read or written by a local client without its client certificate: not in plain text,
// not with TLS and no certificate, not with a certificate signed by quotad's API CA (which
// the API server accepts). A quota's status.used stays what quotad committed. The data
// dir's etcd client certificate is what opens it.
func TestSecurityEmbeddedEtcdRefusesOtherClients(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "sec")
	mkQuota(t, s, "sec", "q", map[string]string{"pods": "1"})
	if _, err := s.Client.CoreV1().Pods("sec").Create(ctx, pod("a", "", ""), metaCreate()); err != nil {
		t.Fatal(err)
	}
	before, err := s.Client.CoreV1().ResourceQuotas("sec").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.EtcdEndpoints) == 0 {
		t.Fatal("the server reports no embedded etcd endpoints")
	}
	const key = "/registry/resourcequotas/sec/q"
	forged := []byte(`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"sec"},"spec":{"hard":{"pods":"1"}},"status":{"hard":{"pods":"1"},"used":{"pods":"0"}}}`)

	own := storage.EmbeddedClientTLS(s.DataDir)
	apiCert, apiKey := signedByAPICA(t, s.DataDir)
	var plain []string
	for _, ep := range s.EtcdEndpoints {
		plain = append(plain, "http://"+strings.TrimPrefix(ep, "https://"))
	}
	tests := []struct {
		name      string
		endpoints []string
		tls       *storage.TLSFiles
		allowed   bool
	}{
		{"the data dir's etcd client certificate", s.EtcdEndpoints, &own, true},
		{"plain text", plain, nil, false},
		{"TLS without a client certificate", s.EtcdEndpoints, &storage.TLSFiles{CAFile: own.CAFile}, false},
		{"a client certificate of quotad's API CA", s.EtcdEndpoints, &storage.TLSFiles{CAFile: own.CAFile, CertFile: apiCert, KeyFile: apiKey}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tlsCfg *tls.Config
			if tc.tls != nil {
				if tlsCfg, err = storage.ExternalTLS(tc.tls.CAFile, tc.tls.CertFile, tc.tls.KeyFile); err != nil {
					t.Fatal(err)
				}
			}
			cli, err := clientv3.New(clientv3.Config{Endpoints: tc.endpoints, TLS: tlsCfg, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			// Calls that fail as soon as the connection does, instead of waiting for one.
			kv := pb.NewKVClient(cli.ActiveConnection())
			got, getErr := kv.Range(ctx, &pb.RangeRequest{Key: []byte(key)}, grpc.WaitForReady(false))
			if tc.allowed {
				if getErr != nil || len(got.Kvs) != 1 {
					t.Fatalf("read with the data dir's certificate: %v, %v", got, getErr)
				}
				return
			}
			if getErr == nil {
				t.Errorf("read the quota: %s", got.Kvs)
			}
			if _, err := kv.Put(ctx, &pb.PutRequest{Key: []byte(key), Value: forged}, grpc.WaitForReady(false)); err == nil {
				t.Errorf("rewrote the quota's status.used")
			}
		})
	}
	after, err := s.Client.CoreV1().ResourceQuotas("sec").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("quota rewritten: used %v at %s, was %v at %s", after.Status.Used, after.ResourceVersion, before.Status.Used, before.ResourceVersion)
	}
	if _, err := s.Client.CoreV1().Pods("sec").Create(ctx, pod("b", "", ""), metaCreate()); err == nil {
		t.Fatal("a second pod was admitted past pods: 1")
	}
}

// signedByAPICA writes a client certificate signed by the quotad API CA in dataDir and
// returns its certificate and key files.
func signedByAPICA(t *testing.T, dataDir string) (certFile, keyFile string) {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(filepath.Join(dataDir, "ca.crt"), filepath.Join(dataDir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "admin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestSecurityDataDirIsPrivate: everything quotad creates in its data dir is the user's
// alone: directories 0700, keys, tokens, the kubeconfig and etcd's files 0600; public
// certificates (*.crt) are at most readable by others.
func TestSecurityDataDirIsPrivate(t *testing.T) {
	t.Parallel()
	// An existing data dir open to others (as a careless mkdir leaves it) is narrowed.
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, servertest.WithDataDir(dir))
	mkNamespace(t, s, "files")
	if _, err := s.Client.CoreV1().Secrets("files").Create(ctxT(t), &corev1.Secret{ObjectMeta: metaName("s"), StringData: map[string]string{"k": "v"}}, metaCreate()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		seen[d.Name()] = true
		mode := info.Mode().Perm()
		switch {
		case d.IsDir():
			if mode != 0o700 {
				t.Errorf("directory %s has mode %#o, want 0700", path, mode)
			}
		case strings.HasSuffix(path, ".crt"):
			if mode&0o022 != 0 {
				t.Errorf("certificate %s has mode %#o, writable by others", path, mode)
			}
		default:
			if mode != 0o600 {
				t.Errorf("%s has mode %#o, want 0600", path, mode)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ca.key", "apiserver.key", "admin.token", "admin.kubeconfig", "client.key", "server.key", "db"} {
		if !seen[want] {
			t.Errorf("no %s in the data dir (seen %v)", want, seen)
		}
	}
}
