package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/quotad/quotad/internal/server"
)

func main() {
	var cfg server.Config
	var etcdServers, enable, disable string
	var verbose bool
	fs := flag.NewFlagSet("quotad", flag.ExitOnError)
	fs.StringVar(&cfg.DataDir, "data-dir", "quotad-data", "directory for the embedded etcd, certificates, tokens and the admin kubeconfig")
	fs.StringVar(&cfg.BindAddress, "bind-address", "127.0.0.1", "IP address to serve HTTPS on")
	fs.IntVar(&cfg.SecurePort, "secure-port", 6443, "port to serve HTTPS on (0 picks a free port)")
	fs.StringVar(&etcdServers, "etcd-servers", "", "comma-separated etcd URLs; when set, no embedded etcd is started")
	fs.StringVar(&cfg.EtcdCAFile, "etcd-cafile", "", "CA file for the external etcd")
	fs.StringVar(&cfg.EtcdCertFile, "etcd-certfile", "", "client certificate for the external etcd")
	fs.StringVar(&cfg.EtcdKeyFile, "etcd-keyfile", "", "client key for the external etcd")
	fs.StringVar(&cfg.TokenAuthFile, "token-auth-file", "", "CSV file of bearer tokens: token,user,uid[,\"group1,group2\"]")
	fs.StringVar(&cfg.AdmissionControlConfigFile, "admission-control-config-file", "", "AdmissionConfiguration file (ResourceQuota limitedResources)")
	fs.StringVar(&enable, "enable-admission-plugins", "", "admission plugins to enable in addition to the defaults (NamespaceLifecycle, LimitRanger, Priority, ResourceQuota)")
	fs.StringVar(&disable, "disable-admission-plugins", "", "admission plugins to disable")
	fs.DurationVar(&cfg.ResourceQuotaSyncPeriod, "resource-quota-sync-period", 5*time.Minute, "how often every quota's usage is recomputed and verified")
	fs.BoolVar(&cfg.Debug, "profiling", false, "serve /debug/pprof/ to authenticated clients")
	fs.BoolVar(&verbose, "v", false, "verbose logging")
	_ = fs.Parse(os.Args[1:])
	cfg.EtcdServers = splitList(etcdServers)
	cfg.EnableAdmissionPlugins = splitList(enable)
	cfg.DisableAdmissionPlugins = splitList(disable)
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	if os.Getenv("GOGC") == "" {
		// quotad allocates per request; trading some memory for less GC work pays off.
		debug.SetGCPercent(200)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit: the GC works harder, and returns memory sooner, as the heap nears it.
		debug.SetMemoryLimit(512 << 20)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg.Ready = func(r *server.Running) {
		fmt.Printf("quotad is serving the Kubernetes API at %s\n", r.URL)
		fmt.Printf("KUBECONFIG=%s kubectl get namespaces\n", r.Kubeconfig)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "quotad: %v\n", err)
		os.Exit(1)
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
