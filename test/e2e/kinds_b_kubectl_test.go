package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// csrManifest is a CertificateSigningRequest for CN user of the kube-apiserver-client
// signer; it also returns the request's private key as PEM.
func csrManifest(t *testing.T, name, user string) (string, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: user, Organization: []string{"team-" + user}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: ` + name + `
spec:
  request: ` + req + `
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages:
  - client auth
`, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestCertificateApproveKubectl gets a user a client certificate as on a real cluster:
// kubectl creates the CSR, `kubectl certificate approve` approves it (PUT /approval), the
// signer issues it, and kubectl authenticates with it; `kubectl certificate deny` denies.
func TestCertificateApproveKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	manifest, key := csrManifest(t, "frank", "frank")
	c.expectOut(manifest, "certificatesigningrequest.certificates.k8s.io/frank created\n", "create", "-f", "-")
	out := normalizeTable(c.must("get", "csr", "frank"))
	if !strings.HasPrefix(out, "NAME  AGE  SIGNERNAME  REQUESTOR  REQUESTEDDURATION  CONDITION\nfrank  <age>  kubernetes.io/kube-apiserver-client  ") || !strings.HasSuffix(out, "  <age>  Pending\n") {
		t.Errorf("kubectl get csr:\n%s", out)
	}
	c.expectOut("", "certificatesigningrequest.certificates.k8s.io/frank approved\n", "certificate", "approve", "frank")
	c.waitKubectl(func(s string) bool { return strings.HasSuffix(s, "Approved,Issued\n") }, "get", "csr", "frank")

	// The issued certificate authenticates as frank.
	cert, err := base64.StdEncoding.DecodeString(c.must("get", "csr", "frank", "-o", "jsonpath={.status.certificate}"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "frank.crt"), filepath.Join(dir, "frank.key")
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	c.must("config", "set-credentials", "frank", "--client-certificate="+certFile, "--client-key="+keyFile)
	who := c.must("auth", "whoami", "--user=frank", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	if !strings.HasPrefix(who, "frank [") || !strings.Contains(who, "team-frank") {
		t.Errorf("kubectl auth whoami as frank: %q", who)
	}

	// Deny.
	manifest, _ = csrManifest(t, "mallory", "mallory")
	c.expectOut(manifest, "certificatesigningrequest.certificates.k8s.io/mallory created\n", "create", "-f", "-")
	c.expectOut("", "certificatesigningrequest.certificates.k8s.io/mallory denied\n", "certificate", "deny", "mallory")
	if out := c.must("get", "csr", "mallory", "--no-headers"); !strings.HasSuffix(out, "  Denied\n") {
		t.Errorf("denied csr: %q", out)
	}
}

const kindsBManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: kinds-b
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: csi.example.com
spec:
  attachRequired: false
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  name: node-1
spec:
  drivers:
  - name: csi.example.com
    nodeID: node-1
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata:
  name: va-1
spec:
  attacher: csi.example.com
  nodeName: node-1
  source:
    persistentVolumeName: pv-1
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata:
  name: cap-1
  namespace: kinds-b
storageClassName: fast
capacity: 10Gi
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: gold
driverName: csi.example.com
parameters:
  iops: "3000"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: checks
webhooks:
- name: check.example.com
  clientConfig:
    url: https://hooks.example.com/check
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutations
webhooks:
- name: mutate.example.com
  clientConfig:
    service:
      namespace: kinds-b
      name: hooks
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas
spec:
  policyName: max-replicas
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: add-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"mutated": "true"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: add-label
spec:
  policyName: add-label
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: tenants
spec:
  type: Limited
  limited:
    limitResponse:
      type: Queue
      queuing: {}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: tenants
spec:
  priorityLevelConfiguration:
    name: tenants
  rules:
  - subjects:
    - kind: Group
      group:
        name: tenants
    resourceRules:
    - verbs: ["*"]
      apiGroups: ["*"]
      resources: ["*"]
      namespaces: ["*"]
`

// TestKindsBApplyKubectl applies one object of each storage, admissionregistration and
// flowcontrol kind with kubectl and reads them back as kubectl get prints them.
func TestKindsBApplyKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	csr, _ := csrManifest(t, "kinds-b", "kinds-b")
	manifest := kindsBManifest + "---\n" + csr + `---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.example.com
spec:
  group: metrics.example.com
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service:
    namespace: kinds-b
    name: metrics
`
	c.expectOut(manifest, `namespace/kinds-b created
csidriver.storage.k8s.io/csi.example.com created
csinode.storage.k8s.io/node-1 created
volumeattachment.storage.k8s.io/va-1 created
csistoragecapacity.storage.k8s.io/cap-1 created
volumeattributesclass.storage.k8s.io/gold created
validatingwebhookconfiguration.admissionregistration.k8s.io/checks created
mutatingwebhookconfiguration.admissionregistration.k8s.io/mutations created
validatingadmissionpolicy.admissionregistration.k8s.io/max-replicas created
validatingadmissionpolicybinding.admissionregistration.k8s.io/max-replicas created
mutatingadmissionpolicy.admissionregistration.k8s.io/add-label created
mutatingadmissionpolicybinding.admissionregistration.k8s.io/add-label created
prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/tenants created
flowschema.flowcontrol.apiserver.k8s.io/tenants created
certificatesigningrequest.certificates.k8s.io/kinds-b created
apiservice.apiregistration.k8s.io/v1beta1.metrics.example.com created
`, "apply", "-f", "-")
	// A second apply succeeds. (Kinds whose atomic lists the server defaults — webhook and
	// policy rules' scope — are "configured", as kubectl's three-way patch reports them
	// against kube-apiserver too.)
	r := c.kubectlIn(manifest, "apply", "-f", "-")
	if r.code != 0 || strings.Count(r.stdout, " unchanged\n")+strings.Count(r.stdout, " configured\n") != 16 || strings.Count(r.stdout, " unchanged\n") < 13 {
		t.Errorf("second apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct{ args, want string }{
		{"get csidrivers", "NAME  ATTACHREQUIRED  PODINFOONMOUNT  STORAGECAPACITY  TOKENREQUESTS  REQUIRESREPUBLISH  MODES  AGE\ncsi.example.com  false  false  false  <unset>  false  Persistent  <age>\n"},
		{"get csinodes", "NAME  DRIVERS  AGE\nnode-1  1  <age>\n"},
		{"get volumeattachments", "NAME  ATTACHER  PV  NODE  ATTACHED  AGE\nva-1  csi.example.com  pv-1  node-1  false  <age>\n"},
		// kube-apiserver's csistoragecapacities storage prints the default columns.
		{"get csistoragecapacities -n kinds-b", "NAME  CREATED AT\ncap-1  <time>\n"},
		{"get vac", "NAME  DRIVERNAME  AGE\ngold  csi.example.com  <age>\n"},
		{"get apiservices v1.storage.k8s.io v1. v1beta1.metrics.example.com", "NAME  SERVICE  AVAILABLE  AGE\nv1.storage.k8s.io  Local  True  <age>\nv1.  Local  True  <age>\nv1beta1.metrics.example.com  kinds-b/metrics  Unknown  <age>\n"},
		{"get validatingwebhookconfigurations", "NAME  WEBHOOKS  AGE\nchecks  1  <age>\n"},
		{"get validatingadmissionpolicies", "NAME  VALIDATIONS  PARAMKIND  AGE\nmax-replicas  1  <unset>  <age>\n"},
		{"get validatingadmissionpolicybindings", "NAME  POLICYNAME  PARAMREF  AGE\nmax-replicas  max-replicas  <unset>  <age>\n"},
		{"get prioritylevelconfigurations", "NAME  TYPE  NOMINALCONCURRENCYSHARES  QUEUES  HANDSIZE  QUEUELENGTHLIMIT  AGE\n" +
			"catch-all  Limited  5  <none>  <none>  <none>  <age>\nexempt  Exempt  <none>  <none>  <none>  <none>  <age>\n" +
			"global-default  Limited  20  128  6  50  <age>\nleader-election  Limited  10  16  4  50  <age>\nnode-high  Limited  40  64  6  50  <age>\n" +
			"system  Limited  30  64  6  50  <age>\ntenants  Limited  30  64  8  50  <age>\nworkload-high  Limited  40  128  6  50  <age>\n" +
			"workload-low  Limited  100  128  6  50  <age>\n"},
	} {
		if got := timestampRE.ReplaceAllString(normalizeTable(c.must(strings.Fields(tc.args)...)), "<time>"); got != tc.want {
			t.Errorf("kubectl %s:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	// The flow schemas, mandatory ones included, once the controller marked them.
	c.waitKubectl(func(s string) bool {
		return normalizeTable(s) == "NAME  PRIORITYLEVEL  MATCHINGPRECEDENCE  DISTINGUISHERMETHOD  AGE  MISSINGPL\n"+
			"exempt  exempt  1  <none>  <age>  False\nprobes  exempt  2  <none>  <age>  False\n"+
			"system-leader-election  leader-election  100  ByUser  <age>  False\nsystem-node-high  node-high  400  ByUser  <age>  False\n"+
			"system-nodes  system  500  ByUser  <age>  False\nkube-controller-manager  workload-high  800  ByNamespace  <age>  False\n"+
			"kube-scheduler  workload-high  800  ByNamespace  <age>  False\nkube-system-service-accounts  workload-high  900  ByNamespace  <age>  False\n"+
			"tenants  tenants  1000  <none>  <age>  False\nservice-accounts  workload-low  9000  ByUser  <age>  False\n"+
			"global-default  global-default  9900  ByUser  <age>  False\ncatch-all  catch-all  10000  ByUser  <age>  False\n"
	}, "get", "flowschemas", "--sort-by=.spec.matchingPrecedence")
	// Server-side apply of the same manifest (renamed) works for every kind.
	ssa := strings.NewReplacer("name: csi.example.com\n", "name: ssa.example.com\n", "name: node-1\n", "name: node-2\n", "name: va-1\n", "name: va-2\n",
		"name: cap-1\n", "name: cap-2\n", "name: gold\n", "name: silver\n", "name: checks\n", "name: checks-2\n", "name: mutations\n", "name: mutations-2\n",
		"name: max-replicas\n", "name: max-replicas-2\n", "name: add-label\n", "name: add-label-2\n", "name: tenants\n", "name: tenants-2\n").Replace(kindsBManifest)
	r = c.kubectlIn(ssa, "apply", "--server-side", "-f", "-")
	if r.code != 0 || strings.Count(r.stdout, " serverside-applied\n") != 14 {
		t.Errorf("server-side apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// OpenAPI: kubectl explain knows the kinds.
	for _, tc := range []struct{ args, want string }{
		{"explain csr.spec.signerName", "FIELD: signerName <string>"},
		{"explain flowschemas.spec.matchingPrecedence", "FIELD: matchingPrecedence <integer>"},
		{"explain validatingadmissionpolicies.spec.failurePolicy", "FIELD: failurePolicy <string>"},
		{"explain csidrivers.spec.fsGroupPolicy", "FIELD: fsGroupPolicy <string>"},
		{"explain apiservices.spec.groupPriorityMinimum", "FIELD: groupPriorityMinimum <integer>"},
	} {
		if out := c.must(strings.Fields(tc.args)...); !strings.Contains(out, tc.want) {
			t.Errorf("kubectl %s:\n%s", tc.args, out)
		}
	}
	// api-extensions category.
	out := c.must("get", "api-extensions", "-o", "name")
	for _, want := range []string{"validatingwebhookconfiguration.admissionregistration.k8s.io/checks", "mutatingadmissionpolicy.admissionregistration.k8s.io/add-label"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("kubectl get api-extensions lacks %s:\n%s", want, out)
		}
	}
}
