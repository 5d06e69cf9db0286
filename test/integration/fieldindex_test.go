package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// indexedLists is the count of quotad_field_index_lists_total for pods with outcome.
func indexedLists(t *testing.T, s *servertest.Server, outcome string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^quotad_field_index_lists_total\{outcome="` + outcome + `",resource="pods"\} (\d+)$`)
	m := re.FindStringSubmatch(scrape(t, s))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestNodeIndexedLists: lists of one node's pods, read through the pods' index, give
// exactly what a list of every pod filtered by the client gives, after every kind of
// change (creates bound and unbound, bindings, label changes, deletions, and writes of
// other kinds that move the store's revision past the pods' last change), cluster-wide and
// in one namespace, with other selectors, paged with continue tokens, as tables, and at
// resourceVersions "0" and not older than one just written; so do cluster-wide lists with
// a label selector alone (read at once when most pods match). Every such list after the
// first is served by the index (the metric), so the index reaches each list's revision by
// asking for a progress notification rather than waiting for events; an exact
// resourceVersion reads every pod.
func TestNodeIndexedLists(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	// About 1,600 requests: a guard against a hang, not a bound on their time (ctxT's
	// minute is the budget of a test of tens; on two cores running every package, each
	// request here took 20 to 40 ms).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nss := []string{"nodeidx-a", "nodeidx-b"}
	for _, ns := range nss {
		mkNamespace(t, s, ns)
	}
	nodes := []string{"n0", "n1", "n2", "n3"}
	r := rand.New(rand.NewPCG(9, 9))
	live := map[string]bool{} // "ns/name"
	next := 0
	create := func(node string) {
		ns := nss[r.IntN(len(nss))]
		name := fmt.Sprintf("p%d", next)
		next++
		pod := podWith(name, nil, nil)
		pod.Labels = map[string]string{"tier": []string{"web", "db"}[r.IntN(2)]}
		pod.Spec.NodeName = node
		if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		live[ns+"/"+name] = true
	}
	for range 12 {
		create(nodes[r.IntN(len(nodes))])
	}
	// The first list loads the index (and reads every pod); wait until one is served by it.
	for indexedLists(t, s, "indexed") == 0 {
		if _, err := s.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n0"}); err != nil {
			t.Fatal(err)
		}
	}
	scanned, indexed := indexedLists(t, s, "scanned"), indexedLists(t, s, "indexed")
	// A watcher of pods with bookmarks: the index's progress requests reach it too, as at
	// most one BOOKMARK a second.
	watchStart := time.Now()
	pw, err := s.Client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.Itoa(0), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	bookmarks := make(chan int)
	go func() {
		n := 0
		for ev := range pw.ResultChan() {
			if ev.Type == watch.Bookmark {
				n++
			}
		}
		bookmarks <- n
	}()

	// want is what a list of every pod of ns, without selectors and filtered here, gives
	// (node nil: any node), with the number of pods of ns and the list's revision.
	want := func(ns string, node *string, label string) ([]string, int, int64) {
		l, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := labels.Parse(label)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range l.Items {
			if (node == nil || p.Spec.NodeName == *node) && sel.Matches(labels.Set(p.Labels)) {
				out = append(out, p.Namespace+"/"+p.Name)
			}
		}
		rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
		return out, len(l.Items), rv
	}
	names := func(items []corev1.Pod) []string {
		var out []string
		for _, p := range items {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return out
	}
	lists, scans := 0, 0
	check := func(step int, written string) {
		// Cluster-wide lists with a label selector alone: served by the index unless
		// most pods match it (then read at once).
		for _, label := range []string{"tier=web", "tier!=web", "tier in (db)", "!tier", "tier", "tier=none"} {
			w, all, wrv := want("", nil, label)
			for _, rv := range []string{"", "0", written} {
				l, err := s.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: label, ResourceVersion: rv})
				if err != nil {
					t.Fatal(err)
				}
				if len(w) > all/2 {
					scans++
				} else {
					lists++
				}
				if got := names(l.Items); !slices.Equal(got, w) {
					t.Fatalf("step %d: list label=%q rv=%q:\n got %q\nwant %q", step, label, rv, got, w)
				}
				if lrv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64); lrv < wrv {
					t.Fatalf("step %d: list at %d, older than the unfiltered list's %d", step, lrv, wrv)
				}
			}
		}
		for _, ns := range []string{"", nss[0]} {
			for _, node := range append(nodes, "") {
				for _, label := range []string{"", "tier=web"} {
					w, _, wrv := want(ns, &node, label)
					for _, rv := range []string{"", "0", written} {
						opts := metav1.ListOptions{FieldSelector: "spec.nodeName=" + node, LabelSelector: label, ResourceVersion: rv}
						l, err := s.Client.CoreV1().Pods(ns).List(ctx, opts)
						if err != nil {
							t.Fatal(err)
						}
						lists++
						got := names(l.Items)
						if !slices.Equal(got, w) {
							t.Fatalf("step %d: list ns=%q node=%q label=%q rv=%q:\n got %q\nwant %q", step, ns, node, label, rv, got, w)
						}
						if lrv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64); lrv < wrv {
							t.Fatalf("step %d: list at %d, older than the unfiltered list's %d", step, lrv, wrv)
						}
					}
				}
			}
		}
	}
	// Every kind of change, a few times over (the seed gives each at least once: checked
	// below); each step checks the whole matrix, about a hundred lists. Thirty steps (3,000
	// requests) outlasted a minute's context when every package ran at once on two cores,
	// each list taking about 20 ms there; none of them waited for the index more than 20 ms.
	ops := map[string]int{}
	for step := range 15 {
		var written string
		switch op := r.IntN(6); op {
		case 0, 1:
			create(nodes[r.IntN(len(nodes))])
			ops["create on a node"]++
		case 2:
			create("")
			ops["create unbound"]++
		case 3:
			// Delete one pod, or bind an unbound one (pods/binding).
			var keys []string
			for k := range live {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			k := keys[r.IntN(len(keys))]
			ns, name, _ := strings.Cut(k, "/")
			p, err := s.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Spec.NodeName == "" {
				b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Kind: "Node", Name: nodes[r.IntN(len(nodes))]}}
				if err := s.Client.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				ops["bind"]++
			} else {
				if err := s.Client.CoreV1().Pods(ns).Delete(ctx, name, *metav1.NewDeleteOptions(0)); err != nil {
					t.Fatal(err)
				}
				delete(live, k)
				ops["delete"]++
			}
		case 5:
			// A pod's labels change: another tier, or none.
			var keys []string
			for k := range live {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			ns, name, _ := strings.Cut(keys[r.IntN(len(keys))], "/")
			patch := `{"metadata":{"labels":{"tier":null}}}`
			if r.IntN(3) > 0 {
				patch = fmt.Sprintf(`{"metadata":{"labels":{"tier":%q}}}`, []string{"web", "db"}[r.IntN(2)])
			}
			if _, err := s.Client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			ops["relabel"]++
		case 4:
			// Another kind: the store's revision moves past the pods' last change.
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}
			got, err := s.Client.CoreV1().ConfigMaps(nss[1]).Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			written = got.ResourceVersion
			ops["other kind"]++
		}
		check(step, written)
	}
	if len(ops) != 6 {
		t.Fatalf("the steps made %v: every kind of change is wanted (another seed?)", ops)
	}

	// Paged: two at a time with continue tokens, the same pods.
	n1, n2 := "n1", "n2"
	w, _, _ := want("", &n1, "")
	var got []string
	opts := metav1.ListOptions{FieldSelector: "spec.nodeName=n1", Limit: 2}
	for {
		l, err := s.Client.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if opts.Continue == "" {
			lists++ // continued pages read the rest of every pod at the first's revision
		}
		got = append(got, names(l.Items)...)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if !slices.Equal(got, w) || len(w) < 3 {
		t.Fatalf("paged list of n1: %q, want %q (at least 3)", got, w)
	}
	// As a table (kubectl get): one row per pod.
	table := podTable(t, s, "", "", "spec.nodeName=n2")
	w, _, _ = want("", &n2, "")
	if rows := len(table.Rows); rows != len(w) || rows == 0 {
		t.Fatalf("table of n2: %d rows, want %d", rows, len(w))
	}
	lists++

	pw.Stop()
	if n, most := <-bookmarks, int(time.Since(watchStart)/time.Second)+1; n > most {
		t.Errorf("%d bookmarks in %v, want at most one a second (%d)", n, time.Since(watchStart), most)
	}
	if got := indexedLists(t, s, "scanned"); got != scanned+scans {
		t.Errorf("%d lists read every pod after the index was loaded, want %d (label selectors matching most pods)", got-scanned, scans)
	}
	if got := indexedLists(t, s, "indexed"); got != indexed+lists {
		t.Errorf("%d lists served by the index, want %d", got-indexed, lists)
	}
	// A resourceVersion the store has not reached: the list waits for it as every list
	// does, and answers upstream's 504.
	n0 := "n0"
	_, _, rv := want("", &n0, "")
	err = s.Client.CoreV1().RESTClient().Get().Resource("pods").Param("fieldSelector", "spec.nodeName=n0").
		Param("resourceVersion", strconv.FormatInt(rv+1000, 10)).MaxRetries(0).Do(ctx).Error()
	if wantErr := fmt.Sprintf("Timeout: Too large resource version: %d, current: ", rv+1000); !apierrors.IsTimeout(err) || !strings.HasPrefix(err.Error(), wantErr) {
		t.Errorf("list at a revision to come: %v, want a 504 %s<revision>", err, wantErr)
	}
	scanned += scans + 1
	// An exact resourceVersion is read from storage as before.
	if _, err := s.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n0", ResourceVersion: strconv.FormatInt(rv, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}); err != nil {
		t.Fatal(err)
	}
	if got := indexedLists(t, s, "scanned"); got != scanned+1 {
		t.Errorf("scanned lists %d after an exact one, want %d", got, scanned+1)
	}
}

// TestNodeIndexedListsAcrossReplicas: two replicas, each on its own member of one etcd
// cluster. A pod bound through one replica is in the next list of its node's pods through
// the other, served by that replica's index: the list's revision is read from the cluster
// (a linearizable read), and the index waits for its own member's watch to reach it.
func TestNodeIndexedListsAcrossReplicas(t *testing.T) {
	t.Parallel()
	ports := storagetest.FreePorts(t, 4)
	a := servertest.Start(t, func(c *server.Config) { c.ClusterInit = true }, etcdPorts(ports[0], ports[1]))
	b := servertest.Start(t, joinWith(a, a.JoinToken), etcdPorts(ports[2], ports[3]))
	defer func() {
		b.Stop()
		a.Stop()
	}()
	ctx := ctxT(t)
	const ns = "nodeidx-replicas"
	mkNamespace(t, a, ns)
	for indexedLists(t, b, "indexed") == 0 {
		if _, err := b.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n0"}); err != nil {
			t.Fatal(err)
		}
	}
	scanned := indexedLists(t, b, "scanned")
	var want []string
	for i := range 20 {
		pod := podWith(fmt.Sprintf("p%02d", i), nil, nil)
		pod.Spec.NodeName = "n0"
		if i%3 == 0 {
			pod.Spec.NodeName = "n1" // not in the list
		}
		// Created through a: b's index sees it only through b's member's watch.
		created, err := a.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.NodeName == "n0" {
			want = append(want, pod.Name)
		}
		l, err := b.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n0"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range l.Items {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("after creating %s at %s through the other replica: %q, want %q", created.Name, created.ResourceVersion, got, want)
		}
	}
	if got := indexedLists(t, b, "scanned"); got != scanned {
		t.Errorf("%d lists read every pod, want none", got-scanned)
	}
}
