package quotaenforce

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/quota"
)

// showLimited renders limited resources compactly.
func showLimited(l []quota.LimitedResource) string {
	if l == nil {
		return "(none)"
	}
	var parts []string
	for _, r := range l {
		parts = append(parts, fmt.Sprintf("%s/%s contains=%v scopes=%v", r.APIGroup, r.Resource, r.MatchContains, r.MatchScopes))
	}
	return strings.Join(parts, "; ")
}

func TestLoadConfigFileExamples(t *testing.T) {
	// Copies of the documentation's admission-config-*.yaml example files.
	tests := []struct{ file, want string }{
		{"testdata/admission-config-cluster-services.yaml", "/pods contains=[] scopes=[{PriorityClass In [cluster-services]}]"},
		{"testdata/admission-config-cross-namespace.yaml", "/pods contains=[] scopes=[{CrossNamespacePodAffinity Exists []}]"},
	}
	for _, tt := range tests {
		got, err := LoadConfigFile(tt.file)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if s := showLimited(got); s != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.file, s, tt.want)
		}
	}
	if got, err := LoadConfigFile(""); err != nil || got != nil {
		t.Errorf("no file: %v %v", got, err)
	}
}

// admissionV1 starts an apiserver.config.k8s.io/v1 AdmissionConfiguration; inlineV1 goes on
// with a ResourceQuota plugin configured inline by a v1 ResourceQuotaConfiguration, whose
// fields follow (indented four spaces).
const (
	admissionV1 = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
	inlineV1    = admissionV1 + "plugins:\n- name: ResourceQuota\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ResourceQuotaConfiguration\n"
)

func TestLoadConfigFile(t *testing.T) {
	const quotaConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: ResourceQuotaConfiguration
limitedResources:
- apiGroup: ""
  resource: persistentvolumeclaims
  matchContains: [".storageclass.storage.k8s.io/requests.storage"]
`
	tests := []struct {
		name  string
		files map[string]string // name → content; "admission.yaml" is loaded
		want  string
		err   string
	}{
		{
			name: "inline v1",
			files: map[string]string{"admission.yaml": admissionV1 + `plugins:
- name: LimitRanger
  configuration: {anything: goes}
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchContains: [pods]
      matchScopes:
      - {scopeName: PriorityClass, operator: In, values: [cluster-services, high]}
`},
			want: "/pods contains=[pods] scopes=[{PriorityClass In [cluster-services high]}]",
		},
		{
			name: "seed form with CrossNamespaceAffinity and no operator decodes (it never matches)",
			files: map[string]string{"admission.yaml": admissionV1 + `plugins:
- name: "ResourceQuota"
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - scopeName: CrossNamespaceAffinity
`},
			want: "/pods contains=[] scopes=[{CrossNamespaceAffinity  []}]",
		},
		{
			name: "relative path",
			files: map[string]string{
				"admission.yaml": "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  path: quota.yaml\n",
				"quota.yaml":     quotaConfig,
			},
			want: "/persistentvolumeclaims contains=[.storageclass.storage.k8s.io/requests.storage] scopes=[]",
		},
		{
			name: "legacy v1beta1 Configuration as JSON",
			files: map[string]string{
				"admission.yaml": "apiVersion: apiserver.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  path: quota.json\n",
				"quota.json":     `{"apiVersion":"resourcequota.admission.k8s.io/v1beta1","kind":"Configuration","limitedResources":[{"resource":"pods","matchContains":["cpu"]}]}`,
			},
			want: "/pods contains=[cpu] scopes=[]",
		},
		{
			name: "legacy v1alpha1 Configuration inline",
			files: map[string]string{"admission.yaml": admissionV1 + `plugins:
- name: ResourceQuota
  configuration:
    apiVersion: resourcequota.admission.k8s.io/v1alpha1
    kind: Configuration
    limitedResources: [{apiGroup: apps, resource: deployments}]
`},
			want: "apps/deployments contains=[] scopes=[]",
		},
		{
			name:  "plugin not configured",
			files: map[string]string{"admission.yaml": admissionV1 + "plugins:\n- name: LimitRanger\n  path: lr.yaml\n"},
			want:  "(none)",
		},
		{
			name:  "plugin listed without configuration",
			files: map[string]string{"admission.yaml": admissionV1 + "plugins:\n- name: ResourceQuota\n"},
			want:  "(none)",
		},
		{
			name:  "missing file",
			files: map[string]string{},
			err:   `unable to read admission control configuration from "$DIR/admission.yaml" [open $DIR/admission.yaml: no such file or directory]`,
		},
		{
			name:  "unknown field in the admission configuration",
			files: map[string]string{"admission.yaml": admissionV1 + "plugin: []\n"},
			err:   `admission configuration file "$DIR/admission.yaml": error unmarshaling JSON: while decoding JSON: json: unknown field "plugin"`,
		},
		{
			name:  "wrong kind",
			files: map[string]string{"admission.yaml": "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"},
			err:   `admission configuration file "$DIR/admission.yaml": unsupported kind "EncryptionConfiguration" (want AdmissionConfiguration)`,
		},
		{
			name:  "wrong apiVersion",
			files: map[string]string{"admission.yaml": "apiVersion: v1\nkind: AdmissionConfiguration\n"},
			err:   `admission configuration file "$DIR/admission.yaml": unsupported apiVersion "v1" (want apiserver.config.k8s.io/v1)`,
		},
		{
			name: "unknown field in the plugin configuration",
			files: map[string]string{"admission.yaml": inlineV1 + `    limitedResources:
    - resource: pods
      matchScope: []
`},
			err: `ResourceQuota plugin configuration in "$DIR/admission.yaml": error unmarshaling JSON: while decoding JSON: json: unknown field "matchScope"`,
		},
		{
			name: "duplicate field",
			files: map[string]string{
				"admission.yaml": admissionV1 + "plugins:\n- name: ResourceQuota\n  path: quota.yaml\n",
				"quota.yaml":     quotaConfig + "limitedResources: []\n",
			},
			err: `ResourceQuota plugin configuration in "$DIR/quota.yaml": error converting YAML to JSON: yaml: unmarshal errors:
  line 7: key "limitedResources" already set in map`,
		},
		{
			name: "resource is required",
			files: map[string]string{"admission.yaml": inlineV1 + `    limitedResources:
    - resource: pods
    - matchContains: [x]
    - apiGroup: apps
`},
			err: `ResourceQuota plugin configuration in "$DIR/admission.yaml": [limitedResources[1].resource: Required value, limitedResources[2].resource: Required value]`,
		},
		{
			name: "wrong plugin configuration kind",
			files: map[string]string{"admission.yaml": admissionV1 + `plugins:
- name: ResourceQuota
  configuration: {apiVersion: resourcequota.admission.k8s.io/v1beta1, kind: ResourceQuotaConfiguration}
`},
			err: `ResourceQuota plugin configuration in "$DIR/admission.yaml": unsupported apiVersion "resourcequota.admission.k8s.io/v1beta1" and kind "ResourceQuotaConfiguration" (want apiserver.config.k8s.io/v1 ResourceQuotaConfiguration)`,
		},
		{
			name:  "missing plugin file",
			files: map[string]string{"admission.yaml": admissionV1 + "plugins:\n- name: ResourceQuota\n  path: nope.yaml\n"},
			err:   `admission configuration file "$DIR/admission.yaml": unable to read ResourceQuota plugin configuration from "$DIR/nope.yaml" [open $DIR/nope.yaml: no such file or directory]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadConfigFile(filepath.Join(dir, "admission.yaml"))
			if tt.err != "" {
				if err == nil {
					t.Fatalf("no error, got %s", showLimited(got))
				}
				if msg := strings.ReplaceAll(err.Error(), dir, "$DIR"); msg != tt.err {
					t.Fatalf("error:\n got %s\nwant %s", msg, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := showLimited(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}
