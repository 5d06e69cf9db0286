package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/quotad/quotad/internal/storage"
)

const etcdUsage = `Show or change the members of the embedded etcd cluster (quotad --cluster-init, --join).

Both commands connect to the embedded etcd running on --data-dir, with the client
certificate in its etcd-pki. A member removed while its quotad runs stops that quotad;
stop a quotad before removing its member to retire it. A member that never started is
named by its ID.

Usage:
  quotad etcd members [--data-dir DIR]
  quotad etcd remove NAME [--data-dir DIR]

Flags:
`

// etcdTimeout bounds one etcd command.
const etcdTimeout = 30 * time.Second

// runEtcd is `quotad etcd`.
func runEtcd(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("quotad etcd", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {}
	dataDir := "quotad-data"
	var help bool
	fs.StringVar(&dataDir, "data-dir", dataDir, "quotad's data dir, whose embedded etcd is running.")
	fs.BoolVarP(&help, "help", "h", false, "help for etcd")
	usage := func(w io.Writer) { fmt.Fprintf(w, "%s%s", etcdUsage, fs.FlagUsagesWrapped(100)) }
	err := fs.Parse(args)
	if err == pflag.ErrHelp || help {
		usage(stdout)
		return 0
	}
	rest := fs.Args()
	if err == nil {
		switch {
		case len(rest) == 0:
			err = fmt.Errorf("a command is required: members or remove")
		case rest[0] == "members" && len(rest) != 1:
			err = fmt.Errorf("unexpected argument %q", rest[1])
		case rest[0] == "remove" && len(rest) != 2:
			err = fmt.Errorf("remove takes one member name")
		case rest[0] != "members" && rest[0] != "remove":
			err = fmt.Errorf("unknown command %q for \"quotad etcd\"", rest[0])
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		usage(stderr)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	c, err := storage.ConnectLocal(ctx, dataDir, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	defer c.Close()
	if rest[0] == "remove" {
		m, err := storage.RemoveMember(ctx, c, rest[1])
		if err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "member %s (%x) removed\n", rest[1], m.ID)
		return 0
	}
	members, err := storage.ListMembers(ctx, c)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	printMembers(stdout, members)
	return 0
}

// printMembers prints members as kubectl prints a table.
func printMembers(w io.Writer, members []storage.Member) {
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tPEER URLS\tCLIENT URLS\tLEARNER\tLEADER")
	for _, m := range members {
		name := m.Name
		if name == "" {
			name = "<unstarted>"
		}
		fmt.Fprintf(tw, "%s\t%x\t%s\t%s\t%s\t%s\n", name, m.ID, list(m.PeerURLs), list(m.ClientURLs), strconv.FormatBool(m.Learner), strconv.FormatBool(m.Leader))
	}
	_ = tw.Flush()
}

// list is a comma-separated list, or <none>.
func list(s []string) string {
	if len(s) == 0 {
		return "<none>"
	}
	return strings.Join(s, ",")
}
