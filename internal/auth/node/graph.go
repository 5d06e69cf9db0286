package node

import (
	"encoding/binary"
	"slices"
	"sync"
	"unique"

	corev1 "k8s.io/api/core/v1"
)

// Graph records which objects each node may reach, as upstream's node authorizer graph
// does, in indexes that answer each question in constant time:
//
//	node ← pod                         (a pod bound to the node)
//	node ← pod ← secret, configmap, pvc, resourceclaim, serviceaccount
//	node ← pod ← pvc ← pv ← secret     (a bound PV and the Secrets its kubelet reads)
//	node ← volumeattachment, resourceslice, podcertificaterequest
//
// It is a pure data structure: its feeder calls the Set and Delete methods with every
// change, in any order a watch and a replica's own commits deliver them; each Set replaces
// what the object related before. It is safe for concurrent use.
type Graph struct {
	mu sync.RWMutex
	// pods are the bound pods: where each is bound and what it references.
	pods map[nsName]podEntry
	// reach counts, for each referenced object, the pods of each node referencing it.
	reach map[ref]map[string]int
	// pvs are the PersistentVolumes with a claimRef: the claim, and the Secrets they
	// expose to the kubelet.
	pvs map[string]pvEntry
	// pvSecret holds, for each Secret, the PVs exposing it.
	pvSecret map[ref]map[string]bool
	// direct holds the node of each object bound to one directly (VolumeAttachments,
	// ResourceSlices, PodCertificateRequests).
	direct map[ref]string
	// refSets holds each distinct list of references the pods make once, by its key
	// (refsKey), with how many pods make it: the pods of a namespace mostly reference the
	// same ServiceAccount and ConfigMaps, and a list per pod would cost 40 bytes a
	// reference for every pod held.
	refSets map[string]*refSet
	// scratch is where refsKey writes (under mu).
	scratch []byte
}

// refSet is a list of references shared by the pods that make it, its key in refSets,
// and the number of those pods.
type refSet struct {
	refs []ref
	key  string
	pods int
}

type nsName struct{ namespace, name string }

type podEntry struct {
	node string
	refs *refSet // nil: none
}

type pvEntry struct {
	claim   nsName
	secrets []ref
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{pods: map[nsName]podEntry{}, reach: map[ref]map[string]int{}, pvs: map[string]pvEntry{},
		pvSecret: map[ref]map[string]bool{}, direct: map[ref]string{}, refSets: map[string]*refSet{}}
}

// SetPod records a pod as it is now: bound to spec.nodeName with what it references, or
// nothing when it is not bound.
func (g *Graph) SetPod(pod *corev1.Pod) {
	// The namespace and node are interned, not held once per pod.
	key := nsName{intern(pod.Namespace), pod.Name}
	var refs []ref
	if pod.Spec.NodeName != "" {
		refs = podRefs(pod)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePodLocked(key)
	if pod.Spec.NodeName == "" {
		return
	}
	g.pods[key] = podEntry{node: intern(pod.Spec.NodeName), refs: g.shareRefs(refs)}
	for _, r := range refs {
		m := g.reach[r]
		if m == nil {
			m = map[string]int{}
			g.reach[r] = m
		}
		m[pod.Spec.NodeName]++
	}
}

// DeletePod forgets a pod.
func (g *Graph) DeletePod(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePodLocked(nsName{namespace, name})
}

func (g *Graph) deletePodLocked(key nsName) {
	old, ok := g.pods[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	if old.refs == nil {
		return
	}
	for _, r := range old.refs.refs {
		m := g.reach[r]
		if m[old.node]--; m[old.node] <= 0 {
			delete(m, old.node)
		}
		if len(m) == 0 {
			delete(g.reach, r)
		}
	}
	if old.refs.pods--; old.refs.pods == 0 {
		delete(g.refSets, old.refs.key)
	}
}

// intern returns the process's shared copy of s (unique.Make; as the controllers' views do).
func intern(s string) string { return unique.Make(s).Value() }

// shareRefs returns the shared set of refs, counting one more pod making it (nil for
// none). Called with mu held.
func (g *Graph) shareRefs(refs []ref) *refSet {
	if len(refs) == 0 {
		return nil
	}
	k := g.refsKey(refs)
	set := g.refSets[string(k)]
	if set == nil {
		set = &refSet{refs: slices.Clip(refs), key: string(k)}
		g.refSets[set.key] = set
	}
	set.pods++
	return set
}

// refsKey writes into g.scratch what tells a list of references from any other: each
// reference's kind, then its namespace and name, each length-prefixed. Called with mu
// held.
func (g *Graph) refsKey(refs []ref) []byte {
	k := g.scratch[:0]
	for _, r := range refs {
		k = append(k, byte(r.kind))
		k = binary.AppendUvarint(k, uint64(len(r.namespace)))
		k = append(k, r.namespace...)
		k = binary.AppendUvarint(k, uint64(len(r.name)))
		k = append(k, r.name...)
	}
	g.scratch = k
	return k
}

// SetPV records a PersistentVolume as it is now: related to its claim when it has a
// claimRef, with the Secrets it exposes to the kubelet.
func (g *Graph) SetPV(pv *corev1.PersistentVolume) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePVLocked(pv.Name)
	if pv.Spec.ClaimRef == nil {
		return
	}
	e := pvEntry{claim: nsName{pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name}, secrets: pvSecrets(pv)}
	g.pvs[pv.Name] = e
	for _, s := range e.secrets {
		m := g.pvSecret[s]
		if m == nil {
			m = map[string]bool{}
			g.pvSecret[s] = m
		}
		m[pv.Name] = true
	}
}

// DeletePV forgets a PersistentVolume.
func (g *Graph) DeletePV(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePVLocked(name)
}

func (g *Graph) deletePVLocked(name string) {
	old, ok := g.pvs[name]
	if !ok {
		return
	}
	delete(g.pvs, name)
	for _, s := range old.secrets {
		delete(g.pvSecret[s], name)
		if len(g.pvSecret[s]) == 0 {
			delete(g.pvSecret, s)
		}
	}
}

// SetVolumeAttachment records the node a VolumeAttachment attaches to ("" for none).
func (g *Graph) SetVolumeAttachment(name, node string) {
	g.setDirect(kindVolumeAttachment, "", name, node)
}

// SetResourceSlice records the node a ResourceSlice belongs to ("" for none).
func (g *Graph) SetResourceSlice(name, node string) { g.setDirect(kindResourceSlice, "", name, node) }

// SetPodCertificateRequest records the node a PodCertificateRequest was made for.
func (g *Graph) SetPodCertificateRequest(namespace, name, node string) {
	g.setDirect(kindPodCertificateRequest, namespace, name, node)
}

// DeleteVolumeAttachment forgets a VolumeAttachment.
func (g *Graph) DeleteVolumeAttachment(name string) { g.setDirect(kindVolumeAttachment, "", name, "") }

// DeleteResourceSlice forgets a ResourceSlice.
func (g *Graph) DeleteResourceSlice(name string) { g.setDirect(kindResourceSlice, "", name, "") }

// DeletePodCertificateRequest forgets a PodCertificateRequest.
func (g *Graph) DeletePodCertificateRequest(namespace, name string) {
	g.setDirect(kindPodCertificateRequest, namespace, name, "")
}

func (g *Graph) setDirect(k kind, namespace, name, node string) {
	r := ref{kind: k, namespace: namespace, name: name}
	g.mu.Lock()
	defer g.mu.Unlock()
	if node == "" {
		delete(g.direct, r)
		return
	}
	g.direct[r] = node
}

// Reaches reports whether node may reach the object r names through the graph.
func (g *Graph) reaches(node string, r ref) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	switch r.kind {
	case kindPod:
		e, ok := g.pods[nsName{r.namespace, r.name}]
		return ok && e.node == node
	case kindVolumeAttachment, kindResourceSlice, kindPodCertificateRequest:
		return g.direct[r] == node
	case kindPV:
		e, ok := g.pvs[r.name]
		return ok && g.reach[ref{kind: kindPVC, namespace: e.claim.namespace, name: e.claim.name}][node] > 0
	case kindSecret:
		if g.reach[r][node] > 0 {
			return true
		}
		for pv := range g.pvSecret[r] {
			if c := g.pvs[pv].claim; g.reach[ref{kind: kindPVC, namespace: c.namespace, name: c.name}][node] > 0 {
				return true
			}
		}
		return false
	default:
		return g.reach[r][node] > 0
	}
}
