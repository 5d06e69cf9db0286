package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/fit"
)

// fitOptions are fit's own flags.
type fitOptions struct {
	filenames []string
	replicas  int32
	output    string
}

// newFitCommand returns `kubectl quota fit`.
func newFitCommand(e *env) *cobra.Command {
	o := &fitOptions{}
	cmd := &cobra.Command{
		Use:   "fit -f FILENAME [--replicas N]",
		Short: "Check whether objects and their replicas fit the namespace's quotas",
		Long: `Ask the server whether the objects of a file would fit the quotas of their namespace,
without creating anything (a quota.quotad.io/v1 QuotaReview per object, evaluated as
admission would evaluate the create, or the update when the object exists).

For each object, a table per matching quota and resource: what is used now, what the
object and all its replicas would add (and one replica), hard, what remains, and whether
it fits; then "fits", or how many replicas fit and which quota refuses the rest.

The exit code is 1 when any object does not fit, so it can gate a pipeline. It needs a
server that serves quota.quotad.io/v1 (quotad).`,
		Example: examples(`
			# Check whether a Deployment fits the quotas of its namespace
			kubectl quota fit -f deploy.yaml

			# Check whether it would fit with 10 replicas
			kubectl quota fit -f deploy.yaml --replicas 10

			# Print the reviews the server answered, as YAML
			kubectl quota fit -f deploy.yaml -o yaml`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(o.filenames) == 0 {
				return errors.New("must specify -f: the objects to check")
			}
			var replicas *int32
			if cmd.Flags().Changed("replicas") {
				if o.replicas < 0 {
					return fmt.Errorf("--replicas must not be negative, got %d", o.replicas)
				}
				replicas = &o.replicas
			}
			switch o.output {
			case "", "json", "yaml":
			default:
				return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", o.output)
			}
			cfg, ns, explicit, err := e.config()
			if err != nil {
				return err
			}
			var objs []*unstructured.Unstructured
			for _, f := range o.filenames {
				more, err := readObjects(f, e.streams.In)
				if err != nil {
					return err
				}
				objs = append(objs, more...)
			}
			if len(objs) == 0 {
				return errors.New("no objects passed to fit")
			}
			fits, err := runFit(cmd.Context(), cfg, fitRequest{namespace: ns, explicit: explicit, objects: objs, replicas: replicas, output: o.output}, e.streams.Out)
			if err != nil {
				return err
			}
			if !fits {
				return errDoesNotFit
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&o.filenames, "filename", "f", nil, "Files that contain the objects to check (- for standard input).")
	cmd.Flags().Int32Var(&o.replicas, "replicas", 0, "The replica count to check instead of each object's own (spec.replicas, a Job's parallelism; for a Pod, how many copies).")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Output format: json or yaml prints the QuotaReviews the server answered.")
	return cmd
}

// readObjects decodes every YAML or JSON document of a file (- for in), expanding Lists;
// of a directory, every .yaml, .yml and .json file in it, in name order, as kubectl -f.
func readObjects(name string, in io.Reader) ([]*unstructured.Unstructured, error) {
	if name != "-" {
		if fi, err := os.Stat(name); err == nil && fi.IsDir() {
			entries, err := os.ReadDir(name)
			if err != nil {
				return nil, err
			}
			var out []*unstructured.Unstructured
			for _, e := range entries {
				switch filepath.Ext(e.Name()) {
				case ".yaml", ".yml", ".json":
				default:
					continue
				}
				if !e.Type().IsRegular() {
					continue
				}
				more, err := readObjects(filepath.Join(name, e.Name()), in)
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
			}
			return out, nil
		}
	}
	var r io.Reader = in
	if name != "-" {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("error parsing %s: %w", name, err)
		}
		if len(doc) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: doc}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("error parsing %s: an object has no apiVersion or kind", name)
		}
		if u.IsList() {
			err := u.EachListItem(func(o runtime.Object) error {
				out = append(out, o.(*unstructured.Unstructured))
				return nil
			})
			if err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, u)
	}
}

// fitRequest is what fit evaluates.
type fitRequest struct {
	// namespace is the namespace of objects without one; explicit when -n set it, so an
	// object of another namespace is an error, as kubectl's.
	namespace string
	explicit  bool
	objects   []*unstructured.Unstructured
	replicas  *int32
	output    string
}

// reviewGV is quota.quotad.io/v1.
var reviewGV = fit.SchemeGroupVersion

// errNotServed is fit's error against a server without the QuotaReview API.
var errNotServed = fmt.Errorf("the server does not serve %s QuotaReview: kubectl quota fit needs quotad's quota review API (top and explain work against any server)", reviewGV)

// runFit posts one QuotaReview per object and prints the answers; it reports whether every
// object fits.
func runFit(ctx context.Context, cfg *rest.Config, req fitRequest, out io.Writer) (bool, error) {
	c, err := newClients(cfg)
	if err != nil {
		return false, err
	}
	res, err := c.serves(reviewGV, "QuotaReview")
	if err != nil {
		return false, err
	}
	if res == "" {
		return false, errNotServed
	}
	gvr := reviewGV.WithResource(res)
	allFit := true
	var reviews []*fit.QuotaReview
	for i, obj := range req.objects {
		ns := obj.GetNamespace()
		switch {
		case ns == "":
			ns = req.namespace
		case req.explicit && ns != req.namespace:
			return false, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, req.namespace, ns)
		}
		review, err := postReview(ctx, c, gvr, ns, obj, req.replicas)
		if err != nil {
			if apierrors.IsNotFound(err) && isReviewNotFound(err) {
				return false, errNotServed
			}
			return false, fmt.Errorf("%s: %w", objectRef(obj), err)
		}
		reviews = append(reviews, review)
		allFit = allFit && review.Status.Fits
		if req.output == "" {
			if i > 0 {
				fmt.Fprintln(out)
			}
			if err := printReview(out, obj, ns, review); err != nil {
				return false, err
			}
		}
	}
	switch req.output {
	case "json":
		var v any = reviews[0]
		if len(reviews) > 1 {
			v = map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": reviews}
		}
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return false, err
		}
		if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
			return false, err
		}
	case "yaml":
		for i, r := range reviews {
			b, err := yaml.Marshal(r)
			if err != nil {
				return false, err
			}
			if i > 0 {
				fmt.Fprintln(out, "---")
			}
			if _, err := out.Write(b); err != nil {
				return false, err
			}
		}
	}
	return allFit, nil
}

// isReviewNotFound tells a 404 for the review resource itself (an older server) from a
// NotFound the review reports about its object.
func isReviewNotFound(err error) bool {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return false
	}
	d := s.Status().Details
	return d == nil || d.Group == "" && d.Kind == ""
}

// postReview creates the QuotaReview of obj in ns.
func postReview(ctx context.Context, c *clients, gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured, replicas *int32) (*fit.QuotaReview, error) {
	spec := map[string]any{"object": obj.Object}
	if replicas != nil {
		spec["replicas"] = int64(*replicas)
	}
	body := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": reviewGV.String(),
		"kind":       "QuotaReview",
		"metadata":   map[string]any{"namespace": ns},
		"spec":       spec,
	}}
	got, err := c.dyn.Resource(gvr).Namespace(ns).Create(ctx, body, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	var review fit.QuotaReview
	if err := convert(got.UnstructuredContent(), &review); err != nil {
		return nil, err
	}
	return &review, nil
}

// objectRef names an object as kubectl does: kind[.group]/name, lower case.
func objectRef(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	kind := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	name := obj.GetName()
	if name == "" {
		name = obj.GetGenerateName() + "<generated>"
	}
	return kind + "/" + name
}

// printReview writes one answer: a heading, the table, the warnings and the summary.
func printReview(out io.Writer, obj *unstructured.Unstructured, ns string, r *fit.QuotaReview) error {
	st := r.Status
	head := fmt.Sprintf("%s in namespace %s", objectRef(obj), ns)
	var facts []string
	if st.Operation != "" {
		facts = append(facts, strings.ToLower(st.Operation))
	}
	if st.Replicas > 0 {
		facts = append(facts, plural(int(st.Replicas), "replica", "replicas"))
	}
	if len(facts) > 0 {
		head += " (" + strings.Join(facts, ", ") + ")"
	}
	fmt.Fprintln(out, head+":")
	if len(st.Quotas) == 0 {
		fmt.Fprintln(out, "no quota matches it")
	} else {
		w := printers.GetNewTabWriter(out)
		fmt.Fprintln(w, "QUOTA\tMODE\tRESOURCE\tUSED\tREQUESTED\tPER-REPLICA\tHARD\tREMAINING\tFITS")
		for _, q := range st.Quotas {
			label := q.Name
			if q.Kind == "ClusterResourceQuota" {
				label = "clusterresourcequota/" + q.Name
			}
			if len(q.Resources) == 0 {
				fmt.Fprintf(w, "%s\t%s\t-\t-\t-\t-\t-\t-\t%s\n", label, q.Enforcement, yesNo(q.Fits))
			}
			for _, res := range q.Resources {
				per := "-"
				if res.PerReplica != nil {
					per = res.PerReplica.String()
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", label, q.Enforcement, res.Name,
					res.Used.String(), res.Requested.String(), per, res.Hard.String(), res.Remaining.String(), yesNo(res.Fits))
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	for _, warning := range st.Warnings {
		fmt.Fprintf(out, "Warning: %s\n", warning)
	}
	_, err := fmt.Fprintln(out, summary(obj, st))
	return err
}

// summary is the last line of an answer: "fits", or what does not fit and which quota
// refuses it.
func summary(obj *unstructured.Unstructured, st fit.QuotaReviewStatus) string {
	if st.Fits {
		return "fits"
	}
	var parts []string
	pod := obj.GetKind() == "Pod" && obj.GroupVersionKind().Group == ""
	if st.Replicas > 0 && st.ReplicasFit < st.Replicas && !(pod && st.Replicas == 1) {
		parts = append(parts, fmt.Sprintf("only %d of %d replicas fit", st.ReplicasFit, st.Replicas))
	} else {
		parts = append(parts, "does not fit")
	}
	explained := false
	for _, q := range st.Quotas {
		if q.Fits {
			continue
		}
		var over []string
		for _, res := range q.Resources {
			if !res.Fits {
				over = append(over, fmt.Sprintf("%s (requested %s, remaining %s)", res.Name, res.Requested.String(), res.Remaining.String()))
			}
		}
		name := "quota " + q.Name
		if q.Kind == "ClusterResourceQuota" {
			name = "cluster quota " + q.Name
		}
		verb := "refused by " + name
		if m := quota.Enforcement(q.Enforcement); m == quota.Warn || m == quota.Audit {
			verb = fmt.Sprintf("over %s (%s: admitted)", name, m)
		}
		if len(over) > 0 {
			verb += ": " + strings.Join(over, ", ")
		}
		parts = append(parts, verb)
		explained = true
	}
	if !explained && st.Reason != "" {
		parts = append(parts, "refused: "+st.Reason)
	}
	return strings.Join(parts, "; ")
}

// yesNo renders a boolean as a FITS cell.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// plural renders "1 replica", "2 replicas".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
