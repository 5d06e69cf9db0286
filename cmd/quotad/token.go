package main

import (
	"fmt"
	"io"

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

Flags:
`

// runToken is `quotad token`: with no command it prints the join token; commands (none
// yet) may follow it.
func runToken(args []string, stdout, stderr io.Writer) int {
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
