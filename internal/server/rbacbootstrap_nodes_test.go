package server

import (
	"os"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestBootstrapPolicyMatchesUpstream: every ClusterRole and ClusterRoleBinding of nodes and
// the control plane's components that quotad bootstraps equals upstream's v1.37.2 bootstrap
// policy testdata (copied into testdata/bootstrappolicy) rule for rule and subject for
// subject, labels and annotations included; and each of upstream's system:controller:*
// roles and bindings is among them.
func TestBootstrapPolicyMatchesUpstream(t *testing.T) {
	var roles, controllerRoles struct{ Items []rbacv1.ClusterRole }
	var bindings, controllerBindings struct{ Items []rbacv1.ClusterRoleBinding }
	for file, into := range map[string]any{"cluster-roles.yaml": &roles, "controller-roles.yaml": &controllerRoles,
		"cluster-role-bindings.yaml": &bindings, "controller-role-bindings.yaml": &controllerBindings} {
		b, err := os.ReadFile("testdata/bootstrappolicy/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	upRoles := map[string]rbacv1.ClusterRole{}
	for _, r := range append(roles.Items, controllerRoles.Items...) {
		r.TypeMeta = rbacv1.ClusterRole{}.TypeMeta
		upRoles[r.Name] = r
	}
	upBindings := map[string]rbacv1.ClusterRoleBinding{}
	for _, b := range append(bindings.Items, controllerBindings.Items...) {
		b.TypeMeta = rbacv1.ClusterRoleBinding{}.TypeMeta
		upBindings[b.Name] = b
	}
	ours := map[string]bool{}
	for _, r := range nodeClusterRoles() {
		ours[r.Name] = true
		up, ok := upRoles[r.Name]
		if !ok {
			t.Errorf("ClusterRole %s is not upstream's", r.Name)
			continue
		}
		if !reflect.DeepEqual(r.ObjectMeta, up.ObjectMeta) {
			t.Errorf("ClusterRole %s metadata:\n got %+v\nwant %+v", r.Name, r.ObjectMeta, up.ObjectMeta)
		}
		if len(r.Rules) != len(up.Rules) {
			t.Errorf("ClusterRole %s has %d rules, upstream %d", r.Name, len(r.Rules), len(up.Rules))
			continue
		}
		for i := range r.Rules {
			if !reflect.DeepEqual(r.Rules[i], up.Rules[i]) {
				t.Errorf("ClusterRole %s rule %d:\n got %+v\nwant %+v", r.Name, i, r.Rules[i], up.Rules[i])
			}
		}
	}
	for _, b := range nodeClusterRoleBindings() {
		up, ok := upBindings[b.Name]
		if !ok {
			t.Errorf("ClusterRoleBinding %s is not upstream's", b.Name)
			continue
		}
		if !reflect.DeepEqual(b, up) {
			t.Errorf("ClusterRoleBinding %s:\n got %+v\nwant %+v", b.Name, b, up)
		}
	}
	for _, name := range []string{"system:node", "system:node-bootstrapper", "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
		"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:node-proxier", "system:kube-scheduler",
		"system:volume-scheduler", "system:kube-controller-manager"} {
		if !ours[name] {
			t.Errorf("ClusterRole %s is missing", name)
		}
	}
	for _, r := range controllerRoles.Items {
		if !ours[r.Name] {
			t.Errorf("controller ClusterRole %s is missing", r.Name)
		}
	}
	have := map[string]bool{}
	for _, b := range DefaultClusterRoleBindings() {
		have[b.Name] = true
	}
	for _, b := range controllerBindings.Items {
		if !have[b.Name] {
			t.Errorf("controller ClusterRoleBinding %s is missing", b.Name)
		}
	}
}
