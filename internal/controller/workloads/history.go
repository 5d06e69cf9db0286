package workloads

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// revisionHashLabel is upstream's ControllerRevisionHashLabel ("controller-revision-hash").
const revisionHashLabel = appsv1.ControllerRevisionHashLabelKey

var controllerRevisionGVR = appsv1.SchemeGroupVersion.WithResource("controllerrevisions")

// templatePatch is upstream's getPatch of the StatefulSet and DaemonSet controllers: the
// pod template as a strategic merge patch that replaces it,
// {"spec":{"template":{...,"$patch":"replace"}}}, in canonical JSON (sorted keys).
func templatePatch(t *corev1.PodTemplateSpec) ([]byte, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var m map[string]interface{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["$patch"] = "replace"
	return json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": m}})
}

// sameData reports whether two revisions' data are the same JSON document.
func sameData(a, b []byte) bool {
	var va, vb interface{}
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

// templateOf returns the pod template a revision records.
func templateOf(cr *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var doc struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &doc); err != nil {
		return nil, fmt.Errorf("revision %s: %w", cr.Name, err)
	}
	return &doc.Spec.Template, nil
}

// hashRevision is upstream's HashControllerRevision: fnv32 of the data and the collision
// count, encoded with rand.SafeEncodeString.
func hashRevision(data []byte, probe *int32) string {
	h := fnv.New32()
	h.Write(data)
	if probe != nil {
		h.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return utilrand.SafeEncodeString(strconv.FormatInt(int64(h.Sum32()), 10))
}

// revisionName is upstream's ControllerRevisionName.
func revisionName(prefix, hash string) string {
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return prefix + "-" + hash
}

// ownedRevisions returns the ControllerRevisions of ns controlled by the owner's UID,
// oldest revision first (ties by name).
func ownedRevisions(ctx context.Context, store controller.Client, owner metav1.Object) ([]*appsv1.ControllerRevision, error) {
	all, _, err := store.ListObjects(ctx, store.Catalogue().Get(controllerRevisionGVR), owner.GetNamespace())
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for _, o := range all {
		cr, err := controller.As[*appsv1.ControllerRevision](o)
		if err != nil {
			return nil, err
		}
		if ref := metav1.GetControllerOf(cr); ref != nil && ref.UID == owner.GetUID() {
			out = append(out, cr)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Revision != out[j].Revision {
			return out[i].Revision < out[j].Revision
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// ensureRevision is the history half of upstream's getStatefulSetRevisions and
// constructHistory: it returns the revision recording template, creating it (revision
// max+1) or renumbering an equal older one to max+1, and the collision count, raised when
// a revision of the same name records other data.
func ensureRevision(ctx context.Context, store controller.Client, owner metav1.Object, kind schema.GroupVersionKind, t *corev1.PodTemplateSpec, revisions []*appsv1.ControllerRevision, collisionCount int32) (*appsv1.ControllerRevision, int32, error) {
	data, err := templatePatch(t)
	if err != nil {
		return nil, collisionCount, err
	}
	var next int64 = 1
	if n := len(revisions); n > 0 {
		next = revisions[n-1].Revision + 1
	}
	res := store.Catalogue().Get(controllerRevisionGVR)
	for i := len(revisions) - 1; i >= 0; i-- {
		cr := revisions[i]
		if !sameData(cr.Data.Raw, data) {
			continue
		}
		if i == len(revisions)-1 {
			return cr, collisionCount, nil
		}
		// An equal older revision becomes the newest (a rollback).
		out, err := store.Update(ctx, res, cr.Namespace, cr.Name, "", func(o runtime.Object) (runtime.Object, error) {
			c, err := controller.As[*appsv1.ControllerRevision](o)
			if err != nil {
				return nil, err
			}
			c.SetResourceVersion(cr.ResourceVersion)
			c.Revision = next
			return c, nil
		}, registry.WriteOptions{})
		if err != nil {
			return nil, collisionCount, err
		}
		c, err := controller.As[*appsv1.ControllerRevision](out.Object)
		return c, collisionCount, err
	}
	for attempt := 0; attempt < 5; attempt++ {
		cc := collisionCount
		hash := hashRevision(data, &cc)
		cr := &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{
				Name: revisionName(owner.GetName(), hash), Namespace: owner.GetNamespace(),
				Labels:          copyMap(t.Labels),
				OwnerReferences: []metav1.OwnerReference{*controllerRef(owner, kind)},
			},
			Data:     runtime.RawExtension{Raw: data},
			Revision: next,
		}
		if cr.Labels == nil {
			cr.Labels = map[string]string{}
		}
		cr.Labels[revisionHashLabel] = hash
		out, err := store.Create(ctx, res, owner.GetNamespace(), cr, registry.WriteOptions{})
		if err == nil {
			c, err := controller.As[*appsv1.ControllerRevision](out.Object)
			return c, collisionCount, err
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, collisionCount, err
		}
		// Another replica of this controller may have created it; otherwise a hash
		// collision: probe with the next collision count, as upstream.
		cur, gerr := store.Get(ctx, res, owner.GetNamespace(), cr.Name)
		if gerr != nil {
			return nil, collisionCount, gerr
		}
		existing, cerr := controller.As[*appsv1.ControllerRevision](cur)
		if cerr != nil {
			return nil, collisionCount, cerr
		}
		if ref := metav1.GetControllerOf(existing); ref != nil && ref.UID == owner.GetUID() && sameData(existing.Data.Raw, data) {
			return existing, collisionCount, nil
		}
		collisionCount++
	}
	return nil, collisionCount, fmt.Errorf("cannot name a controller revision of %s/%s: too many collisions", owner.GetNamespace(), owner.GetName())
}

// truncateHistory is upstream's truncateHistory: revisions neither live (named in live)
// nor among the newest limit non-live ones are deleted, oldest first.
func truncateHistory(ctx context.Context, store controller.Client, revisions []*appsv1.ControllerRevision, live map[string]bool, limit int32) error {
	var old []*appsv1.ControllerRevision
	for _, cr := range revisions {
		if !live[cr.Name] {
			old = append(old, cr)
		}
	}
	extra := len(old) - int(limit)
	res := store.Catalogue().Get(controllerRevisionGVR)
	for i := 0; i < extra; i++ {
		uid := old[i].UID
		_, err := store.Delete(ctx, res, old[i].Namespace, old[i].Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}
