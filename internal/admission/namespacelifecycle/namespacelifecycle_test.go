package namespacelifecycle

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

// fakeReader serves namespaces from a map; err, when set, is returned by every call.
type fakeReader struct {
	namespaces map[string]*corev1.Namespace
	err        error
}

func (f *fakeReader) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if f.err != nil {
		return nil, f.err
	}
	if gvr != namespaceGVR {
		return nil, errors.New("unexpected resource " + gvr.String())
	}
	ns, ok := f.namespaces[name]
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return ns, nil
}

func (f *fakeReader) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, errors.New("List not expected")
}

func ns(name string, phase corev1.NamespacePhase) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
}

var (
	podGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	podGVK  = corev1.SchemeGroupVersion.WithKind("Pod")
	nsGVK   = corev1.SchemeGroupVersion.WithKind("Namespace")
	nodeGVR = corev1.SchemeGroupVersion.WithResource("nodes")
	nodeGVK = corev1.SchemeGroupVersion.WithKind("Node")
	lsarGVR = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews"}
)

func podAttrs(op admission.Operation, namespace, name string) *admission.Attributes {
	a := &admission.Attributes{Operation: op, Resource: podGVR, Kind: podGVK, Namespace: namespace, Name: name}
	if op != admission.Delete {
		a.Object = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	}
	return a
}

func TestAdmit(t *testing.T) {
	reader := &fakeReader{namespaces: map[string]*corev1.Namespace{
		"active":  ns("active", corev1.NamespaceActive),
		"dying":   ns("dying", corev1.NamespaceTerminating),
		"default": ns("default", corev1.NamespaceActive),
	}}
	generated := podAttrs(admission.Create, "dying", "")
	generated.Object.(*corev1.Pod).GenerateName = "web-"

	tests := []struct {
		name     string
		attrs    *admission.Attributes
		wantCode int32 // 0: admitted
		wantMsg  string
	}{
		{"create in active namespace", podAttrs(admission.Create, "active", "p"), 0, ""},
		{"create in missing namespace", podAttrs(admission.Create, "x", "p"), 404, `namespaces "x" not found`},
		{"create in terminating namespace", podAttrs(admission.Create, "dying", "p"), 403,
			`pods "p" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{"generateName names the refusal", generated, 403,
			`pods "web-" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{"update in terminating namespace", podAttrs(admission.Update, "dying", "p"), 0, ""},
		{"delete in terminating namespace", podAttrs(admission.Delete, "dying", "p"), 0, ""},
		{"update in missing namespace", podAttrs(admission.Update, "x", "p"), 0, ""},
		{"delete in missing namespace", podAttrs(admission.Delete, "x", "p"), 0, ""},
		{"delete default", &admission.Attributes{Operation: admission.Delete, Resource: namespaceGVR, Kind: nsGVK, Name: "default"}, 403,
			`namespaces "default" is forbidden: this namespace may not be deleted`},
		{"delete kube-system", &admission.Attributes{Operation: admission.Delete, Resource: namespaceGVR, Kind: nsGVK, Name: "kube-system"}, 403,
			`namespaces "kube-system" is forbidden: this namespace may not be deleted`},
		{"delete kube-public", &admission.Attributes{Operation: admission.Delete, Resource: namespaceGVR, Kind: nsGVK, Name: "kube-public"}, 403,
			`namespaces "kube-public" is forbidden: this namespace may not be deleted`},
		{"delete kube-node-lease", &admission.Attributes{Operation: admission.Delete, Resource: namespaceGVR, Kind: nsGVK, Name: "kube-node-lease"}, 0, ""},
		{"delete ordinary namespace", &admission.Attributes{Operation: admission.Delete, Resource: namespaceGVR, Kind: nsGVK, Name: "dying"}, 0, ""},
		{"create namespace", &admission.Attributes{Operation: admission.Create, Resource: namespaceGVR, Kind: nsGVK, Name: "new",
			Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new"}}}, 0, ""},
		{"cluster-scoped object", &admission.Attributes{Operation: admission.Create, Resource: nodeGVR, Kind: nodeGVK, Name: "n1",
			Object: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, 0, ""},
		{"access review in missing namespace", &admission.Attributes{Operation: admission.Create, Resource: lsarGVR,
			Kind: schema.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "LocalSubjectAccessReview"}, Namespace: "x"}, 0, ""},
	}
	p := New(reader)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Admit(context.Background(), tt.attrs)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("Admit() = %v, want nil", err)
				}
				return
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("Admit() = %v (%T), want a StatusError", err, err)
			}
			if se.ErrStatus.Code != tt.wantCode || se.ErrStatus.Message != tt.wantMsg {
				t.Errorf("Admit() = %d %q, want %d %q", se.ErrStatus.Code, se.ErrStatus.Message, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestTerminatingCause(t *testing.T) {
	p := New(&fakeReader{namespaces: map[string]*corev1.Namespace{"dying": ns("dying", corev1.NamespaceTerminating)}})
	err := p.Admit(context.Background(), podAttrs(admission.Create, "dying", "p"))
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("Admit() = %v, want a StatusError", err)
	}
	want := &metav1.StatusDetails{
		Name: "p",
		Kind: "pods",
		Causes: []metav1.StatusCause{{
			Type:    "NamespaceTerminating",
			Message: "namespace dying is being terminated",
			Field:   "metadata.namespace",
		}},
	}
	if !reflect.DeepEqual(se.ErrStatus.Details, want) {
		t.Errorf("details = %+v, want %+v", se.ErrStatus.Details, want)
	}
	if se.ErrStatus.Reason != metav1.StatusReasonForbidden {
		t.Errorf("reason = %q, want Forbidden", se.ErrStatus.Reason)
	}
}

func TestReaderErrorIsInternal(t *testing.T) {
	p := New(&fakeReader{err: errors.New("etcd down")})
	err := p.Admit(context.Background(), podAttrs(admission.Create, "active", "p"))
	if !apierrors.IsInternalError(err) {
		t.Fatalf("Admit() = %v, want an internal error", err)
	}
	if got, want := err.Error(), "Internal error occurred: etcd down"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func TestHandler(t *testing.T) {
	p := New(nil)
	if p.Name() != "NamespaceLifecycle" {
		t.Errorf("Name() = %q", p.Name())
	}
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete} {
		if !p.Handles(op) {
			t.Errorf("Handles(%s) = false", op)
		}
	}
	if p.Handles("CONNECT") {
		t.Error("Handles(CONNECT) = true")
	}
}
