package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/quotad/quotad/internal/auth/authn"
	"github.com/quotad/quotad/internal/controller/etcdsnapshot"
	"github.com/quotad/quotad/internal/pki"
	"github.com/quotad/quotad/internal/storage"
)

// newSnapshotScheduler returns the scheduler of --etcd-snapshot-schedule-cron (nil when
// unset): snapshots of the embedded etcd, or of the first --etcd-servers member that gives one, named
// after this host, in --etcd-snapshot-dir (default <data-dir>/snapshots).
func newSnapshotScheduler(cfg Config, embedded *storage.Embedded, log *slog.Logger) (*etcdsnapshot.Scheduler, error) {
	if cfg.EtcdSnapshotScheduleCron == "" {
		return nil, nil
	}
	dir := cfg.EtcdSnapshotDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "snapshots")
	}
	retention := cfg.EtcdSnapshotRetention
	if retention == 0 {
		retention = etcdsnapshot.DefaultRetention
	}
	node, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("etcd snapshots: %w", err)
	}
	var save func(ctx context.Context, path string) error
	if embedded != nil {
		save = embedded.SaveSnapshot
	} else {
		var tlsCfg *tls.Config
		if cfg.EtcdCAFile != "" || cfg.EtcdCertFile != "" {
			if tlsCfg, err = storage.ExternalTLS(cfg.EtcdCAFile, cfg.EtcdCertFile, cfg.EtcdKeyFile); err != nil {
				return nil, err
			}
		}
		save = func(ctx context.Context, path string) error {
			return storage.SaveSnapshot(ctx, cfg.EtcdServers, tlsCfg, path, log)
		}
	}
	s, err := etcdsnapshot.New(etcdsnapshot.Config{
		Schedule: cfg.EtcdSnapshotScheduleCron, Dir: dir, Node: node, Retention: retention,
		Save: save, Logger: log.With("component", "etcd-snapshot"),
	})
	if err != nil {
		return nil, fmt.Errorf("--etcd-snapshot-schedule-cron: %w", err)
	}
	return s, nil
}

// credentialFiles are the files of a data dir that are not in etcd and that clients depend
// on: the CA (which signs the serving and client certificates), the serving certificate,
// the admin token and the service account signing key.
var credentialFiles = []string{"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.token", authn.KeyFile}

// CopyCredentials copies the credentials of data dir from into data dir to (created 0700),
// so that a server restored from a snapshot of from's etcd keeps its CA, admin token and
// service account key: existing kubeconfigs, client certificates and ServiceAccount tokens
// stay valid. Files missing in from are skipped (the server creates them); files are
// written with from's modes.
func CopyCredentials(from, to string) error {
	if err := privateDir(to, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	for _, name := range credentialFiles {
		src := filepath.Join(from, name)
		fi, err := os.Stat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := pki.WriteFile(filepath.Join(to, name), b, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("copying %s: %w", name, err)
		}
	}
	return nil
}
