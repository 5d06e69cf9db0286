package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/quotad/quotad/internal/server"
)

const kubeconfigUsage = `Mint a client certificate signed by quotad's CA and print a kubeconfig that uses it.

The user is the certificate's CommonName and each --group one of its Organizations, as
kube-apiserver reads client certificates. The server URL and CA come from the admin
kubeconfig in --data-dir.

Usage:
  quotad kubeconfig --user NAME [--group GROUP]... [--namespace NS] [--expiration 720h] [--data-dir DIR] > NAME.kubeconfig

Flags:
`

// runKubeconfig is `quotad kubeconfig`.
func runKubeconfig(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("quotad kubeconfig", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	var k server.ClientKubeconfig
	dataDir := "quotad-data"
	var help bool
	fs.StringVar(&k.User, "user", "", "The user name (the certificate's CommonName). Required.")
	fs.StringArrayVar(&k.Groups, "group", nil, "A group of the user (the certificate's Organization); repeat for several.")
	fs.StringVarP(&k.Namespace, "namespace", "n", "", "The namespace of the kubeconfig's context.")
	fs.DurationVar(&k.Expiration, "expiration", 720*time.Hour, "How long the certificate is valid.")
	fs.StringVar(&dataDir, "data-dir", dataDir, "quotad's data dir, which holds its CA and admin kubeconfig.")
	fs.BoolVarP(&help, "help", "h", false, "help for kubeconfig")
	usage := func(w io.Writer) { fmt.Fprintf(w, "%s%s", kubeconfigUsage, fs.FlagUsagesWrapped(100)) }
	err := fs.Parse(args)
	if err == pflag.ErrHelp || help {
		usage(stdout)
		return 0
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil && k.User == "" {
		err = fmt.Errorf("--user is required")
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		usage(stderr)
		return 1
	}
	out, err := server.MintKubeconfig(dataDir, k, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	_, _ = stdout.Write(out)
	return 0
}
