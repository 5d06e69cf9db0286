package main

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/quota"
)

// newTopCommand returns `kubectl quota top`.
func newTopCommand(e *env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "top [-A]",
		Short: "Show quota usage per resource, highest pressure first",
		Long: `Show the usage of the namespace's quotas per resource: used, hard, the percentage and a bar,
sorted by pressure (highest percentage first).

The ResourceQuotas of the namespace are listed, and the cluster quotas that select it
(quota.openshift.io/v1 AppliedClusterResourceQuotas) when the server serves them and you
may read them. With -A, the ResourceQuotas of every namespace and every
ClusterResourceQuota you may read (its total, with NAMESPACE "(cluster)"). QUOTA names a
cluster quota clusterresourcequota/<name>.

MODE is the quota's enforcement mode (annotation quota.quotad.io/enforcement: Enforce,
Warn or Audit) and WARN-AT its threshold for the resource (annotation
quota.quotad.io/warn-at). A ! after the percentage marks usage above the threshold or
above hard (possible for Warn and Audit quotas).`,
		Example: examples(`
			# Quota usage in the current namespace
			kubectl quota top

			# Quota usage in every namespace
			kubectl quota top -A`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, ns, _, err := e.config()
			if err != nil {
				return err
			}
			if all {
				ns = ""
			}
			return runTop(cmd.Context(), cfg, ns, e.streams.Out, e.streams.ErrOut)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "If present, show the quotas of every namespace and every cluster quota. Namespace in current context is ignored even if specified with --namespace.")
	return cmd
}

// usageRow is one resource of one quota.
type usageRow struct {
	namespace string
	quota     string
	resource  corev1.ResourceName
	used      resource.Quantity
	hard      resource.Quantity
	pressure  *big.Rat // nil: infinitely over (hard 0)
	mode      quota.Enforcement
	warnAt    int64
}

// over reports whether the row deserves the ! marker: above the threshold or above hard.
func (r usageRow) over() bool {
	if r.pressure == nil {
		return true
	}
	if r.pressure.Cmp(big.NewRat(1, 1)) > 0 {
		return true
	}
	return r.warnAt > 0 && r.pressure.Cmp(big.NewRat(r.warnAt, 100)) > 0
}

// runTop prints the usage table of the quotas of ns ("" for every namespace, with the
// NAMESPACE column) to out; the "No resources found" notice goes to errOut, as kubectl's.
func runTop(ctx context.Context, cfg *rest.Config, ns string, out, errOut io.Writer) error {
	c, err := newClients(cfg)
	if err != nil {
		return err
	}
	qs, err := c.resourceQuotas(ctx, ns)
	if err != nil {
		return err
	}
	var cluster []shownQuota
	if ns == "" {
		cluster, err = c.clusterQuotas(ctx)
	} else {
		cluster, err = c.appliedClusterQuotas(ctx, ns)
	}
	if err != nil {
		return err
	}
	qs = append(qs, cluster...)
	rows := topRows(qs)
	if len(rows) == 0 {
		if ns == "" {
			fmt.Fprintln(errOut, "No resources found")
		} else {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", ns)
		}
		return nil
	}
	return printTop(out, rows, ns == "")
}

// topRows makes one row per quota and name of its status.hard, highest pressure first
// (then by namespace, quota and resource).
func topRows(qs []shownQuota) []usageRow {
	var rows []usageRow
	for _, q := range qs {
		mode := quota.EnforcementOf(q.quota.Annotations)
		warnAt := quota.WarnAtOf(q.quota.Annotations)
		nsText := q.namespace
		if q.cluster && q.namespace == "" {
			nsText = "(cluster)"
		}
		for _, name := range quota.ResourceNames(q.quota.Status.Hard) {
			hard := q.quota.Status.Hard[name]
			used, ok := q.quota.Status.Used[name]
			if !ok {
				used = *resource.NewQuantity(0, hard.Format)
			}
			rows = append(rows, usageRow{
				namespace: nsText, quota: q.label(), resource: name,
				used: used, hard: hard, pressure: pressure(used, hard),
				mode: mode, warnAt: warnAt.For(name),
			})
		}
	}
	slices.SortStableFunc(rows, func(a, b usageRow) int {
		if c := cmpPressure(b.pressure, a.pressure); c != 0 {
			return c
		}
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.quota, b.quota); c != 0 {
			return c
		}
		return strings.Compare(string(a.resource), string(b.resource))
	})
	return rows
}

// printTop writes rows as a kubectl-style table.
func printTop(out io.Writer, rows []usageRow, withNamespace bool) error {
	w := printers.GetNewTabWriter(out)
	header := []string{"QUOTA", "RESOURCE", "USED", "HARD", "%", "BAR", "MODE", "WARN-AT"}
	if withNamespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	fmt.Fprintln(w, strings.Join(header, "\t"))
	marked := false
	for _, r := range rows {
		pct := percentText(r.pressure)
		if r.over() {
			pct += "!"
			marked = true
		}
		warnAt := "-"
		if r.warnAt > 0 {
			warnAt = fmt.Sprintf("%d%%", r.warnAt)
		}
		cells := []string{r.quota, string(r.resource), r.used.String(), r.hard.String(), pct, bar(r.pressure), string(r.mode), warnAt}
		if withNamespace {
			cells = append([]string{r.namespace}, cells...)
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if marked {
		_, err := fmt.Fprintln(out, "! usage above the warn-at threshold or above hard")
		return err
	}
	return nil
}
