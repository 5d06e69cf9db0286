package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
)

// newExplainCommand returns `kubectl quota explain`.
func newExplainCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "explain (TYPE/NAME | TYPE NAME)",
		Short: "Explain which quotas match an object and why",
		Long: `Explain, for each quota of an object's namespace (ResourceQuotas, then the cluster quotas
selecting the namespace when the server serves them and you may read them), whether it
matches the object and why: whether it limits anything objects of that kind are charged
for, and each scope and scope selector requirement, matched or not, with the reason. For a
matching quota, the resources it charges the object and the quota's usage of them.

Pods, persistentvolumeclaims, services and resource claims have their own usage; every
other namespaced kind counts only for count/<resource>[.<group>] quotas. Only pods and,
for VolumeAttributesClass, persistentvolumeclaims can match scoped quotas.`,
		Example: examples(`
			# Which quotas is pod web-0 charged to, and why
			kubectl quota explain pod/web-0

			# The same for a persistent volume claim in namespace team-a
			kubectl quota explain pvc data -n team-a`),
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			resArg, name, err := splitTypeName(args)
			if err != nil {
				return err
			}
			cfg, ns, _, err := e.config()
			if err != nil {
				return err
			}
			return runExplain(cmd.Context(), cfg, ns, resArg, name, e.streams.Out)
		},
	}
}

// splitTypeName accepts TYPE/NAME or TYPE NAME.
func splitTypeName(args []string) (string, string, error) {
	if len(args) == 1 {
		t, n, ok := strings.Cut(args[0], "/")
		if !ok || t == "" || n == "" {
			return "", "", fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", args[0])
		}
		return t, n, nil
	}
	if strings.Contains(args[0], "/") {
		return "", "", fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
	}
	return args[0], args[1], nil
}

// typedGVRs are the resources whose evaluators take typed objects, at the version the
// evaluators were written for.
var typedGVRs = map[schema.GroupResource]schema.GroupVersionResource{
	{Resource: "pods"}:                                        corev1.SchemeGroupVersion.WithResource("pods"),
	{Resource: "services"}:                                    corev1.SchemeGroupVersion.WithResource("services"),
	{Resource: "persistentvolumeclaims"}:                      corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
	{Group: resourcev1.GroupName, Resource: "resourceclaims"}: resourcev1.SchemeGroupVersion.WithResource("resourceclaims"),
}

// runExplain explains the quotas of ns against the object resArg/name.
func runExplain(ctx context.Context, cfg *rest.Config, ns, resArg, name string, out io.Writer) error {
	c, err := newClients(cfg)
	if err != nil {
		return err
	}
	// 1. Resolve the resource as kubectl does (short names, kinds, resource.group).
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(c.disc), c.disc, func(string) {})
	gvr, err := resolve(mapper, resArg)
	if err != nil {
		return err
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return fmt.Errorf("%s are cluster-scoped: quotas charge only namespaced objects", gvr.Resource)
	}
	gr := gvr.GroupResource()
	ref := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		ref += "." + gvk.Group
	}
	ref += "/" + name

	// 2. Read the object, typed where its evaluator needs it; kinds quota never charges
	// need no object.
	ev := evaluator.NewRegistry().Get(gr)
	if ev == nil {
		_, err := fmt.Fprintf(out, "%s are never charged to quotas\n", gr.String())
		return err
	}
	if typed, ok := typedGVRs[gr]; ok {
		gvr = typed
	}
	u, err := c.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var obj runtime.Object = u
	switch gr {
	case schema.GroupResource{Resource: "pods"}:
		obj = &corev1.Pod{}
	case schema.GroupResource{Resource: "services"}:
		obj = &corev1.Service{}
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		obj = &corev1.PersistentVolumeClaim{}
	case schema.GroupResource{Group: resourcev1.GroupName, Resource: "resourceclaims"}:
		obj = &resourcev1.ResourceClaim{}
	}
	if obj != u {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return fmt.Errorf("decoding %s: %w", ref, err)
		}
	}

	// 3. The object's usage, from the evaluator admission uses.
	usage, err := ev.Usage(obj)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s in namespace %s\n", ref, ns)
	fmt.Fprintf(out, "  usage: %s\n", listText(usage))
	if pod, ok := obj.(*corev1.Pod); ok && !evaluator.QuotaEligible(pod) {
		fmt.Fprintf(out, "  the pod has ended or is being deleted: only count/pods is charged\n")
	}

	// 4. Every quota of the namespace, then the cluster quotas selecting it.
	qs, err := c.resourceQuotas(ctx, ns)
	if err != nil {
		return err
	}
	cluster, err := c.appliedClusterQuotas(ctx, ns)
	if err != nil {
		return err
	}
	sortQuotas(qs)
	sortQuotas(cluster)
	qs = append(qs, cluster...)
	if len(qs) == 0 {
		_, err := fmt.Fprintf(out, "\nno quota in namespace %s\n", ns)
		return err
	}
	for _, q := range qs {
		fmt.Fprintln(out)
		if err := explainQuota(out, q, gr, ev, obj, usage); err != nil {
			return err
		}
	}
	return nil
}

// resolve maps TYPE ("pod", "po", "pods", "deployments.apps", "deploy.v1.apps") to a
// resource.
func resolve(mapper meta.RESTMapper, arg string) (schema.GroupVersionResource, error) {
	full, gr := schema.ParseResourceArg(strings.ToLower(arg))
	if full != nil {
		if gvr, err := mapper.ResourceFor(*full); err == nil {
			return gvr, nil
		}
	}
	gvr, err := mapper.ResourceFor(gr.WithVersion(""))
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, fmt.Errorf("the server doesn't have a resource type %q", arg)
		}
		return schema.GroupVersionResource{}, err
	}
	return gvr, nil
}

// explainQuota writes one quota's block: whether it matches and why, and what it charges.
func explainQuota(out io.Writer, q shownQuota, gr schema.GroupResource, ev quota.Evaluator, obj runtime.Object, usage corev1.ResourceList) error {
	rq := &q.quota
	matches, err := quota.Matches(rq, ev, obj)
	verdict := "does not match"
	switch {
	case err != nil:
		verdict = "cannot be matched: " + err.Error()
	case matches:
		verdict = "matches"
	}
	head := q.ref() + ": " + verdict
	mode := quota.EnforcementOf(rq.Annotations)
	if w := quota.WarnAtOf(rq.Annotations); mode != quota.Enforce || !w.Empty() {
		extra := "mode " + string(mode)
		if !w.Empty() {
			extra += ", warn-at " + w.String()
		}
		head += " (" + extra + ")"
	}
	fmt.Fprintln(out, head)

	// Resources: does the quota limit anything objects of this kind are charged for?
	hardNames := quota.ResourceNames(rq.Status.Hard)
	tracked := ev.MatchingResources(hardNames)
	if len(tracked) == 0 {
		fmt.Fprintf(out, "  resources: no — it limits %s, none of which %s are charged\n", namesText(hardNames), gr.String())
	} else {
		fmt.Fprintf(out, "  resources: yes — it limits %s, which %s are charged\n", namesText(tracked), gr.String())
	}

	// Scopes, one line per requirement.
	selectors := quota.ScopeSelectors(rq)
	if len(selectors) == 0 {
		fmt.Fprintln(out, "  scopes: none")
	}
	for i, sel := range selectors {
		what := "scope " + string(sel.ScopeName)
		if i >= len(rq.Spec.Scopes) {
			what = "scope selector " + selectorText(sel)
		}
		fmt.Fprintf(out, "  %s: %s\n", what, scopeReason(ev, sel, obj, gr))
	}

	if !matches {
		return nil
	}
	// What the object is charged: its usage of the quota's names.
	charged := quota.Mask(usage, hardNames)
	if len(charged) == 0 {
		_, err := fmt.Fprintln(out, "  charged: nothing")
		return err
	}
	fmt.Fprintln(out, "  charged:")
	w := printers.GetNewTabWriter(&indent{w: out, prefix: "    "})
	fmt.Fprintln(w, "RESOURCE\tCHARGED\tUSED\tHARD")
	for _, n := range quota.ResourceNames(charged) {
		used := "0"
		if u, ok := rq.Status.Used[n]; ok {
			used = u.String()
		}
		hard, c := rq.Status.Hard[n], charged[n]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", n, c.String(), used, hard.String())
	}
	return w.Flush()
}

// selectorText renders a scope selector requirement: "PriorityClass In [high low]".
func selectorText(sel corev1.ScopedResourceSelectorRequirement) string {
	s := string(sel.ScopeName) + " " + string(sel.Operator)
	if len(sel.Values) > 0 {
		s += " [" + strings.Join(sel.Values, " ") + "]"
	}
	return s
}

// scopeReason decides one requirement with the evaluator's own matching and says why.
func scopeReason(ev quota.Evaluator, sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object, gr schema.GroupResource) string {
	if _, ok := ev.(quota.ScopeMatcher); !ok {
		return fmt.Sprintf("no — scopes match only pods (and persistentvolumeclaims for VolumeAttributesClass), never %s", gr.String())
	}
	matched, err := quota.MatchingScopes(ev, obj, []corev1.ScopedResourceSelectorRequirement{sel})
	if err != nil {
		return "error — " + err.Error()
	}
	answer := "no"
	if len(matched) == 1 {
		answer = "yes"
	}
	if why := scopeFacts(sel, obj); why != "" {
		return answer + " — " + why
	}
	return answer
}

// scopeFacts describes what of the object the requirement looks at.
func scopeFacts(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		switch sel.ScopeName {
		case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating:
			if evaluator.IsTerminating(o) {
				return fmt.Sprintf("the pod has spec.activeDeadlineSeconds %d", *o.Spec.ActiveDeadlineSeconds)
			}
			return "the pod has no spec.activeDeadlineSeconds"
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort:
			qos := quota.PodQOS(o)
			if qos == corev1.PodQOSBestEffort {
				return "the pod has no cpu or memory requests or limits (QoS class BestEffort)"
			}
			var names []string
			for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := evaluator.PodRequests(o)[n]; ok && q.Sign() > 0 {
					names = append(names, "requests."+string(n))
				}
			}
			for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := evaluator.PodLimits(o)[n]; ok && q.Sign() > 0 {
					names = append(names, "limits."+string(n))
				}
			}
			if len(names) == 0 {
				return fmt.Sprintf("the pod's QoS class is %s", qos)
			}
			return fmt.Sprintf("the pod has %s (QoS class %s)", strings.Join(names, ", "), qos)
		case corev1.ResourceQuotaScopePriorityClass:
			if o.Spec.PriorityClassName == "" {
				return "the pod has no priorityClassName"
			}
			return fmt.Sprintf("the pod's priorityClassName is %s", o.Spec.PriorityClassName)
		case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if evaluator.UsesCrossNamespacePodAffinity(o) {
				return "a pod (anti-)affinity term of the pod names namespaces or has a namespaceSelector"
			}
			return "no pod (anti-)affinity term of the pod names namespaces or has a namespaceSelector"
		case corev1.ResourceQuotaScopeVolumeAttributesClass:
			return "VolumeAttributesClass applies only to persistentvolumeclaims"
		}
	case *corev1.PersistentVolumeClaim:
		if sel.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
			return fmt.Sprintf("%s applies only to pods", sel.ScopeName)
		}
		names := evaluator.VolumeAttributesClassNames(o)
		if len(names) == 0 {
			return "the claim has no volume attributes class"
		}
		return "the claim's volume attributes class is " + strings.Join(names, ", ")
	}
	return ""
}

// indent prefixes every line written through it.
type indent struct {
	w      io.Writer
	prefix string
	mid    bool
}

func (i *indent) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if !i.mid {
			b.WriteString(i.prefix)
			i.mid = true
		}
		b.WriteRune(c)
		if c == '\n' {
			i.mid = false
		}
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
