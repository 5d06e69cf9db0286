package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// endpointsFile records, under the data dir, the client URLs the running embedded etcd
// listens on (its port is chosen at start), so that tools on the same machine (quotad
// snapshot, quotad etcd) can reach it with the client certificate in etcd-pki.
const endpointsFile = "etcd-endpoints"

// writeEndpoints records endpoints in dir/etcd-endpoints (mode 0600).
func writeEndpoints(dir string, endpoints []string) error {
	p := filepath.Join(dir, endpointsFile)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(endpoints, ",")+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// LocalEndpoints returns the client URLs of the embedded etcd last started on dir.
func LocalEndpoints(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, endpointsFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no embedded etcd has run on data dir %s (missing %s)", dir, endpointsFile)
		}
		return nil, err
	}
	var eps []string
	for _, e := range strings.Split(strings.TrimSpace(string(b)), ",") {
		if e != "" {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("data dir %s: %s is empty", dir, endpointsFile)
	}
	return eps, nil
}

// LocalTLS returns the client certificate files of the embedded etcd of dir.
func LocalTLS(dir string) TLSFiles { return pkiFiles(dir).client }

// ConnectLocal connects to the embedded etcd running on data dir dir (started by another
// process, such as a running quotad) with the client certificate in dir/etcd-pki, and
// checks that it answers before ctx ends. The caller closes the client.
func ConnectLocal(ctx context.Context, dir string, logger *slog.Logger) (*clientv3.Client, error) {
	eps, err := LocalEndpoints(dir)
	if err != nil {
		return nil, err
	}
	files := LocalTLS(dir)
	tlsCfg, err := ExternalTLS(files.CAFile, files.CertFile, files.KeyFile)
	if err != nil {
		return nil, err
	}
	return ConnectExternal(ctx, eps, tlsCfg, logger)
}
