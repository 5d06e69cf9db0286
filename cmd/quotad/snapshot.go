package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/storage"
)

const snapshotUsage = `Save or restore etcd snapshots of quotad's data.

  save FILE       Save a snapshot of the running embedded etcd of --data-dir (or, with
                  --etcd-servers, of the first external etcd member that answers) to FILE
                  (mode 0600).
  restore FILE    Restore FILE into --data-dir, which must not hold etcd data yet, as the
                  single member that ` + "`quotad --data-dir DIR`" + ` then starts from: the same
                  objects, resourceVersions and quota usage. The CA, admin token and service
                  account key are not in etcd: with --from-data-dir they are copied from the
                  snapshotted server's data dir, so existing kubeconfigs and ServiceAccount
                  tokens keep working; without it the restored server makes new ones.

Usage:
  quotad snapshot save FILE [--data-dir DIR | --etcd-servers URL [--etcd-cafile F --etcd-certfile F --etcd-keyfile F]]
  quotad snapshot restore FILE --data-dir DIR [--from-data-dir OLD]

Flags:
`

// runSnapshot is `quotad snapshot save|restore`.
func runSnapshot(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("quotad snapshot", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	var (
		dataDir, fromDataDir      string
		servers                   []string
		caFile, certFile, keyFile string
		help                      bool
	)
	fs.StringVar(&dataDir, "data-dir", "", "quotad's data dir: where save finds the running embedded etcd (default quotad-data), where restore writes (required).")
	fs.StringVar(&fromDataDir, "from-data-dir", "", "restore: the snapshotted server's data dir, whose CA, serving certificate, admin token and service account key are copied into --data-dir.")
	fs.StringSliceVar(&servers, "etcd-servers", nil, "save: snapshot this external etcd (the first of its members that answers) instead of the embedded one.")
	fs.StringVar(&caFile, "etcd-cafile", "", "save: SSL Certificate Authority file used to secure etcd communication.")
	fs.StringVar(&certFile, "etcd-certfile", "", "save: SSL certification file used to secure etcd communication.")
	fs.StringVar(&keyFile, "etcd-keyfile", "", "save: SSL key file used to secure etcd communication.")
	fs.BoolVarP(&help, "help", "h", false, "help for snapshot")
	usage := func(w io.Writer) { fmt.Fprintf(w, "%s%s", snapshotUsage, fs.FlagUsagesWrapped(100)) }
	err := fs.Parse(args)
	if err == pflag.ErrHelp || help {
		usage(stdout)
		return 0
	}
	if err == nil {
		err = checkSnapshotArgs(fs.Args(), dataDir, fromDataDir, servers, caFile+certFile+keyFile != "")
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		usage(stderr)
		return 1
	}
	verb, file := fs.Arg(0), fs.Arg(1)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch verb {
	case "save":
		err = saveSnapshot(ctx, file, dataDir, servers, caFile, certFile, keyFile, log)
	case "restore":
		err = restoreSnapshot(file, dataDir, fromDataDir, log)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	switch verb {
	case "save":
		fmt.Fprintf(stdout, "Snapshot saved at %s\n", file)
	case "restore":
		fmt.Fprintf(stdout, "Snapshot %s restored into %s; start it with: quotad --data-dir %s\n", file, dataDir, dataDir)
	}
	return 0
}

// checkSnapshotArgs checks the verb, the file and which flags go with which verb.
func checkSnapshotArgs(args []string, dataDir, fromDataDir string, servers []string, etcdTLS bool) error {
	if len(args) == 0 {
		return fmt.Errorf("a command is required: save or restore")
	}
	verb := args[0]
	if verb != "save" && verb != "restore" {
		return fmt.Errorf("unknown command %q for \"quotad snapshot\"", verb)
	}
	if len(args) < 2 || args[1] == "" {
		return fmt.Errorf("snapshot %s: a snapshot FILE is required", verb)
	}
	if len(args) > 2 {
		return fmt.Errorf("snapshot %s: unexpected argument %q", verb, args[2])
	}
	switch verb {
	case "save":
		if fromDataDir != "" {
			return fmt.Errorf("snapshot save: --from-data-dir is a restore flag")
		}
		if len(servers) > 0 && dataDir != "" {
			return fmt.Errorf("snapshot save: --data-dir and --etcd-servers are exclusive")
		}
		if etcdTLS && len(servers) == 0 {
			return fmt.Errorf("snapshot save: --etcd-cafile, --etcd-certfile and --etcd-keyfile go with --etcd-servers")
		}
	case "restore":
		if dataDir == "" {
			return fmt.Errorf("snapshot restore: --data-dir is required")
		}
		if len(servers) > 0 || etcdTLS {
			return fmt.Errorf("snapshot restore: --etcd-* flags are save flags (restore writes an embedded etcd data dir)")
		}
	}
	return nil
}

// saveSnapshot saves the embedded etcd of dataDir, or the first of servers, to file.
func saveSnapshot(ctx context.Context, file, dataDir string, servers []string, caFile, certFile, keyFile string, log *slog.Logger) error {
	if len(servers) == 0 {
		if dataDir == "" {
			dataDir = "quotad-data"
		}
		return storage.SaveLocalSnapshot(ctx, dataDir, file, log)
	}
	var tlsCfg *tls.Config
	if caFile != "" || certFile != "" {
		t, err := storage.ExternalTLS(caFile, certFile, keyFile)
		if err != nil {
			return err
		}
		tlsCfg = t
	}
	return storage.SaveSnapshot(ctx, servers, tlsCfg, file, log)
}

// restoreSnapshot restores file into dataDir and, with fromDataDir, copies its credentials.
func restoreSnapshot(file, dataDir, fromDataDir string, log *slog.Logger) error {
	if err := storage.RestoreSnapshot(file, dataDir, log); err != nil {
		return err
	}
	if fromDataDir != "" {
		return server.CopyCredentials(fromDataDir, dataDir)
	}
	return nil
}
