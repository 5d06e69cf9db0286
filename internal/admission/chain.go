package admission

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Plugin names, spelled as kube-apiserver spells them in --enable-admission-plugins.
const (
	NamespaceLifecycle       = "NamespaceLifecycle"
	LimitRanger              = "LimitRanger"
	Priority                 = "Priority"
	ResourceQuota            = "ResourceQuota"
	ServiceAccount           = "ServiceAccount"
	DefaultTolerationSeconds = "DefaultTolerationSeconds"
	RuntimeClass             = "RuntimeClass"
	// NodeRestriction limits nodes' writes to what concerns them.
	NodeRestriction = "NodeRestriction"
	// DefaultIngressClass names the plugin that gives a new Ingress the default class.
	DefaultIngressClass = "DefaultIngressClass"
	// MutatingAdmissionPolicy names the plugin that applies MutatingAdmissionPolicies.
	MutatingAdmissionPolicy = "MutatingAdmissionPolicy"
	// ValidatingAdmissionPolicy names the plugin that enforces ValidatingAdmissionPolicies.
	ValidatingAdmissionPolicy = "ValidatingAdmissionPolicy"
)

// pluginOrder is kube-apiserver's AllOrderedPlugins restricted to the plugins quotad has.
// Every one of them is on by default, as upstream.
var pluginOrder = []string{NamespaceLifecycle, LimitRanger, ServiceAccount, NodeRestriction, Priority, DefaultTolerationSeconds, RuntimeClass, DefaultIngressClass,
	MutatingAdmissionPolicy, ValidatingAdmissionPolicy, ResourceQuota}

// PluginNames returns the plugins quotad knows, in the order the chain runs them.
func PluginNames() []string {
	return append([]string(nil), pluginOrder...)
}

// Chain runs the enabled plugins in kube-apiserver's order: Admit runs every enabled
// Mutator, Validate every enabled Validator, each only for the operations its Handles
// accepts, stopping at the first error. The ResourceQuota plugin is not run by the chain:
// the registry calls it inside its storage transaction when QuotaEnabled reports true.
type Chain struct {
	enabled    []string
	mutators   []Handler // each also a Mutator
	validators []Handler // each also a Validator
	quota      bool
	observe    PluginObserver
}

// PluginObserver is told, for kube-apiserver's admission controller latency metric, how
// long one plugin took on one request: its name, whether it ran as a Validator (else as a
// Mutator), the operation, and whether it refused the request.
type PluginObserver func(name string, validate bool, op Operation, elapsed time.Duration, rejected bool)

// Observe sets the observer of every plugin run; call it before the chain serves.
func (c *Chain) Observe(o PluginObserver) { c.observe = o }

// NewChain builds the chain with kube-apiserver's flag semantics: the enabled set is every
// default-on plugin plus enable, minus disable (a name in both lists is an error, as is an
// unknown name). plugins are the constructed plugins, matched to names by Handler.Name;
// every enabled plugin except ResourceQuota must be among them. The error for bad flags
// carries upstream's texts (e.g. `enable-admission-plugins plugin "Foo" is unknown`).
func NewChain(enable, disable []string, plugins ...Handler) (*Chain, error) {
	// 1. Validate the flags exactly as kube-apiserver's AdmissionOptions.Validate does.
	known := sets.New(pluginOrder...)
	var errs []error
	for _, name := range enable {
		if !known.Has(name) {
			errs = append(errs, fmt.Errorf("enable-admission-plugins plugin %q is unknown", name))
		}
	}
	for _, name := range disable {
		if !known.Has(name) {
			errs = append(errs, fmt.Errorf("disable-admission-plugins plugin %q is unknown", name))
		}
	}
	if both := sets.List(sets.New(enable...).Intersection(sets.New(disable...))); len(both) > 0 {
		errs = append(errs, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both))
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}

	// 2. Index the constructed plugins by name.
	byName := map[string]Handler{}
	for _, p := range plugins {
		if !known.Has(p.Name()) {
			return nil, fmt.Errorf("admission plugin %q is not one quotad knows", p.Name())
		}
		byName[p.Name()] = p
	}

	// 3. Enabled = recommended order minus disabled (all quotad plugins are default-on, so
	// enable only matters for documentation and error checking).
	off := sets.New(disable...).Difference(sets.New(enable...))
	c := &Chain{}
	for _, name := range pluginOrder {
		if off.Has(name) {
			continue
		}
		c.enabled = append(c.enabled, name)
		if name == ResourceQuota {
			c.quota = true
			continue
		}
		p, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("admission plugin %q is enabled but was not constructed", name)
		}
		if _, ok := p.(Mutator); ok {
			c.mutators = append(c.mutators, p)
		}
		if _, ok := p.(Validator); ok {
			c.validators = append(c.validators, p)
		}
	}
	return c, nil
}

// Enabled returns the names of the enabled plugins in the order they run.
func (c *Chain) Enabled() []string {
	return append([]string(nil), c.enabled...)
}

// QuotaEnabled reports whether the ResourceQuota plugin is enabled.
func (c *Chain) QuotaEnabled() bool {
	return c.quota
}

// Admit runs the mutating phase: every enabled Mutator that handles a.Operation, in order.
// It returns the first error.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	for _, h := range c.mutators {
		if !h.Handles(a.Operation) {
			continue
		}
		var start time.Time
		if c.observe != nil {
			start = time.Now()
		}
		err := h.(Mutator).Admit(ctx, a)
		if c.observe != nil {
			c.observe(h.Name(), false, a.Operation, time.Since(start), err != nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Validate runs the validating phase: every enabled Validator that handles a.Operation, in
// order. It returns the first error.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, h := range c.validators {
		if !h.Handles(a.Operation) {
			continue
		}
		var start time.Time
		if c.observe != nil {
			start = time.Now()
		}
		err := h.(Validator).Validate(ctx, a)
		if c.observe != nil {
			c.observe(h.Name(), true, a.Operation, time.Since(start), err != nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// NewForbidden wraps a plugin's refusal as upstream's admission.NewForbidden does:
// `<resource> "<name>" is forbidden: <err>`, where name is the request's name, else the
// object's name, else its generateName, else "Unknown". A Forbidden err is returned as is.
func NewForbidden(a *Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), requestName(a), err)
}

// requestName is upstream's extractResourceName without the resource.
func requestName(a *Attributes) string {
	if a.Name != "" {
		return a.Name
	}
	if a.Object == nil {
		return "Unknown"
	}
	accessor, err := meta.Accessor(a.Object)
	if err != nil {
		// Not every object has ObjectMeta; upstream then returns a name with a slash.
		return "Unknown/errorGettingName"
	}
	if n := accessor.GetName(); n != "" {
		return n
	}
	if n := accessor.GetGenerateName(); n != "" {
		return n
	}
	return "Unknown"
}
