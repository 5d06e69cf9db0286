package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/quotad/quotad/internal/server"
)

const tokenUsage = `Print the join token of the embedded etcd cluster of --data-dir.

Other quotads join the cluster with it: quotad --join https://<host>:<secure-port>
--join-token <token> (or --join-token-file). quotad --cluster-init makes it once and prints
it only then; this prints it again, from <data-dir>/join-token. Anyone holding it can join
a server to the cluster and receives the cluster's CA key and admin token: keep it secret.

Usage:
  quotad token [--data-dir DIR]
  quotad token create [--ttl 24h] [--description TEXT] [--data-dir DIR]   (a node's bootstrap token)

Flags:
`

const tokenCreateUsage = `Create a bootstrap token a node joins the cluster with, and print a bootstrap kubeconfig.

The token is a Secret kube-system/bootstrap-token-<id> made through the server of
--data-dir as its admin. It authenticates as system:bootstrap:<id> in the groups
system:bootstrappers and ` + server.NodeBootstrapGroup + `, which may
ask for a kubelet client certificate and have it approved at once: a kubelet started with
--bootstrap-kubeconfig <file> gets its own credentials (system:node:<name>) and uses
them from then on. Until it expires, anyone holding it can join a node: keep it secret, and
delete the Secret to revoke it.

The kubeconfig goes to stdout (save it to a file); the token, its expiry and the CA hash
to stderr.

Usage:
  quotad token create [--ttl 24h] [--description TEXT] [--data-dir DIR] > bootstrap.kubeconfig

Flags:
`

// runToken is `quotad token`: with no command it prints the join token; `create` makes a
// node's bootstrap token.
func runToken(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "create" {
		return runTokenCreate(args[1:], stdout, stderr)
	}
	fs := pflag.NewFlagSet("quotad token", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	dataDir := "quotad-data"
	var help bool
	fs.StringVar(&dataDir, "data-dir", dataDir, "quotad's data dir, a cluster member's (started with --cluster-init or --join).")
	fs.BoolVarP(&help, "help", "h", false, "help for token")
	usage := func(w io.Writer) { fmt.Fprintf(w, "%s%s", tokenUsage, fs.FlagUsagesWrapped(100)) }
	err := fs.Parse(args)
	if err == pflag.ErrHelp || help {
		usage(stdout)
		return 0
	}
	if rest := fs.Args(); err == nil && len(rest) > 0 {
		err = fmt.Errorf("unknown command %q for \"quotad token\"", rest[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		usage(stderr)
		return 1
	}
	tok, err := server.ReadJoinToken(dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	return 0
}

// runTokenCreate is `quotad token create`.
func runTokenCreate(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("quotad token create", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	dataDir := "quotad-data"
	var o server.BootstrapTokenOptions
	var help bool
	fs.DurationVar(&o.TTL, "ttl", 24*time.Hour, "How long the token authenticates; 0 for never.")
	fs.StringVar(&o.Description, "description", "", "A description of the token, kept in its Secret.")
	fs.StringVar(&dataDir, "data-dir", dataDir, "quotad's data dir, which holds its admin kubeconfig.")
	fs.BoolVarP(&help, "help", "h", false, "help for token create")
	usage := func(w io.Writer) { fmt.Fprintf(w, "%s%s", tokenCreateUsage, fs.FlagUsagesWrapped(100)) }
	err := fs.Parse(args)
	if err == pflag.ErrHelp || help {
		usage(stdout)
		return 0
	}
	if rest := fs.Args(); err == nil && len(rest) > 0 {
		err = fmt.Errorf("unexpected argument %q for \"quotad token create\"", rest[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		usage(stderr)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := server.CreateBootstrapToken(ctx, dataDir, o, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	expires := "never"
	if !tok.Expires.IsZero() {
		expires = tok.Expires.Format(time.RFC3339)
	}
	fmt.Fprintf(stderr, "Bootstrap token %s (expires: %s) for %s, CA %s.\n", tok.Token, expires, tok.Server, tok.CAHash)
	fmt.Fprintf(stderr, "Start a kubelet with --bootstrap-kubeconfig <the kubeconfig below, saved to a file> --kubeconfig <where it keeps its own>.\n")
	_, _ = stdout.Write(tok.Kubeconfig)
	return 0
}
