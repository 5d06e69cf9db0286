package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/quotad/quotad/internal/memlimit"
	"github.com/quotad/quotad/internal/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its arguments and outputs: flags → config → server.Run.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "kubeconfig" {
		return runKubeconfig(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "etcd" {
		return runEtcd(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "snapshot" {
		return runSnapshot(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "token" {
		return runToken(args[1:], stdout, stderr)
	}
	o := newOptions()
	if err := o.parse(args); err != nil {
		if err == pflag.ErrHelp {
			o.printHelp(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "Error: %v\n", err)
		o.printUsage(stderr)
		return 1
	}
	if o.help {
		o.printHelp(stdout)
		return 0
	}
	if o.showVersion != "false" {
		printVersion(stdout, o.showVersion, server.CurrentVersion())
		return 0
	}
	cfg := o.cfg
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Memory that follows the live heap: GOGC set after each collection to aim the heap at
	// 80% of it (at most 400, lower while lists read in bulk), the soft limit a backstop
	// above (memlimit.Default). GOGC and GOMEMLIMIT, when set, are left as they say.
	if os.Getenv("GOMEMLIMIT") == "" {
		policy := memlimit.Default
		if os.Getenv("GOGC") != "" {
			policy.Percent = 0
		}
		memlimit.Follow(ctx, policy)
	} else if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	cfg.Ready = func(r *server.Running) {
		fmt.Fprintf(stdout, "quotad is serving the Kubernetes API at %s\n", r.URL)
		fmt.Fprintf(stdout, "KUBECONFIG=%s kubectl get namespaces\n", r.Kubeconfig)
		switch {
		case r.JoinTokenCreated:
			// Printed once, when made; `quotad token` prints it again.
			fmt.Fprintf(stdout, "Other quotads join its etcd cluster with: quotad --join %s --join-token %s\n", r.JoinURL, r.JoinToken)
		case r.JoinToken != "":
			fmt.Fprintf(stdout, "Other quotads join its etcd cluster with: quotad --join %s --join-token <token> (quotad token --data-dir %s prints it)\n", r.JoinURL, cfg.DataDir)
		}
	}
	if err := server.Run(ctx, cfg); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// SIGINT or SIGTERM before quotad was ready (waiting for its etcd cluster's
			// quorum): a requested stop, not a failure.
			fmt.Fprintf(stderr, "quotad: stopped before it was ready: %v\n", err)
			return 0
		}
		fmt.Fprintf(stderr, "quotad: %v\n", err)
		return 1
	}
	return 0
}
