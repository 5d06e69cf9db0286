// Package convert converts objects between the versions of a kind that upstream serves
// from one storage: events.k8s.io/v1 Events are stored as core/v1 Events, autoscaling/v1
// HorizontalPodAutoscalers as autoscaling/v2 ones. The registry (Resource.Storage),
// validation and Table printing use it. InternalJSON writes a v1 object as upstream writes
// its internal version (in the messages that print one).
//
// Invariants:
//   - Conversions are pure: they never change their argument, and the result shares no
//     maps, slices or pointers with it.
//   - A round trip through the other version keeps every field the other version can
//     express; autoscaling/v1 carries the v2 fields it lacks in annotations, as upstream.
package convert
