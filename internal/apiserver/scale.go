package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/codec"
)

// scaleOf reads the Scale view of a workload (replicas and label selector).
func scaleOf(res *registry.Resource, obj runtime.Object) (*autoscalingv1.Scale, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	specPath, statusPath, selPath := []string{"spec", "replicas"}, []string{"status", "replicas"}, ""
	if v := res.CRDVersion(); v != nil && v.Subresources != nil && v.Subresources.Scale != nil {
		sc := v.Subresources.Scale
		specPath = strings.Split(strings.TrimPrefix(sc.SpecReplicasPath, "."), ".")
		statusPath = strings.Split(strings.TrimPrefix(sc.StatusReplicasPath, "."), ".")
		if sc.LabelSelectorPath != nil {
			selPath = *sc.LabelSelectorPath
		}
	}
	m := metaOf(obj)
	sc := &autoscalingv1.Scale{
		TypeMeta:   metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp},
	}
	if n, ok, _ := unstructured.NestedFieldNoCopy(u, specPath...); ok {
		sc.Spec.Replicas = int32(toInt(n))
	}
	if n, ok, _ := unstructured.NestedFieldNoCopy(u, statusPath...); ok {
		sc.Status.Replicas = int32(toInt(n))
	}
	if res.CRD == nil {
		if sel, ok, _ := unstructured.NestedMap(u, "spec", "selector"); ok {
			if res.GVR.Resource == "replicationcontrollers" {
				ls := &metav1.LabelSelector{MatchLabels: map[string]string{}}
				for k, v := range sel {
					ls.MatchLabels[k] = fmt.Sprint(v)
				}
				s, _ := metav1.LabelSelectorAsSelector(ls)
				sc.Status.Selector = s.String()
			} else {
				ls := &metav1.LabelSelector{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, ls); err == nil {
					if s, err := metav1.LabelSelectorAsSelector(ls); err == nil {
						sc.Status.Selector = s.String()
					}
				}
			}
		}
	} else if selPath != "" {
		if v, ok, _ := unstructured.NestedString(u, strings.Split(strings.TrimPrefix(selPath, "."), ".")...); ok {
			sc.Status.Selector = v
		}
	}
	return sc, nil
}

func toInt(v interface{}) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// setReplicas writes replicas into a workload object.
func setReplicas(res *registry.Resource, obj runtime.Object, replicas int32) (runtime.Object, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	path := []string{"spec", "replicas"}
	if v := res.CRDVersion(); v != nil && v.Subresources != nil && v.Subresources.Scale != nil {
		path = strings.Split(strings.TrimPrefix(v.Subresources.Scale.SpecReplicasPath, "."), ".")
	}
	if err := unstructured.SetNestedField(u, int64(replicas), path...); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := res.New()
	if uo, ok := out.(*unstructured.Unstructured); ok {
		uo.Object = u
		return uo, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	switch info.Verb {
	case "get":
		obj, err := s.cfg.Store.Get(r.Context(), res, info.Namespace, info.Name)
		if err != nil {
			writeError(w, err)
			return
		}
		sc, err := scaleOf(res, obj)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, sc)
	case "update", "patch":
		if info.Verb == "update" {
			if err := checkBodyType(r, true); err != nil {
				writeError(w, err)
				return
			}
		}
		pt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
		pt = strings.TrimSpace(pt)
		opts, fv, err := writeOptions(r, info.Verb, pt)
		if err != nil {
			writeError(w, err)
			return
		}
		body, err := readBody(r)
		if err != nil {
			writeError(w, err)
			return
		}
		// An update's Scale is decoded, and must name the object, before the object is read.
		var sent *autoscalingv1.Scale
		if info.Verb == "update" {
			d, err := decodeAs(r, scaleKind, body, fv, false)
			if err == nil {
				err = checkName(d.Object, info)
			}
			if err != nil {
				writeError(w, err)
				return
			}
			sent = d.Object.(*autoscalingv1.Scale)
		}
		result, err := s.cfg.Store.Update(r.Context(), res, info.Namespace, info.Name, "", func(cur runtime.Object) (runtime.Object, error) {
			sc, err := scaleOf(res, cur)
			if err != nil {
				return nil, err
			}
			var want autoscalingv1.Scale
			if info.Verb == "update" {
				want = *sent
				if err := uidPrecondition(res, info, sent, cur); err != nil {
					return nil, err
				}
				if want.ResourceVersion != "" && want.ResourceVersion != sc.ResourceVersion {
					return nil, apierrors.NewConflict(res.GroupResource(), info.Name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
				}
			} else {
				cur, _ := json.Marshal(sc)
				var patched []byte
				switch pt {
				case jsonPatchType, mergePatchType, strategicPatchType:
					patched, err = applyPatchJSON(r.Context(), pt, cur, body, &autoscalingv1.Scale{}, nil)
				default:
					return nil, unsupportedPatch(res)
				}
				if err != nil {
					return nil, err
				}
				kind := codec.JSONPatched
				if pt == strategicPatchType {
					kind = codec.StrategicPatched
				}
				d, err := codec.DecodePatched(scaleKind, patched, fv, kind)
				if err != nil {
					return nil, err
				}
				want = *d.Object.(*autoscalingv1.Scale)
			}
			if want.Spec.Replicas < 0 {
				return nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, info.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0")})
			}
			return setReplicas(res, cur, want.Spec.Replicas)
		}, opts)
		if err != nil {
			writeError(w, err)
			return
		}
		sc, err := scaleOf(res, result.Object)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, sc)
	default:
		writeError(w, methodNotAllowed())
	}
}

// scaleKind is autoscaling/v1 Scale, the kind of every scale subresource's body.
var scaleKind = codec.BuiltinKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"), &autoscalingv1.Scale{})
