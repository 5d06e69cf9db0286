package e2e

import (
	"regexp"
	"strings"
	"testing"
)

const stsManifest = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: held
spec:
  serviceName: nginx
  replicas: 3
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
`

// TestStatefulSetHeldAtStorageQuota: a StatefulSet with volumeClaimTemplates applied with
// kubectl stops at its storage quota, and kubectl describe statefulset says why in
// upstream's event texts; get controllerrevisions prints upstream's columns.
func TestStatefulSetHeldAtStorageQuota(t *testing.T) {
	c := start(t)
	c.must("create", "namespace", "held")
	c.must("create", "quota", "storage", "--hard=requests.storage=2Gi", "--namespace=held")
	if r := c.kubectlIn(stsManifest, "apply", "-f", "-"); r.code != 0 || r.stdout != "statefulset.apps/web created\n" {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := c.waitFor("failed to create PVC data-web-2", "describe", "statefulset", "web", "--namespace=held")
	forbidden := `persistentvolumeclaims "data-web-2" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=2Gi, limited: requests.storage=2Gi`
	for _, want := range []string{
		"create Claim data-web-2 for Pod web-2 in StatefulSet web failed error: " + forbidden,
		"create Pod web-2 in StatefulSet web failed error: failed to create PVC data-web-2: " + forbidden,
		"FailedCreate",
		"create Claim data-web-0 Pod web-0 in StatefulSet web success",
		"Pods Status:        0 Running / 2 Waiting / 0 Succeeded / 0 Failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe statefulset lacks %q:\n%s", want, out)
		}
	}
	q := c.must("describe", "quota", "storage", "--namespace=held")
	if !regexp.MustCompile(`requests\.storage\s+2Gi\s+2Gi`).MatchString(q) {
		t.Errorf("describe quota:\n%s", q)
	}
	revs := c.must("get", "controllerrevisions", "--namespace=held")
	lines := strings.Split(strings.TrimSpace(revs), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME CONTROLLER REVISION AGE" || !strings.Contains(lines[1], "statefulset.apps/web") {
		t.Errorf("get controllerrevisions:\n%s", revs)
	}
}
