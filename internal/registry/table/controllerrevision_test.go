package table

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
