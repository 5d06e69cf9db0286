package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
)

// errDoesNotFit is returned by fit when an object does not fit: the exit code is 1 and
// nothing more is printed (the table already said why).
var errDoesNotFit = errors.New("does not fit")

// run executes the plugin with args (without the program name) and returns the exit code:
// 0, 1 for an error or an object that does not fit (errors are printed as kubectl prints
// them, "error: ..."), 1 for bad usage too.
func run(args []string, streams genericiooptions.IOStreams) int {
	cmd := newRootCommand(streams)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		if !errors.Is(err, errDoesNotFit) {
			fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
		}
		return 1
	}
	return 0
}

// env is what every subcommand needs from kubectl's flags.
type env struct {
	streams genericiooptions.IOStreams
	flags   *genericclioptions.ConfigFlags
}

// config returns the client configuration and the namespace the flags and kubeconfig
// select, and whether -n/--namespace set it explicitly.
func (e *env) config() (*rest.Config, string, bool, error) {
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, "", false, err
	}
	ns, explicit, err := e.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", false, err
	}
	cfg.UserAgent = "kubectl-quota/" + rest.DefaultKubernetesUserAgent()
	return cfg, ns, explicit, nil
}

// examples indents example text as kubectl's help does.
func examples(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			l = "  " + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// newRootCommand returns `kubectl quota` with its subcommands and kubectl's flags.
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	e := &env{streams: streams, flags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   "kubectl-quota",
		Short: "Show quota usage, check whether objects fit, and explain which quotas match",
		Long: `Quota feedback for ResourceQuotas and cluster quotas.

 top      lists the namespace's quotas (or every namespace's, with -A) per resource,
          highest usage first, with each quota's enforcement mode and warn-at threshold.
 fit      asks the server whether the objects of a file, and all their replicas, would
          fit the namespace's quotas, without creating anything; exits 1 when they do not.
 explain  tells, for each quota of an object's namespace, whether it matches the object
          and why, scope by scope, and what the object is charged.

top and explain read standard Kubernetes APIs and work against any cluster; fit needs a
server that serves quota.quotad.io/v1 QuotaReview (quotad).`,
		Example: examples(`
			# Show quota usage in the current namespace, highest pressure first
			kubectl quota top

			# Check whether a Deployment with 10 replicas fits the quotas of team-a
			kubectl quota fit -f deploy.yaml --replicas 10 -n team-a

			# Explain which quotas a pod is charged to
			kubectl quota explain pod/web-0`),
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl quota"},
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.CompletionOptions.DisableDefaultCmd = true
	e.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newTopCommand(e), newFitCommand(e), newExplainCommand(e))
	return root
}
