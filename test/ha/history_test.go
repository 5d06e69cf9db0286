package ha

import (
	"encoding/json"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/quota/clusterquota"
)

func podValue(name, cpu string) []byte {
	p := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	b, _ := json.Marshal(p)
	return b
}

// quotaValue is a quota on pods with hard and used.
func quotaValue(hard, used string) []byte {
	h := corev1.ResourceList{corev1.ResourcePods: resource.MustParse(hard)}
	q := corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Spec:       corev1.ResourceQuotaSpec{Hard: h},
		Status:     corev1.ResourceQuotaStatus{Hard: h, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(used)}}}
	b, _ := json.Marshal(q)
	return b
}

// clusterQuotaValue is a cluster quota on pods with hard and used.
func clusterQuotaValue(hard, used string) []byte {
	h := corev1.ResourceList{corev1.ResourcePods: resource.MustParse(hard)}
	c := clusterquota.ClusterResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "quota.openshift.io/v1", Kind: "ClusterResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec:       clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: h}},
		Status: clusterquota.ClusterResourceQuotaStatus{Total: corev1.ResourceQuotaStatus{Hard: h,
			Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(used)}}}}
	b, _ := json.Marshal(c)
	return b
}

// inWarnMode returns a stored quota or cluster quota with the Warn enforcement annotation.
func inWarnMode(v []byte) []byte {
	var m map[string]interface{}
	_ = json.Unmarshal(v, &m)
	m["metadata"].(map[string]interface{})["annotations"] = map[string]string{"quota.quotad.io/enforcement": "Warn"}
	b, _ := json.Marshal(m)
	return b
}

var (
	cKey = clusterQuotaPrefix + "c"
	qKey = Key(ResourceQuotas, "ns", "q")
	aKey = Key(Pods, "ns", "a")
	bKey = Key(Pods, "ns", "b")
)

// TestCheckerFindsViolations: the checker passes a consistent history and finds each kind of
// violation it exists for, in a log built by hand (revision 10 holds quota q on pods, hard 2,
// used 0).
func TestCheckerFindsViolations(t *testing.T) {
	put := func(rev int64, key string, create bool, v []byte) Event {
		return Event{Rev: rev, Key: key, Create: create, Value: v}
	}
	del := func(rev int64, key string) Event { return Event{Rev: rev, Key: key, Delete: true} }
	createA := Write{Resource: Pods, Namespace: "ns", Name: "a", Op: Create, Class: OK, RV: 11, UID: "uid-a"}
	consistent := []Event{put(11, aKey, true, podValue("a", "100m")), put(11, qKey, false, quotaValue("2", "1"))}
	seg := func(from, last int64, evs ...WatchEvent) *Segment {
		return &Segment{From: from, Last: last, Events: evs}
	}
	addedA := WatchEvent{Type: "ADDED", Namespace: "ns", Name: "a", RV: 11}
	tests := []struct {
		name     string
		events   []Event
		writes   []Write
		segments []*Segment
		want     []string // substrings of the violations, in order; none when empty
	}{
		{name: "consistent", events: consistent, writes: []Write{createA}, segments: []*Segment{seg(10, 11, addedA)}},
		{name: "usage not charged", events: []Event{put(11, aKey, true, podValue("a", "100m"))}, writes: []Write{createA},
			want: []string{"I1 at revision 11: quota ns/q"}},
		{name: "charged above hard", events: append(consistent,
			put(12, qKey, false, quotaValue("1", "1")),
			put(13, bKey, true, podValue("b", "100m")), put(13, qKey, false, quotaValue("1", "2"))),
			want: []string{"I2 at revision 13: quota ns/q pods used 1 -> 2 above hard 1"}},
		{name: "cluster quota charged above hard", events: []Event{
			put(11, cKey, true, clusterQuotaValue("1", "0")),
			put(12, cKey, false, clusterQuotaValue("1", "1")),
			put(13, cKey, false, clusterQuotaValue("1", "2"))},
			want: []string{"I2 at revision 13: cluster quota c pods used 1 -> 2 above hard 1"}},
		{name: "Warn quota charged above hard", events: append(consistent,
			put(12, qKey, false, inWarnMode(quotaValue("1", "1"))),
			put(13, bKey, true, podValue("b", "100m")), put(13, qKey, false, inWarnMode(quotaValue("1", "2"))))},
		{name: "Warn cluster quota charged above hard", events: []Event{
			put(11, cKey, true, inWarnMode(clusterQuotaValue("1", "0"))),
			put(12, cKey, false, inWarnMode(clusterQuotaValue("1", "1"))),
			put(13, cKey, false, inWarnMode(clusterQuotaValue("1", "2")))}},
		{name: "hard lowered below used", events: append(consistent, put(12, qKey, false, quotaValue("0", "1")))},
		{name: "acknowledged create lost", events: nil, writes: []Write{createA},
			want: []string{"acknowledged create of /registry/pods/ns/a (writer 0 via replica 0, ) at resourceVersion 11 is not in etcd's history"}},
		{name: "refused create committed", events: consistent,
			writes: []Write{{Resource: Pods, Namespace: "ns", Name: "a", Op: Create, Class: Forbidden}},
			want:   []string{"create of /registry/pods/ns/a refused (forbidden"}},
		{name: "delete nobody asked for", events: append(consistent, del(12, aKey), put(12, qKey, false, quotaValue("2", "0"))),
			writes: []Write{createA}, want: []string{"/registry/pods/ns/a deleted at 12 without"}},
		{name: "acknowledged delete not done", events: consistent,
			writes: []Write{createA, {Resource: Pods, Namespace: "ns", Name: "a", Op: Delete, Class: OK}},
			want:   []string{"acknowledged delete of /registry/pods/ns/a"}},
		{name: "watch missed an event", events: append(consistent, put(12, bKey, true, podValue("b", "100m")), put(12, qKey, false, quotaValue("2", "2"))),
			writes:   []Write{createA},
			segments: []*Segment{seg(10, 12, WatchEvent{Type: "ADDED", Namespace: "ns", Name: "b", RV: 12})},
			want:     []string{"watch pods (home replica 0) segment 0 from 10 to 12 (resumed at []): event 0 is ADDED ns/b@12"}},
		{name: "revision cut short by a SIGKILL of the serving replica", events: append(consistent,
			put(12, bKey, true, podValue("b", "100m")), put(12, Key(Pods, "ns", "c"), true, podValue("c", "100m")), put(12, qKey, false, quotaValue("3", "3"))),
			writes: []Write{createA},
			segments: []*Segment{{From: 10, Last: 12, Resumes: []int64{12}, Broken: []int64{12},
				Events: []WatchEvent{addedA, {Type: "ADDED", Namespace: "ns", Name: "b", RV: 12}}}}},
		{name: "revision cut short without a kill", events: append(consistent,
			put(12, bKey, true, podValue("b", "100m")), put(12, Key(Pods, "ns", "c"), true, podValue("c", "100m")), put(12, qKey, false, quotaValue("3", "3"))),
			writes: []Write{createA},
			segments: []*Segment{{From: 10, Last: 12, Resumes: []int64{12},
				Events: []WatchEvent{addedA, {Type: "ADDED", Namespace: "ns", Name: "b", RV: 12}}},
				{From: 12, Last: 12, Listed: []WatchEvent{{Type: "LISTED", Namespace: "ns", Name: "a", RV: 11},
					{Type: "LISTED", Namespace: "ns", Name: "b", RV: 12}, {Type: "LISTED", Namespace: "ns", Name: "c", RV: 12}}}},
			want: []string{"event 2 is  /@0 (replica 0), etcd has ADDED ns/c@12"}},
		{name: "revision cut short as the workload ended", events: append(consistent,
			put(12, bKey, true, podValue("b", "100m")), put(12, Key(Pods, "ns", "c"), true, podValue("c", "100m")), put(12, qKey, false, quotaValue("3", "3"))),
			writes: []Write{createA},
			segments: []*Segment{{From: 10, Last: 12,
				Events: []WatchEvent{addedA, {Type: "ADDED", Namespace: "ns", Name: "b", RV: 12}}}}},
		{name: "gap across 410 and relist", events: append(consistent, put(12, bKey, true, podValue("b", "100m")), put(12, qKey, false, quotaValue("2", "2"))),
			writes: []Write{createA},
			segments: []*Segment{{From: 10, Last: 10, Gone: true}, {From: 11, Last: 12,
				Listed: []WatchEvent{{Type: "LISTED", Namespace: "ns", Name: "a", RV: 11}},
				Events: []WatchEvent{{Type: "ADDED", Namespace: "ns", Name: "b", RV: 12}}}}},
		{name: "refusal of a stored state", events: consistent, writes: []Write{createA,
			{Resource: Pods, Namespace: "ns", Name: "x", Op: Create, Class: Forbidden,
				Err: `pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=2`}}},
		{name: "refusal of a state never stored", events: consistent, writes: []Write{createA,
			{Resource: Pods, Namespace: "ns", Name: "x", Op: Create, Class: Forbidden,
				Err: `pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`}},
			want: []string{"refusal of /registry/pods/ns/x (writer 0 via replica 0, ) reports q used pods=2 limited pods=2, a state it never had"}},
		{name: "refusal of a state inside a group commit that credits too", events: append(consistent,
			put(12, bKey, true, podValue("b", "100m")), del(12, aKey), put(12, qKey, false, quotaValue("2", "1"))),
			writes: []Write{createA, {Resource: Pods, Namespace: "ns", Name: "a", Op: Delete, Class: OK},
				{Resource: Pods, Namespace: "ns", Name: "x", Op: Create, Class: Forbidden,
					Err: `pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`}}},
		{name: "revision cut short before 410 and relist", events: append(consistent, put(12, bKey, true, podValue("b", "100m")),
			put(12, Key(Pods, "ns", "c"), true, podValue("c", "100m")), put(12, qKey, false, quotaValue("3", "3"))),
			writes: []Write{createA}, segments: []*Segment{{From: 11, Last: 12, Gone: true,
				Listed: []WatchEvent{{Type: "LISTED", Namespace: "ns", Name: "a", RV: 11}},
				Events: []WatchEvent{{Type: "ADDED", Namespace: "ns", Name: "b", RV: 12}}}}},
		{name: "revision cut short, resumed after it", events: append(consistent, put(12, bKey, true, podValue("b", "100m")),
			put(12, Key(Pods, "ns", "c"), true, podValue("c", "100m")), put(12, qKey, false, quotaValue("3", "3")), put(13, aKey, false, podValue("a", "100m"))),
			writes: []Write{createA}, segments: []*Segment{{From: 11, Last: 13, Resumes: []int64{12},
				Listed: []WatchEvent{{Type: "LISTED", Namespace: "ns", Name: "a", RV: 11}},
				Events: []WatchEvent{{Type: "ADDED", Namespace: "ns", Name: "b", RV: 12}, {Type: "MODIFIED", Namespace: "ns", Name: "a", RV: 13}}}},
			want: []string{"event 1 is MODIFIED ns/a@13 (replica 0), etcd has ADDED ns/c@12"}},
		{name: "no-op quota update acknowledged at its revision before the log", events: consistent,
			writes: []Write{createA, {Resource: ResourceQuotas, Namespace: "ns", Name: "q", Op: Update, Class: OK, RV: 10,
				Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}},
		{name: "quota update acknowledged at a revision etcd never had", events: consistent,
			writes: []Write{createA, {Resource: ResourceQuotas, Namespace: "ns", Name: "q", Op: Update, Class: OK, RV: 9,
				Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}},
			want: []string{"acknowledged update of /registry/resourcequotas/ns/q (writer 0 via replica 0, ) at resourceVersion 9 is not in etcd's history"}},
		{name: "list missing an object", events: consistent, writes: []Write{createA},
			segments: []*Segment{{From: 11, Last: 11}},
			want:     []string{"list of pods (home replica 0, segment 0) at 11 via replica 0: /registry/pods/ns/a at 0, etcd has it at 11"}},
		{name: "list with an object not stored", events: consistent, writes: []Write{createA},
			segments: []*Segment{{From: 10, Last: 10, Listed: []WatchEvent{{Type: "LISTED", Namespace: "ns", Name: "a", RV: 11}}}},
			want:     []string{"list of pods (home replica 0, segment 0) at 10 via replica 0: /registry/pods/ns/a at 11, not stored then"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &EtcdLog{namespaces: map[string]bool{"ns": true}, Start: 10,
				initial: map[string]*mvccpb.KeyValue{qKey: {Key: []byte(qKey), Value: quotaValue("2", "0"), ModRevision: 10}}}
			h := &History{Namespaces: []string{"ns"}}
			for _, w := range tt.writes {
				h.Record(w)
			}
			wl := h.NewWatch(Pods, 0)
			wl.segments = tt.segments
			r := &Report{}
			if err := checkQuotas(r, l, tt.events); err != nil {
				t.Fatal(err)
			}
			checkWrites(r, h, l.initial, tt.events)
			checkWatches(r, h, tt.events)
			checkLists(r, h, l, tt.events)
			checkRefusals(r, h)
			if len(r.Violations) != len(tt.want) {
				t.Fatalf("violations:\n%s\nwant %d: %q", strings.Join(r.Violations, "\n"), len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.Violations[i], w) {
					t.Errorf("violation %d = %q, want it to contain %q", i, r.Violations[i], w)
				}
			}
		})
	}
}

// TestWatchLogOrder: resourceVersions may repeat within a stream (one transaction commits
// several objects) but never go back, nor fall at or below where the stream started.
func TestWatchLogOrder(t *testing.T) {
	tests := []struct {
		name string
		rvs  []int64
		bad  int // index of the first refused event, -1 for none
	}{
		{"increasing", []int64{11, 12, 15}, -1},
		{"shared revision", []int64{11, 11, 12}, -1},
		{"going back", []int64{11, 12, 11}, 2},
		{"at the list's revision", []int64{10}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &WatchLog{Resource: Pods}
			w.Relist(10, 0, nil)
			bad := -1
			for i, rv := range tt.rvs {
				if err := w.Observe(WatchEvent{Type: "ADDED", Namespace: "ns", Name: "p", RV: rv}); err != nil && bad < 0 {
					bad = i
				}
			}
			if bad != tt.bad {
				t.Errorf("first refused event %d, want %d", bad, tt.bad)
			}
		})
	}
}
