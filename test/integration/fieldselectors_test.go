package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestFieldSelectorLabelsPerKind: a field selector's labels are converted per kind as
// kube-apiserver's are, through real client-go lists and watches: a kind refuses what
// its conversion does not list, with its own text (metadata.namespace too, for
// PodCertificateRequests, CertificateSigningRequests, Nodes and Namespaces), a kind
// without a conversion of its own takes metadata.name and metadata.namespace only, and
// the labels a conversion renames select by their new name (a pod's spec.host).
func TestFieldSelectorLabelsPerKind(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "fsel"
	mkNamespace(t, s, ns)
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	const defaultText = `" is not a known field selector: only "metadata.name", "metadata.namespace"`
	for _, tc := range []struct {
		res       schema.GroupVersionResource
		ns, sel   string
		want      string
		clusterNS bool
	}{
		{res: gvr("certificates.k8s.io", "v1", "podcertificaterequests"), ns: ns, sel: "metadata.namespace=" + ns, want: "field label not supported: metadata.namespace"},
		{res: gvr("certificates.k8s.io", "v1", "podcertificaterequests"), sel: "spec.podUID=u", want: "field label not supported: spec.podUID"},
		{res: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), sel: "metadata.namespace=", want: "field label not supported: metadata.namespace"},
		{res: gvr("", "v1", "nodes"), sel: "metadata.namespace=x", want: "field label not supported: metadata.namespace"},
		{res: gvr("", "v1", "namespaces"), sel: "metadata.namespace=x", want: "field label not supported: metadata.namespace"},
		{res: gvr("apps", "v1", "replicasets"), ns: ns, sel: "status.replicas=1", want: `"status.replicas` + defaultText},
		{res: gvr("", "v1", "configmaps"), ns: ns, sel: "metadata.name=a,data.x=y", want: `"data.x` + defaultText},
		{res: gvr("batch", "v1", "jobs"), ns: ns, sel: "spec.suspend=true", want: `field label "spec.suspend" not supported for Job`},
		{res: gvr("batch", "v1", "cronjobs"), ns: ns, sel: "status.successful=1", want: `"status.successful` + defaultText},
		{res: gvr("resource.k8s.io", "v1", "resourceslices"), sel: "metadata.namespace=x", want: "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: metadata.namespace"},
		{res: gvr("events.k8s.io", "v1", "events"), ns: ns, sel: "source=kubelet", want: "field label not supported: source"},
		{res: gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"), sel: "spec.group=x", want: `"spec.group` + defaultText},
		// Accepted.
		{res: gvr("certificates.k8s.io", "v1", "podcertificaterequests"), ns: ns, sel: "spec.nodeName=n1,metadata.name=a"},
		{res: gvr("", "v1", "configmaps"), ns: ns, sel: "metadata.namespace=" + ns},
		{res: gvr("", "v1", "nodes"), sel: "spec.unschedulable=false"},
		{res: gvr("", "v1", "replicationcontrollers"), ns: ns, sel: "status.replicas=0"},
		{res: gvr("batch", "v1", "jobs"), ns: ns, sel: "status.successful=0"},
		{res: gvr("", "v1", "pods"), ns: ns, sel: "status.podIPs=10.0.0.1"},
	} {
		c := s.Dynamic.Resource(tc.res).Namespace(tc.ns)
		_, err := c.List(ctx, metav1.ListOptions{FieldSelector: tc.sel})
		w, werr := c.Watch(ctx, metav1.ListOptions{FieldSelector: tc.sel})
		if werr == nil {
			w.Stop()
		}
		for verb, err := range map[string]error{"list": err, "watch": werr} {
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s %s %s: %v", verb, tc.res.Resource, tc.sel, err)
			case tc.want != "" && (!apierrors.IsBadRequest(err) || err.Error() != tc.want):
				t.Errorf("%s %s %s: %v, want 400 %s", verb, tc.res.Resource, tc.sel, err, tc.want)
			}
		}
	}

	// spec.host is the old name of spec.nodeName.
	pods := s.Client.CoreV1().Pods(ns)
	for _, p := range []struct{ name, node string }{{"on-n1", "n1"}, {"on-n2", "n2"}} {
		pod := podWith(p.name, nil, nil)
		pod.Spec.NodeName = p.node
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.host=n1"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "on-n1" {
		t.Errorf("spec.host=n1: %v %v", names(l), err)
	}
	// A selector on a label no pod carries matches as an empty value.
	if l, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "status.podIPs="}); err != nil || len(l.Items) != 2 {
		t.Errorf("status.podIPs=: %v %v", names(l), err)
	}
}

func names(l *corev1.PodList) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out
}
