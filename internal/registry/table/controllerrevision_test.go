package table

import (
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestControllerRevisionCells(t *testing.T) {
	yes := true
	owned := func(apiVersion, kind string) *appsv1.ControllerRevision {
		cr := &appsv1.ControllerRevision{ObjectMeta: objMeta("web-7b5f8c6d9", 5*time.Minute), Revision: 2}
		cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "web", UID: "u", Controller: &yes}}
		return cr
	}
	checkCells(t, owned("apps/v1", "StatefulSet"), []interface{}{"web-7b5f8c6d9", "statefulset.apps/web", int64(2), "5m"})
	checkCells(t, owned("v1", "Pod"), []interface{}{"web-7b5f8c6d9", "pod/web", int64(2), "5m"})
	checkCells(t, &appsv1.ControllerRevision{ObjectMeta: objMeta("orphan", time.Hour), Revision: 1}, []interface{}{"orphan", "<none>", int64(1), "60m"})
}

// TestControllerRevisionGolden pins the Table and what kubectl prints for the revisions of
// a StatefulSet and a DaemonSet.
func TestControllerRevisionGolden(t *testing.T) {
	yes := true
	rev := func(name, kind, owner string, revision int64, age time.Duration) runtime.Object {
		return &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(age),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, UID: "u", Controller: &yes}}},
			Revision: revision,
		}
	}
	tbl, err := Convert([]runtime.Object{
		rev("web-6c6b4c9d7f", "StatefulSet", "web", 1, 3*time.Hour),
		rev("web-7d4b9c8f5", "StatefulSet", "web", 2, 5*time.Minute),
		rev("agent-5d8f6b7c9", "DaemonSet", "agent", 1, 26*time.Hour),
	}, testNow, metav1.IncludeMetadata, false)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.MarshalIndent(tbl, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "controllerrevision-list.json.golden", append(doc, '\n'))
	golden(t, "controllerrevision-list.kubectl.golden", []byte("$ kubectl get\n"+kubectlText(tbl, false)))
}
