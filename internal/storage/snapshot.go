package storage

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	etcdutlsnapshot "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
)

// ErrDataDirHasEtcd is returned by RestoreSnapshot when the target data dir already holds
// etcd data.
var ErrDataDirHasEtcd = errors.New("data dir already holds etcd data")

// SaveSnapshot saves a snapshot of an etcd member to path, mode 0600, with etcd's client
// snapshot (written to path.part, checked, synced, then renamed). A snapshot is one member's
// state at one revision: the endpoints are tried in turn until one member gives its
// snapshot. tlsConfig may be nil for http.
func SaveSnapshot(ctx context.Context, endpoints []string, tlsConfig *tls.Config, path string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(endpoints) == 0 {
		return errors.New("etcd snapshot: no endpoints")
	}
	var errs []error
	for _, ep := range endpoints {
		cfg := clientv3.Config{Endpoints: []string{ep}, TLS: tlsConfig, DialTimeout: snapshotProbeTimeout,
			Logger: newZapLogger(logger, slog.LevelError, nil)}
		err := probeMember(ctx, cfg)
		if err == nil {
			_, err = snapshot.SaveWithVersion(ctx, cfg.Logger, cfg, path)
		}
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("etcd snapshot of %s to %s: %w", ep, path, mapError(err)))
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// snapshotProbeTimeout bounds asking a member for its status before its snapshot: the
// client dials lazily, and a snapshot request to a member that never answers would wait as
// long as ctx.
const snapshotProbeTimeout = 10 * time.Second

// probeMember asks cfg's one endpoint for its status within snapshotProbeTimeout.
func probeMember(ctx context.Context, cfg clientv3.Config) error {
	c, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, snapshotProbeTimeout)
	defer cancel()
	_, err = c.Status(ctx, cfg.Endpoints[0])
	return err
}

// SaveSnapshot saves a snapshot of this embedded etcd to path (see the function
// SaveSnapshot), over its client listener.
func (e *Embedded) SaveSnapshot(ctx context.Context, path string) error {
	tlsCfg, err := ExternalTLS(e.pki.client.CAFile, e.pki.client.CertFile, e.pki.client.KeyFile)
	if err != nil {
		return err
	}
	return SaveSnapshot(ctx, e.endpoints, tlsCfg, path, e.logger)
}

// SaveLocalSnapshot saves a snapshot of the embedded etcd running on data dir dir (in
// another process, such as a running quotad; see ConnectLocal) to path.
func SaveLocalSnapshot(ctx context.Context, dir, path string, logger *slog.Logger) error {
	// 1. Check that it runs and answers (a clear error otherwise).
	probeCtx, cancel := context.WithTimeout(ctx, snapshotProbeTimeout)
	defer cancel()
	c, err := ConnectLocal(probeCtx, dir, logger)
	if err != nil {
		if ctx.Err() == nil && probeCtx.Err() != nil {
			return fmt.Errorf("the embedded etcd of data dir %s does not answer (is quotad running on it?): %w", dir, err)
		}
		return err
	}
	_ = c.Close()
	// 2. Snapshot it with the same client certificate.
	eps, err := LocalEndpoints(dir)
	if err != nil {
		return err
	}
	files := LocalTLS(dir)
	tlsCfg, err := ExternalTLS(files.CAFile, files.CertFile, files.KeyFile)
	if err != nil {
		return err
	}
	return SaveSnapshot(ctx, eps, tlsCfg, path, logger)
}

// RestoreSnapshot restores the etcd snapshot file snapshotPath into data dir dir as the
// single member StartEmbedded(dir) then starts from: the embedded member's name and peer
// URL, etcd's default cluster token, the snapshot's keys, values and revisions (no
// revision bump). dir is created (0700) if missing; it must not hold etcd data yet (the
// error wraps ErrDataDirHasEtcd). Only etcd's data is restored: the rest of a data dir
// (CA, admin token, service account key) is not in etcd.
func RestoreSnapshot(snapshotPath, dir string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if _, err := os.Stat(snapshotPath); err != nil {
		return fmt.Errorf("etcd snapshot: %w", err)
	}
	dataDir := filepath.Join(dir, "etcd")
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("restore into %s: %w (%s is not empty)", dir, ErrDataDirHasEtcd, dataDir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("restore into %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// etcd's restore wants the member dir absent or empty.
	_ = os.Remove(dataDir)
	peer := embeddedPeerURL(dataDir)
	err := etcdutlsnapshot.NewV3(newZapLogger(logger, slog.LevelError, nil)).Restore(etcdutlsnapshot.RestoreConfig{
		SnapshotPath:        snapshotPath,
		Name:                embeddedMemberName,
		OutputDataDir:       dataDir,
		PeerURLs:            []string{peer.String()},
		InitialCluster:      embeddedMemberName + "=" + peer.String(),
		InitialClusterToken: embed.NewConfig().InitialClusterToken,
	})
	if err != nil {
		return fmt.Errorf("restore %s into %s: %w", snapshotPath, dataDir, err)
	}
	return os.Chmod(dataDir, 0o700)
}
