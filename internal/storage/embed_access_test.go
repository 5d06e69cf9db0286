package storage_test

import (
	"crypto/tls"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/quotad/quotad/internal/storage"
)

// TestEmbeddedRefusesClientsWithoutItsCertificate: the embedded etcd's endpoints serve only
// clients presenting its own client certificate. Plain text, TLS without a certificate and a
// certificate of another CA (another embedded etcd's) can neither read nor write a key.
func TestEmbeddedRefusesClientsWithoutItsCertificate(t *testing.T) {
	t.Parallel()
	e := startEmbedded(t, t.TempDir())
	other := startEmbedded(t, t.TempDir())
	local := e.Store()
	defer local.Close()
	if _, err := local.Txn(t.Context(), storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/registry/secrets/ns/s", Value: []byte("secret")}}}); err != nil {
		t.Fatal(err)
	}
	own := e.ClientTLS()
	plainEndpoints := make([]string, 0, len(e.Endpoints()))
	for _, ep := range e.Endpoints() {
		plainEndpoints = append(plainEndpoints, "http://"+strings.TrimPrefix(ep, "https://"))
	}
	tests := []struct {
		name      string
		endpoints []string
		tls       *storage.TLSFiles
		allowed   bool
	}{
		{"its own client certificate", e.Endpoints(), &own, true},
		{"plain text", plainEndpoints, nil, false},
		{"TLS without a client certificate", e.Endpoints(), &storage.TLSFiles{CAFile: own.CAFile}, false},
		{"a certificate of another CA", e.Endpoints(), &storage.TLSFiles{CAFile: own.CAFile, CertFile: other.ClientTLS().CertFile, KeyFile: other.ClientTLS().KeyFile}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tlsCfg *tls.Config
			if tc.tls != nil {
				var err error
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
			ctx := t.Context()
			get, getErr := kv.Range(ctx, &pb.RangeRequest{Key: []byte("/registry/secrets/ns/s")}, grpc.WaitForReady(false))
			value := "overwritten"
			if tc.allowed {
				value = "secret"
			}
			_, putErr := kv.Put(ctx, &pb.PutRequest{Key: []byte("/registry/secrets/ns/s"), Value: []byte(value)}, grpc.WaitForReady(false))
			if tc.allowed {
				if getErr != nil || len(get.Kvs) != 1 || putErr != nil {
					t.Fatalf("with its own certificate: get %v, %v; put %v", get, getErr, putErr)
				}
				return
			}
			if getErr == nil {
				t.Errorf("read succeeded: %v", get.Kvs)
			}
			if putErr == nil {
				t.Errorf("write succeeded")
			}
			kvs, err := local.Get(ctx, "/registry/secrets/ns/s")
			if err != nil || string(kvs.Value) != "secret" {
				t.Errorf("key after the refused write: %q, %v", kvs.Value, err)
			}
		})
	}
}

// TestEmbeddedFileModes: the etcd data, its certificates and keys are private to the user.
func TestEmbeddedFileModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	e := startEmbedded(t, dir)
	for _, f := range []string{e.ClientTLS().CAFile, e.ClientTLS().CertFile, e.ClientTLS().KeyFile} {
		if !strings.HasPrefix(f, dir+string(filepath.Separator)) {
			t.Errorf("%s is not under the data dir %s", f, dir)
		}
	}
	checkPrivate(t, dir)
}

// checkPrivate fails the test for any directory under dir not 0700 or file not 0600.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %#o, want %#o", path, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
