package table

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

var _ = flag.Bool("update", false, "rewrite testdata/*.golden")

// kubectlText renders a Table the way kubectl's human-readable printer does
// (k8s.io/cli-runtime printers: tabwriter min width 6, tab width 4, padding
// 3 (kubectl's tabwriter fork adds RememberWidths, which only matters across
// several tables); upper-cased headers; priority>0 columns only with wide;
// nil cells empty). It is a test aid, not kubectl itself.
func kubectlText(t *metav1.Table, wide bool) string {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 6, 4, 3, ' ', 0)
	var headers []string
	for _, c := range t.ColumnDefinitions {
		if wide || c.Priority == 0 {
			headers = append(headers, strings.ToUpper(c.Name))
		}
	}
	fmt.Fprintln(w, strings.Join(headers, "\t"))
	for _, row := range t.Rows {
		var cells []string
		for i, cell := range row.Cells {
			if !wide && t.ColumnDefinitions[i].Priority != 0 {
				continue
			}
			if cell == nil {
				cells = append(cells, "")
				continue
			}
			cells = append(cells, fmt.Sprint(cell))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	w.Flush()
	return buf.String()
}

// quotaExample is the quota of kubectl-protocol.md, created 64s before testNow.
func quotaExample() *corev1.ResourceQuota {
	hard := corev1.ResourceList{
		"requests.cpu":            resource.MustParse("1"),
		"requests.memory":         resource.MustParse("1Gi"),
		"requests.nvidia.com/gpu": resource.MustParse("4"),
		"limits.cpu":              resource.MustParse("2"),
		"limits.memory":           resource.MustParse("2Gi"),
	}
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute-resources", Namespace: "quota-demo", UID: "6f1c2a8e-0000-4000-8000-000000000001",
			ResourceVersion: "412", CreationTimestamp: ago(64 * time.Second)},
		Spec: corev1.ResourceQuotaSpec{Hard: hard},
		Status: corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{
			"requests.cpu": resource.MustParse("0"), "requests.memory": resource.MustParse("0"), "requests.nvidia.com/gpu": resource.MustParse("0"),
			"limits.cpu": resource.MustParse("0"), "limits.memory": resource.MustParse("0"),
		}},
	}
}

// TestResourceQuotaKubectlOutput pins what `kubectl get quota` prints for the
// example of kubectl-protocol.md against kube-apiserver v1.37: the document's cells, in
// the column order of 1.33 and later (NAME REQUEST LIMIT AGE; the document shows 1.32's,
// with AGE second).
func TestResourceQuotaKubectlOutput(t *testing.T) {
	const upstream = "" +
		"NAME                REQUEST                                                                   LIMIT                                   AGE\n" +
		"compute-resources   requests.cpu: 0/1, requests.memory: 0/1Gi, requests.nvidia.com/gpu: 0/4   limits.cpu: 0/2, limits.memory: 0/2Gi   64s\n"
	tbl, err := Convert([]runtime.Object{quotaExample()}, testNow, metav1.IncludeMetadata, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, wide := range []bool{false, true} {
		if got := kubectlText(tbl, wide); got != upstream {
			t.Errorf("wide=%v:\n got:\n%s\nwant:\n%s", wide, got, upstream)
		}
	}
}

func TestGolden(t *testing.T) {
	inUse := quotaExample()
	inUse.Name = "object-counts"
	inUse.CreationTimestamp = ago(50 * time.Hour)
	inUse.Status.Hard = corev1.ResourceList{"pods": resource.MustParse("10"), "count/deployments.apps": resource.MustParse("2"),
		"requests.storage": resource.MustParse("10Gi"), "limits.ephemeral-storage": resource.MustParse("4Gi")}
	inUse.Spec.Hard = inUse.Status.Hard
	inUse.Status.Used = corev1.ResourceList{"pods": resource.MustParse("3"), "requests.storage": resource.MustParse("1536Mi")}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-5869d7778c-b8zvr", Namespace: "quota-demo", CreationTimestamp: ago(5 * time.Minute)},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: containers("nginx")},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}},
			ContainerStatuses: []corev1.ContainerStatus{running("nginx", true)}},
	}

	tests := []struct {
		name string
		objs []runtime.Object
	}{
		{"resourcequota", []runtime.Object{quotaExample()}},
		{"resourcequota-list", []runtime.Object{quotaExample(), inUse}},
		{"pod", []runtime.Object{pod}},
		{"role-list", []runtime.Object{
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "team-a", CreationTimestamp: ago(5 * time.Minute)}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "quota-reader", Namespace: "team-a", CreationTimestamp: ago(49 * time.Hour)}}}},
		{"clusterrole", []runtime.Object{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view", CreationTimestamp: ago(3 * time.Hour)}}}},
		{"rolebinding-list", []runtime.Object{
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-admin", Namespace: "team-a", CreationTimestamp: ago(2 * time.Hour)},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}, {Kind: "Group", Name: "team-a"},
					{Kind: "ServiceAccount", Namespace: "team-a", Name: "deployer"}, {Kind: "ServiceAccount", Name: "ci"}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "readers", Namespace: "team-a", CreationTimestamp: ago(90 * time.Second)},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}}}},
		{"clusterrolebinding", []runtime.Object{&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin", CreationTimestamp: ago(400 * 24 * time.Hour)},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "Group", Name: "system:masters"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := Convert(tt.objs, testNow, metav1.IncludeMetadata, false)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := json.MarshalIndent(tbl, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".json.golden", append(doc, '\n'))
			text := "$ kubectl get\n" + kubectlText(tbl, false) + "\n$ kubectl get -o wide\n" + kubectlText(tbl, true)
			golden(t, tt.name+".kubectl.golden", []byte(text))
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	quotatest.GoldenFile(t, name, string(got))
}
