package quotaenforce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/quota"
)

// PluginName is the plugin's name in an AdmissionConfiguration and in the admission flags.
const PluginName = "ResourceQuota"

// admissionConfiguration is apiserver.config.k8s.io AdmissionConfiguration.
type admissionConfiguration struct {
	APIVersion string                         `json:"apiVersion"`
	Kind       string                         `json:"kind"`
	Plugins    []admissionPluginConfiguration `json:"plugins"`
}

// admissionPluginConfiguration is one entry of AdmissionConfiguration.plugins.
type admissionPluginConfiguration struct {
	Name          string          `json:"name"`
	Path          string          `json:"path,omitempty"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
}

// configuration is the ResourceQuota plugin configuration (ResourceQuotaConfiguration in
// apiserver.config.k8s.io/v1, Configuration in resourcequota.admission.k8s.io).
type configuration struct {
	APIVersion       string            `json:"apiVersion"`
	Kind             string            `json:"kind"`
	LimitedResources []limitedResource `json:"limitedResources"`
}

// limitedResource is one configured limited resource.
type limitedResource struct {
	APIGroup      string                                     `json:"apiGroup,omitempty"`
	Resource      string                                     `json:"resource"`
	MatchContains []string                                   `json:"matchContains,omitempty"`
	MatchScopes   []corev1.ScopedResourceSelectorRequirement `json:"matchScopes,omitempty"`
}

// LoadConfigFile reads the AdmissionConfiguration file at path (the
// --admission-control-config-file flag) and returns the ResourceQuota plugin's limited
// resources: nil when path is empty or the file does not configure the plugin. The
// plugin entry's configuration is either inline or in the file its path names (relative
// paths are relative to the configuration file's directory). Decoding is strict: an
// unknown or duplicate field is an error naming the file.
func LoadConfigFile(path string) ([]quota.LimitedResource, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [%v]", path, err)
	}
	return ParseAdmissionConfiguration(data, path)
}

// ParseAdmissionConfiguration parses an AdmissionConfiguration document read from file
// (used in errors, and to resolve a relative plugin path) and returns the ResourceQuota
// plugin's limited resources.
func ParseAdmissionConfiguration(data []byte, file string) ([]quota.LimitedResource, error) {
	// 1. The AdmissionConfiguration itself.
	var ac admissionConfiguration
	if err := yaml.UnmarshalStrict(data, &ac); err != nil {
		return nil, fmt.Errorf("admission configuration file %q: %v", file, err)
	}
	switch ac.APIVersion {
	case "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", "apiserver.k8s.io/v1alpha1":
	default:
		return nil, fmt.Errorf("admission configuration file %q: unsupported apiVersion %q (want apiserver.config.k8s.io/v1)", file, ac.APIVersion)
	}
	if ac.Kind != "AdmissionConfiguration" {
		return nil, fmt.Errorf("admission configuration file %q: unsupported kind %q (want AdmissionConfiguration)", file, ac.Kind)
	}

	// 2. The first entry for the plugin, inline or from its path.
	for _, p := range ac.Plugins {
		if p.Name != PluginName {
			continue
		}
		if p.Path != "" {
			pluginFile := p.Path
			if !filepath.IsAbs(pluginFile) {
				pluginFile = filepath.Join(filepath.Dir(file), pluginFile)
			}
			pdata, err := os.ReadFile(pluginFile)
			if err != nil {
				return nil, fmt.Errorf("admission configuration file %q: unable to read %s plugin configuration from %q [%v]", file, PluginName, pluginFile, err)
			}
			return ParseConfiguration(pdata, pluginFile)
		}
		if len(p.Configuration) == 0 || bytes.Equal(bytes.TrimSpace(p.Configuration), []byte("null")) {
			return nil, nil
		}
		return ParseConfiguration(p.Configuration, file)
	}
	return nil, nil
}

// ParseConfiguration parses a ResourceQuota plugin configuration document (YAML or JSON)
// read from file: apiserver.config.k8s.io/v1 ResourceQuotaConfiguration, or the legacy
// resourcequota.admission.k8s.io/v1alpha1 and v1beta1 Configuration. Decoding is strict,
// and every limitedResources entry must name a resource.
func ParseConfiguration(data []byte, file string) ([]quota.LimitedResource, error) {
	var c configuration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s plugin configuration in %q: %v", PluginName, file, err)
	}
	switch {
	case c.APIVersion == "apiserver.config.k8s.io/v1" && c.Kind == "ResourceQuotaConfiguration":
	case (c.APIVersion == "resourcequota.admission.k8s.io/v1alpha1" || c.APIVersion == "resourcequota.admission.k8s.io/v1beta1") && c.Kind == "Configuration":
	default:
		return nil, fmt.Errorf("%s plugin configuration in %q: unsupported apiVersion %q and kind %q (want apiserver.config.k8s.io/v1 ResourceQuotaConfiguration)", PluginName, file, c.APIVersion, c.Kind)
	}
	var errs field.ErrorList
	out := make([]quota.LimitedResource, 0, len(c.LimitedResources))
	for i, l := range c.LimitedResources {
		if l.Resource == "" {
			errs = append(errs, field.Required(field.NewPath("limitedResources").Index(i).Child("resource"), ""))
		}
		out = append(out, quota.LimitedResource{
			APIGroup:      l.APIGroup,
			Resource:      l.Resource,
			MatchContains: l.MatchContains,
			MatchScopes:   l.MatchScopes,
		})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s plugin configuration in %q: %v", PluginName, file, errs.ToAggregate())
	}
	return out, nil
}
